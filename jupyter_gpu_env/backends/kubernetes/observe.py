"""What the Kubernetes backend's jobs are doing: one poll's reading of Jobs, pods, Kueue Workloads and
the runner's files. Held by :class:`~.backend.KubernetesBackend`, which makes, cancels and deletes Jobs.

What a job's state is, in order of authority:

1. ``status.json`` in the job folder (the runner's own word) when the folder is shared;
2. the Job's conditions (Complete, Failed with DeadlineExceeded or the pod's failure);
3. for a job not running yet, why: Kueue's Workload conditions (QuotaReserved, Admitted, Evicted)
   when the Job is queued through Kueue, else the pod's (Unschedulable, image pull, ...); and, for one
   that Kueue holds, its place in its LocalQueue and ClusterQueue (the visibility API).

An opportunistic job stopped for other work is observed ``queued`` with ``requeued`` (the tracker then
records the attempt): Kueue evicted its Workload (Evicted true, the Job suspended, its pod deleted), or
its pod ended by a preemption (DisruptionTarget, or the runner's exit code 3) while the Job lives on
and its podFailurePolicy makes a new pod. It is running again once a new pod runs.

A sweep's runs are read from the same one listing of Jobs: their Indexed Job (:mod:`.indexed`), their
folders and the Job's ``failedIndexes``; a schedule's runs (each a Job its CronJob made, see
:mod:`.schedules.cronjob`) are found there by the Job name each run recorded.

Every method here blocks: the backend runs them through its API's worker thread.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from kubernetes import client

from ...contracts import jobfiles
from ...errors import GpuEnvError
from ...models.jobs import Job
from ..base import UNSUBMITTED_LOST, Observation
from . import objects, status
from .api import pods
from .api.client import ApiError
from .api.kueue import KueueReader
from .api.namespace import Namespace
from .schedules.cronjob import SCHEDULE_LABEL
from .sweeps import indexed


class KubernetesObserver:
    """Reads the state of this user's Jobs in ``ns``; ``cancelled`` names the jobs this server stopped
    (the backend adds to it), ``status_grace`` how long a runner's status may take to arrive."""

    def __init__(self, ns: Namespace, kueue: KueueReader, cancelled: set[str], status_grace: float) -> None:
        self.ns = ns
        self.kueue = kueue
        self.cancelled = cancelled
        self.status_grace = status_grace
        self._ended_seen: dict[str, float] = {}  # a sweep's run whose pod ended without a status: since when

    def observe(self, jobs: Sequence[Job], folder_of: Callable[[Job], Path]) -> dict[str, Observation]:
        """Every job's observation (``folder_of``: where its folder is) from one listing of Jobs,
        and the pods' and Kueue's only where a job waits, ended without a status, or is first seen
        running (its pod's IP is where it runs: ``Observation.host``)."""
        api_client = self.ns.connected()
        ns = self.ns.name
        selector = objects.selector_for_user(self.ns.settings)
        runs = [j for j in jobs if j.group_id is not None]
        jobs = [j for j in jobs if j.group_id is None]
        wanted = {objects.label_value(j.id): j for j in jobs}
        k8s_jobs: dict[str, dict[str, Any]] = {}
        listed = self.ns.api.items(
            "list Jobs", client.BatchV1Api(api_client).list_namespaced_job, ns, label_selector=selector
        )
        if runs:  # a sweep's runs, from the same one listing
            by_name = {(f.get("metadata") or {}).get("name"): f for f in listed}
            seen_runs = self._observe_runs(runs, by_name, folder_of)
        else:
            seen_runs = {}
        for found in listed:
            labels = status.labels_of(found)
            jid = labels.get(objects.JOB_ID_LABEL)
            if labels.get(objects.MANAGED_BY_KEY) == objects.MANAGED_BY and jid in wanted:
                k8s_jobs[wanted[jid].id] = found
        k8s_jobs.update(self._scheduled(jobs, listed))

        now = time.time()
        out: dict[str, Observation] = {}
        pending: list[Job] = []  # not running: ask the pods (and Kueue) why
        ended: list[Job] = []  # ended without the runner's status: ask the pods how
        doubtful: list[Job] = []  # opportunistic, no pod ready: its pod may have been stopped for other work
        placing: list[Job] = []  # seen running for the first time (or where is not known): its pod says where
        for job in jobs:
            folder = folder_of(job)
            written = jobfiles.read_status(folder)
            item = k8s_jobs.get(job.id)
            if written is not None:
                out[job.id] = self._from_status(job, written, item)
            elif item is None:
                if (lost := self._vanished(job)) is not None:
                    out[job.id] = lost
            elif (obs := status.job_observation(item)) is not None:  # Complete or Failed
                started = (folder / jobfiles.HEARTBEAT).exists()
                # A Job that completed has a runner with something to say, as has one that started:
                # its status.json may be on its way through the shared filesystem.
                if (started or obs.state == "succeeded") and now - (
                    obs.finished_at or now
                ) < self.status_grace:
                    continue
                ended.append(job)
                out[job.id] = status.without_runner(obs, started)
            elif self._running(item, folder):
                st = item.get("status") or {}
                if job.priority == "opportunistic" and not st.get("ready"):
                    doubtful.append(job)
                elif job.state != "running" or job.node is None:
                    placing.append(job)
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

        if pending or ended or doubtful or placing:
            asked = {j.id for j in (*pending, *ended, *doubtful, *placing)}
            by_job = pods.by_job(self.ns.api, api_client, ns, selector, asked)
            for job in ended:
                out[job.id] = status.explain_end(out[job.id], k8s_jobs[job.id], by_job.get(job.id, []))
            for job in doubtful:
                out[job.id] = status.replacement_observation(out[job.id], by_job.get(job.id, []))
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
            for job in (*pending, *doubtful, *placing):
                if out[job.id].state == "running" and (ip := status.pod_ip(by_job.get(job.id, []))):
                    out[job.id] = replace(out[job.id], host=ip)
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
            places = self.kueue.pending_positions(ns, queue)
            for job in jobs:
                workload = workloads.get(status.uid_or_name(k8s_jobs[job.id])) or {}
                place = places.found.get(str((workload.get("metadata") or {}).get("name")))
                if place is None and places.unknown and status.waits_for_quota(workload):
                    obs = out[job.id]
                    said = (obs.pending_reason or "Queued in Kueue.").rstrip(".")
                    out[job.id] = replace(obs, pending_reason=f"{said}; {places.unknown}.")
                elif place is not None:
                    obs = out[job.id]
                    out[job.id] = replace(
                        obs,
                        queue_position=place[0],
                        queue_name=queue,
                        pending_reason=f"{obs.pending_reason or 'Queued in Kueue.'} "
                        f"(number {place[1]} in its ClusterQueue)",
                    )

    @staticmethod
    def _scheduled(jobs: Sequence[Job], listed: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """Runs a schedule's CronJob started, by the Job name the tick recorded as ``backend_job_id``
        (their Jobs carry the schedule's label, not a run's id: one template makes them all)."""
        by_name = {(f.get("metadata") or {}).get("name"): f for f in listed}
        out = {}
        for job in jobs:
            found = by_name.get(job.backend_job_id) if job.schedule_id and job.backend_job_id else None
            if found is not None and status.labels_of(found).get(SCHEDULE_LABEL) == objects.label_value(
                job.schedule_id or ""
            ):
                out[job.id] = found
        return out

    @staticmethod
    def _running(item: dict[str, Any], folder: Path) -> bool:
        spec, st = item.get("spec") or {}, item.get("status") or {}
        if spec.get("suspend"):
            return False
        return (st.get("ready") or 0) > 0 or (
            (st.get("active") or 0) > 0 and (folder / jobfiles.HEARTBEAT).exists()
        )

    def _vanished(self, job: Job) -> Observation | None:
        """A job whose Job is not listed: cancelled, still being created (None: the record stands), or lost."""
        if job.id in self.cancelled:
            return Observation(state="cancelled", reason="cancelled", message="Cancelled by the user.")
        if job.backend_job_id is None:
            # The record is saved before its Job is created: a poll between the two sees no Job yet.
            if time.time() - job.created_at < UNSUBMITTED_LOST:
                return None
            return Observation(
                state="failed",
                reason="lost",
                message="The server stopped before Kubernetes accepted the job; it never ran.",
            )
        return Observation(
            state="failed",
            reason="lost",
            message=f"The Kubernetes Job {job.backend_job_id or objects.job_name(job)} no longer exists and the runner left "
            "no status (deleted from outside, or removed after it finished while the server was away).",
        )

    def _from_status(self, job: Job, written: dict[str, Any], item: dict[str, Any] | None) -> Observation:
        obs = Observation.from_status(written)
        suspended = item is not None and bool((item.get("spec") or {}).get("suspend"))
        if obs.state == "cancelled" and job.id not in self.cancelled:
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
                    self.ns.delete_job(name, "delete the finished Job")
        return obs

    @staticmethod
    def _index_ended(item: dict[str, Any], index: int) -> Observation | None:
        """How the pod of ``index`` ended by the Indexed Job's word: ``succeeded`` once the index is
        among its completedIndexes, the Job's own end once the Job ended without running it."""
        if index in indexed.index_set((item.get("status") or {}).get("completedIndexes")):
            return Observation(state="succeeded", message="", exit_code=0)
        ended = status.job_observation(item)
        if ended is not None and ended.state == "succeeded":
            return replace(
                ended,
                state="failed",
                reason="lost",
                message=f"The Kubernetes Job completed without running index {index}.",
            )
        return ended

    def _observe_runs(
        self, runs: Sequence[Job], k8s_jobs: dict[Any, dict[str, Any]], folder_of: Callable[[Job], Path]
    ) -> dict[str, Observation]:
        """Runs of sweeps, from their folders and their Indexed Job (``k8s_jobs`` by name)."""
        out: dict[str, Observation] = {}
        for gone in set(self._ended_seen) - {j.id for j in runs}:
            del self._ended_seen[gone]
        for job in runs:
            where = indexed.position(job)
            folder = folder_of(job)
            written = jobfiles.read_status(folder)
            item = k8s_jobs.get(where[0]) if where else None
            if written is not None:
                out[job.id] = self._from_status(job, written, item)
            elif item is None:
                if (lost := self._vanished(job)) is not None:
                    out[job.id] = lost
            elif where and where[1] in indexed.index_set((item.get("status") or {}).get("failedIndexes")):
                out[job.id] = Observation(
                    state="failed",
                    reason="pod_failed",
                    message=f"The pod of index {where[1]} of {where[0]} failed before the runner wrote its status; "
                    "see the job's log.",
                )
            elif where and (ended := self._index_ended(item, where[1])) is not None:
                # Its pod is done (or the whole Job is) and the runner has said nothing: once the status
                # has had time to cross the shared filesystem, the run ended without it.
                first = self._ended_seen.setdefault(job.id, time.time())
                if time.time() - first < self.status_grace:
                    continue
                started = (folder / jobfiles.HEARTBEAT).exists()
                out[job.id] = status.without_runner(
                    ended, started, what=f"The pod of index {where[1]} of {where[0]}"
                )
            elif (folder / jobfiles.HEARTBEAT).exists():
                out[job.id] = Observation(state="running", backend_job_id=job.backend_job_id)
            else:
                suspended = bool((item.get("spec") or {}).get("suspend"))
                out[job.id] = Observation(
                    state="queued",
                    backend_job_id=job.backend_job_id,
                    pending_reason=(
                        "Waiting for Kueue to admit the sweep."
                        if suspended and status.kueue_managed(item)
                        else f"Waiting for its pod (index {where[1] if where else '?'} of {where[0] if where else '?'})."
                    ),
                )
        return out
