"""The Kubernetes backend: each batch job is a batch/v1 Job running the runner on the job folder.

The Job comes from :func:`.objects.job_object`; its options are :class:`.options.KubernetesOptions`;
this module talks to the API server through :class:`.client.KubeApi`, whose calls run in a worker thread
so the event loop never waits on the network. One poll makes at most three list calls, whatever the
number of jobs: the user's Jobs (always), their pods (only when a job is pending or ended without a
status) and Kueue Workloads (only when a job waits in Kueue). Labels are filtered here as well as on the
server.

What a job's state is, in order of authority:

1. ``status.json`` in the job folder (the runner's own word) when the folder is shared;
2. the Job's conditions (Complete, Failed with DeadlineExceeded or the pod's failure);
3. for a job not running yet, why: Kueue's Workload conditions (QuotaReserved, Admitted, Evicted)
   when the Job is queued through Kueue, else the pod's (Unschedulable, image pull, ...).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from kubernetes import client

from ...errors import Conflict, GpuEnvError, InvalidRequest
from ...gpu.cluster import KubernetesCapacity
from ...models.backends import BackendInfo, ResourceLimits
from ...models.cluster import ClusterCapacity
from ...models.jobs import TERMINAL_STATES, Job, JobRequest, LogChunk
from ...models.resources import parse_memory
from ...tasks import cancel_and_wait
from .. import jobfiles
from ..backend import GroupSubmission, Observation, check_against_info
from . import objects, pods, status
from .client import ApiError, KubeApi
from .kueue import KueueReader
from .options import KubernetesOptions
from .sweeps import IndexedJobs

log = logging.getLogger(__name__)


class KubernetesBackend(KubernetesOptions):
    """Runs each job as a Kubernetes Job (batch/v1), optionally queued through a Kueue LocalQueue.

    Needs the `kubernetes` extra (`pip install jupyter-gpu-env[kubernetes]`), RBAC for the server's
    service account, and the job folder on a volume the job pods mount at the same path
    (docs/admin-kubernetes.md). Lists of volumes, mounts and tolerations are Kubernetes JSON (camelCase).
    """

    # ``settings`` replaces the Job builder's settings made from the options, and ``api_client`` the
    # loading of a kubeconfig (both for embedding and tests).

    def __init__(
        self,
        name: str | None = None,
        *,
        settings: objects.K8sSettings | None = None,
        api_client: Callable[[], Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(name, **kwargs)
        self.settings = replace(settings or self.job_settings(), backend_name=self.name)
        self.api = KubeApi(
            self.kubeconfig, self.context, request_timeout=self.request_timeout, factory=api_client
        )
        self.indexed = IndexedJobs(self)
        self._capacity = KubernetesCapacity(self.capacity_ttl, self.api)
        self.kueue = KueueReader(self.api)
        self._cluster = status.ClusterView()
        self._cluster_task: asyncio.Task[None] | None = None
        self._cancelled: set[str] = set()

    # ----- what it offers -----

    def offered_queues(self) -> list[str]:
        local = [self.settings.local_queue] if self.settings.local_queue else []
        return list(dict.fromkeys([*local, *self.queues]))

    def info(self) -> BackendInfo:
        self._refresh_cluster_soon()
        view = self._cluster
        queues = self.offered_queues()
        profiles = list(self.mig_profiles or view.profiles or ())
        notes = [
            f"Runs each job as a Kubernetes Job in namespace '{self.settings.namespace or '(from the cluster)'}'"
            + (f", image {self.settings.image}." if self.settings.image else "."),
            "CPUs, memory, GPUs and the time limit are enforced by Kubernetes (requests equal limits).",
        ]
        if queues:
            notes.append(f"Queues are Kueue LocalQueues; the default is '{queues[0]}'.")
        if view.error and not self.mig_profiles:
            notes.append(
                f"The cluster's nodes could not be read ({view.error}); MIG profiles are not checked."
            )
        max_gpus = self.max_gpus if self.max_gpus >= 0 else view.max_gpus_per_node
        any_gpu = view.any_gpu if view.any_gpu is not None else True
        return BackendInfo(
            name=self.name,
            kind=self.kind,
            queues=queues,
            default_queue=queues[0] if self.settings.local_queue else None,
            limits=ResourceLimits(
                max_cpus=self.max_cpus or None,
                max_memory_bytes=parse_memory(self.max_memory) if self.max_memory else None,
                max_gpus=max_gpus,
                max_time_limit_seconds=self.max_time_limit or None,
            ),
            mig_profiles=profiles,
            supports_images=self.apptainer_in_image,
            supports_gpus=bool(any_gpu or profiles or self.max_gpus > 0),
            enforced=["cpus", "memory", "gpus", "mig_profile", "time_limit"],
            notes=notes,
        )

    def validate(self, request: JobRequest) -> None:
        info = self.info()
        if request.resources.mig_profile and not self._profiles_known():
            # Not read yet (or not readable): submit() reads the nodes before it decides.
            info = info.model_copy(update={"mig_profiles": [request.resources.mig_profile]})
        check_against_info(info, request)

    def _profiles_known(self) -> bool:
        return bool(self.mig_profiles) or self._cluster.profiles is not None

    # ----- contract -----

    async def submit(self, job: Job) -> Observation:
        res = job.resources
        if res.mig_profile and not self.mig_profiles:
            if self._cluster.profiles is None:
                await self.refresh_cluster()
            offered = self._cluster.profiles
            if offered is not None and res.mig_profile not in offered:
                raise InvalidRequest(
                    f"MIG profile '{res.mig_profile}' is not offered by any node of the cluster "
                    f"(profiles: {', '.join(offered) or 'none'}).",
                    reason="resources_unavailable",
                )
        folder = self.job_folder(job)
        if self.check_job_folder_mounted:
            self._check_folder_shared(folder)
        name = objects.job_name(job)

        def create() -> dict[str, Any]:
            batch = client.BatchV1Api(self._connected())
            body = objects.job_object(job, folder, self.settings)
            try:
                return self.api.raw(
                    batch.create_namespaced_job, self.settings.namespace, body, what="create the Job"
                )
            except ApiError as e:
                if e.status != 409:
                    raise
            # Taken: ours from an earlier try of this very submission, or someone else's.
            existing = self.api.raw(
                batch.read_namespaced_job, name, self.settings.namespace, what="read the existing Job"
            )
            if status.labels_of(existing).get(objects.JOB_ID_LABEL) != objects.label_value(job.id):
                raise Conflict(
                    f"A Kubernetes Job named '{name}' already exists in namespace "
                    f"'{self.settings.namespace}' and is not this job's.",
                    reason="kubernetes_conflict",
                )
            return existing

        created = await self.api.run(create, "submit the job")
        queue = job.queue or self.settings.local_queue
        where = f"Kueue queue '{queue}'" if queue else f"namespace '{self.settings.namespace}'"
        return Observation(
            state="queued",
            backend_job_id=(created.get("metadata") or {}).get("name") or name,
            pending_reason=f"Submitted to Kubernetes ({where}); waiting for its pod.",
        )

    async def poll(self, jobs: Sequence[Job]) -> dict[str, Observation]:
        seen = await self.api.run(lambda: self._observe_all(jobs), "read the jobs")
        self._cancelled.intersection_update(j.id for j in jobs)
        return seen

    async def submit_group(self, jobs: Sequence[Job], max_concurrent: int) -> GroupSubmission:
        """One Indexed Job for all the runs (see :mod:`.indexed`): Kueue admits it as one workload."""
        return await self.indexed.submit(jobs, max_concurrent)

    async def cancel_group(self, jobs: Sequence[Job]) -> None:
        await self.indexed.cancel(jobs)

    async def capacity(self) -> ClusterCapacity:
        """Free and total GPUs and MIG slices from the cluster's nodes and unfinished pods (cached)."""
        return await self._capacity.get()

    async def cancel(self, job: Job) -> None:
        self._cancelled.add(job.id)
        if job.group_id is not None:
            await self.indexed.cancel_run(job)
            return
        name = job.backend_job_id or objects.job_name(job)

        def delete() -> None:
            try:
                self._delete_job(name, "delete the Job")
            except ApiError as e:
                if e.status != 404:  # already gone: nothing to stop
                    raise

        await self.api.run(delete, "cancel the job")

    async def logs(self, job: Job, offset: int, limit: int) -> LogChunk | None:
        folder = self.job_folder(job)
        if job.state == "queued" or await asyncio.to_thread((folder / jobfiles.LOG).exists):
            return None  # nothing ran yet, or the shared job folder has it: the service reads log.txt

        def read() -> bytes | None:
            selector = objects.selector_for_user(self.settings)
            return pods.newest_log(
                self.api, self._connected(), self.settings.namespace, selector, job.id, offset + limit
            )

        try:
            raw = await self.api.run(read, "read the pod log")
        except GpuEnvError as e:
            log.info("no pod log for job %s: %s", job.id, e)
            return None
        return None if raw is None else pods.log_chunk(raw, offset, limit, ended=job.state in TERMINAL_STATES)

    async def close(self) -> None:
        await cancel_and_wait(self._cluster_task, quiet=True)
        await self.api.close()

    # ----- calls (blocking: run through self.api.run) -----

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

    # ----- the cluster's GPUs -----

    def _refresh_cluster_soon(self) -> None:
        if time.time() - self._cluster.read_at < self.capacity_ttl:
            return
        if self._cluster_task is not None and not self._cluster_task.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._cluster_task = loop.create_task(self.refresh_cluster())

    async def refresh_cluster(self) -> None:
        """Read the nodes: MIG profiles present, the most GPUs one node has. Never raises."""
        try:
            self._cluster = await self.api.run(self._read_cluster, "read the nodes")
        except GpuEnvError as e:
            self._cluster = status.ClusterView(read_at=time.time(), error=str(e))

    def _read_cluster(self) -> status.ClusterView:
        try:
            nodes = self.api.items("list nodes", client.CoreV1Api(self._connected()).list_node)
        except ApiError as e:
            return status.ClusterView(read_at=time.time(), error=str(e))
        return status.cluster_view(nodes)

    # ----- checks -----

    def _check_folder_shared(self, folder: Path) -> None:
        mounts = [str(m.get("mountPath") or "") for m in self.settings.volume_mounts]
        for mount in mounts:
            if mount and (folder == Path(mount) or Path(mount) in folder.parents):
                return
        raise Conflict(
            f"The job folder {folder} is not on a volume the job's pod mounts"
            + (f" (mounts: {', '.join(mounts)})" if mounts else " (no volume_mounts are configured)")
            + ". Mount the volume that holds it at the same path: c.KubernetesBackend.volumes and "
            "volume_mounts (see docs/admin-kubernetes.md).",
            reason="job_folder_not_shared",
        )
