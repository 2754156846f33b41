"""What the Kubernetes backend's jobs are doing: one poll's reading of Jobs, pods, Kueue Workloads and
the runner's files. A mixin of :class:`~.backend.KubernetesBackend`, which makes, cancels and deletes Jobs.

What a job's state is, in order of authority:

1. ``status.json`` in the job folder (the runner's own word) when the folder is shared;
2. the Job's conditions (Complete, Failed with DeadlineExceeded or the pod's failure);
3. for a job not running yet, why: Kueue's Workload conditions (QuotaReserved, Admitted, Evicted)
   when the Job is queued through Kueue, else the pod's (Unschedulable, image pull, ...); and, for one
   that Kueue holds, its place in its LocalQueue and ClusterQueue (the visibility API).

Every method here blocks: the backend runs them through its API's worker thread.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from kubernetes import client

from ...errors import GpuEnvError
from ...kube.client import ApiError, KubeApi
from ...models.jobs import Job
from .. import jobfiles
from ..backend import Observation
from . import objects, pods, status
from .kueue import KueueReader
from .options import KubernetesOptions
from .sweeps import IndexedJobs


class KubernetesObserver(KubernetesOptions):
    """Reads the state of this user's Jobs; the backend sets the attributes declared here."""

    settings: objects.K8sSettings
    api: KubeApi
    indexed: IndexedJobs
    kueue: KueueReader
    _cancelled: set[str]

    def _connected(self) -> Any:
        """The ApiClient; the first call settles the namespace when the options named none."""
        api_client = self.api.client()
        if not self.settings.namespace:
            self.settings = replace(self.settings, namespace=self.api.namespace or "default")
        return api_client

    def _delete_job(self, name: str, what: str) -> None:
        self.api.raw(
            client.BatchV1Api(self._connected()).delete_namespaced_job,
            name,
            self.settings.namespace,
            propagation_policy="Background",
            what=what,
        )

    def _observe_all(self, jobs: Sequence[Job]) -> dict[str, Observation]:
        api_client = self._connected()
        ns = self.settings.namespace
        selector = objects.selector_for_user(self.settings)
        runs = [j for j in jobs if j.group_id is not None]
        jobs = [j for j in jobs if j.group_id is None]
        wanted = {objects.label_value(j.id): j for j in jobs}
        k8s_jobs: dict[str, dict[str, Any]] = {}
        listed = self.api.items(
            "list Jobs", client.BatchV1Api(api_client).list_namespaced_job, ns, label_selector=selector
        )
        if runs:  # a sweep's runs, from the same one listing
            by_name = {(f.get("metadata") or {}).get("name"): f for f in listed}
            seen_runs = self.indexed.observe(runs, by_name)
        else:
            seen_runs = {}
        for found in listed:
            labels = status.labels_of(found)
            jid = labels.get(objects.JOB_ID_LABEL)
            if labels.get(objects.MANAGED_BY_KEY) == objects.MANAGED_BY and jid in wanted:
                k8s_jobs[wanted[jid].id] = found

        now = time.time()
        out: dict[str, Observation] = {}
        pending: list[Job] = []  # not running: ask the pods (and Kueue) why
        ended: list[Job] = []  # ended without the runner's status: ask the pods how
        for job in jobs:
            folder = self.job_folder(job)
            written = jobfiles.read_status(folder)
            item = k8s_jobs.get(job.id)
            if written is not None:
                out[job.id] = self._from_status(job, written, item)
            elif item is None:
                out[job.id] = self._vanished(job)
            elif (obs := status.job_observation(item)) is not None:  # Complete or Failed
                started = (folder / jobfiles.HEARTBEAT).exists()
                if started and now - (obs.finished_at or now) < self.status_grace:
                    continue  # the runner's status.json is on its way through the shared filesystem
                ended.append(job)
                out[job.id] = obs
            elif self._running(item, folder):
                st = item.get("status") or {}
                out[job.id] = Observation(
                    state="running",
                    backend_job_id=(item.get("metadata") or {}).get("name"),
                    started_at=status.timestamp(st.get("startTime")),
                )
            else:
                pending.append(job)
                out[job.id] = Observation(
                    state="queued", backend_job_id=(item.get("metadata") or {}).get("name")
                )

        if pending or ended:
            by_job = pods.by_job(self.api, api_client, ns, selector, {j.id for j in (*pending, *ended)})
            for job in ended:
                out[job.id] = status.explain_end(out[job.id], k8s_jobs[job.id], by_job.get(job.id, []))
            queued_in_kueue = [k8s_jobs[j.id] for j in pending if status.kueue_managed(k8s_jobs[j.id])]
            workloads = self.kueue.workloads(ns, queued_in_kueue) if queued_in_kueue else None
            for job in pending:
                item = k8s_jobs[job.id]
                out[job.id] = status.pending_observation(
                    out[job.id],
                    item,
                    by_job.get(job.id, []),
                    workloads.get(status.uid_or_name(item)) if workloads is not None else None,
                    kueue=workloads is not None,
                )
            if workloads:
                self._place_in_queues(ns, pending, k8s_jobs, workloads, out)
        return out | seen_runs

    def _place_in_queues(
        self,
        ns: str,
        pending: Sequence[Job],
        k8s_jobs: dict[str, dict[str, Any]],
        workloads: dict[str, dict[str, Any]],
        out: dict[str, Observation],
    ) -> None:
        """Where Kueue holds each waiting Job: one visibility call per LocalQueue that holds one."""
        by_queue: dict[str, list[Job]] = {}
        for job in pending:
            queue = status.labels_of(k8s_jobs[job.id]).get(objects.QUEUE_LABEL)
            if queue and out[job.id].state == "queued":
                by_queue.setdefault(queue, []).append(job)
        for queue, jobs in by_queue.items():
            places = self.kueue.pending_positions(ns, queue) or {}
            for job in jobs:
                workload = workloads.get(status.uid_or_name(k8s_jobs[job.id])) or {}
                place = places.get(str((workload.get("metadata") or {}).get("name")))
                if place is not None:
                    obs = out[job.id]
                    out[job.id] = replace(
                        obs,
                        queue_position=place[0],
                        queue_name=queue,
                        pending_reason=f"{obs.pending_reason or 'Queued in Kueue.'} "
                        f"(number {place[1]} in its ClusterQueue)",
                    )

    @staticmethod
    def _running(item: dict[str, Any], folder: Path) -> bool:
        spec, st = item.get("spec") or {}, item.get("status") or {}
        if spec.get("suspend"):
            return False
        return (st.get("ready") or 0) > 0 or (
            (st.get("active") or 0) > 0 and (folder / jobfiles.HEARTBEAT).exists()
        )

    def _vanished(self, job: Job) -> Observation:
        if job.id in self._cancelled:
            return Observation(state="cancelled", reason="cancelled", message="Cancelled by the user.")
        return Observation(
            state="failed",
            reason="lost",
            message=f"The Kubernetes Job {objects.job_name(job)} no longer exists and the runner left "
            "no status (deleted from outside, or removed after it finished while the server was away).",
        )

    def _from_status(self, job: Job, written: dict[str, Any], item: dict[str, Any] | None) -> Observation:
        obs = Observation.from_status(written)
        suspended = item is not None and bool((item.get("spec") or {}).get("suspend"))
        if obs.state == "cancelled" and job.id not in self._cancelled:
            # The runner saw SIGTERM, but not from us: the pod was stopped from outside.
            obs = replace(
                obs,
                state="failed",
                reason="stopped",
                message="The pod was stopped from outside (deleted, preempted, evicted, or its node drained)"
                + (" and Kueue suspended the Job" if suspended else "")
                + ".",
            )
        if item is not None and suspended:
            # Evicted by Kueue after the runner ended: Kueue would run the notebook again. It ran.
            name = (item.get("metadata") or {}).get("name")
            if name:
                with contextlib.suppress(GpuEnvError, ApiError):
                    self._delete_job(name, "delete the finished Job")
        return obs
