"""The Kubernetes backend: each batch job is a batch/v1 Job running the runner on the job folder.

The Job comes from :func:`.objects.job_object`; its options are :class:`.options.KubernetesOptions`;
this module talks to the API server through :class:`.client.KubeApi`, whose calls run in a worker thread
so the event loop never waits on the network. One poll makes at most three list calls, whatever the
number of jobs: the user's Jobs (always), their pods (only when a job is pending or ended without a
status) and Kueue Workloads (only when a job waits in Kueue). Labels are filtered here as well as on the
server.

The backend is its options (options.py, ``c.KubernetesBackend.*``) and holds its parts: the
:class:`.namespace.Namespace` its Jobs live in (the API client and the Job settings), a
:class:`.observe.KubernetesObserver` that reads what a job's state is and where a waiting one stands,
and :class:`.sweeps.IndexedJobs` for sweeps, :class:`.schedules.cronjobs.CronJobs` for schedules (each a
CronJob, so its runs start with no Jupyter server); a pipeline's held nodes are staged as Jobs in their
folders (:mod:`.pipelines.stage`) that their parents' pods create (:mod:`.pipelines.carry`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from kubernetes import client

from ...contracts import jobfiles
from ...contracts.schedules.plan import Armed, SchedulePlan
from ...errors import Conflict, GpuEnvError, InvalidRequest
from ...loops import Refresher
from ...models.backends import NORMAL_WORDS, OPPORTUNISTIC_WORDS, BackendInfo, PriorityOffer, ResourceLimits
from ...models.cluster import ClusterCapacity
from ...models.jobs import TERMINAL_STATES, Job, JobRequest, LogChunk
from ...models.resources import parse_memory
from ..base import Observation, SweepSubmission, check_against_info
from ..dask import DaskLauncher, DaskSettings
from . import objects, status
from .api import pods
from .api.client import ApiError, KubeApi
from .api.kueue import KueueReader
from .api.namespace import Namespace, gone_already
from .capacity import KubernetesCapacity
from .dask.launcher import KubeLauncher
from .observe import KubernetesObserver
from .options import KubernetesOptions
from .pipelines.stage import node_target, stage_node
from .schedules.cronjobs import CronJobs
from .sweeps.jobs import IndexedJobs

log = logging.getLogger(__name__)


class KubernetesBackend(KubernetesOptions):
    """Runs each job as a Kubernetes Job (batch/v1), optionally queued through a Kueue LocalQueue.

    Needs the `kubernetes` extra (`pip install jupyter-gpu-env[kubernetes]`), RBAC for the server's
    service account, and the job folder on a volume the job pods mount at the same path
    (docs/admin-kubernetes.md). Lists of volumes, mounts and tolerations are Kubernetes JSON (camelCase).
    """

    keeps_schedules = True  # each schedule is a CronJob (schedules/cronjob.py)

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
        self.api = KubeApi(
            self.kubeconfig, self.context, request_timeout=self.request_timeout, factory=api_client
        )
        self.ns = Namespace(self.api, replace(settings or self.job_settings(), backend_name=self.name))
        # The jobs this server asked to stop: a runner's "cancelled" is then the user's, not the cluster's.
        self._cancelled: set[str] = set()
        kueue = KueueReader(self.api)
        self.observer = KubernetesObserver(self.ns, kueue, self._cancelled, self.status_grace)
        self.indexed = IndexedJobs(self.ns, self._cancelled)
        self.cronjobs = CronJobs(self.ns, kueue)
        self._capacity = KubernetesCapacity(self.capacity_ttl, self.api)
        self._cluster = status.ClusterView()
        self._cluster_refresher = Refresher(
            self.refresh_cluster, lambda: time.time() - self._cluster.read_at >= self.capacity_ttl
        )

    @property
    def settings(self) -> objects.K8sSettings:
        """What the Job builder is given; the namespace is settled once the API has been reached."""
        return self.ns.settings

    # ----- what it offers -----

    def offered_queues(self) -> list[str]:
        local = [self.settings.local_queue] if self.settings.local_queue else []
        return list(dict.fromkeys([*local, *self.queues]))

    def info(self) -> BackendInfo:
        self._cluster_refresher.ask()
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
            priorities=self.offered_priorities(),
        )

    def offered_priorities(self) -> list[PriorityOffer]:
        """Always ``normal``; ``opportunistic`` where ``c.KubernetesBackend.priorities`` maps it."""
        configured = self.settings.priorities
        offers = [
            PriorityOffer(
                name="normal", description=configured.get("normal", {}).get("description") or NORMAL_WORDS
            )
        ]
        if "opportunistic" in configured:
            words = configured["opportunistic"].get("description") or OPPORTUNISTIC_WORDS
            offers.append(PriorityOffer(name="opportunistic", description=words))
        return offers

    def validate(self, request: JobRequest) -> None:
        info = self.info()
        if request.resources.mig_profile and not self._profiles_known():
            # Not read yet (or not readable): submit() reads the nodes before it decides.
            info = info.model_copy(update={"mig_profiles": [request.resources.mig_profile]})
        check_against_info(info, request)

    def _profiles_known(self) -> bool:
        return bool(self.mig_profiles) or self._cluster.profiles is not None

    # ----- contract -----

    async def _check_profile(self, job: Job) -> None:
        """InvalidRequest when the job's MIG profile is offered by no node (read once if not yet)."""
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

    async def submit(self, job: Job) -> Observation:
        await self._check_profile(job)
        folder = self.job_folder(job)
        if self.check_job_folder_mounted:
            self.ns.check_folder_shared(folder)
        name = objects.job_name(job)

        def create() -> dict[str, Any]:
            batch = client.BatchV1Api(self.ns.connected())
            body = objects.job_object(job, folder, self.settings)
            try:
                return self.api.one(
                    batch.create_namespaced_job, self.settings.namespace, body, what="create the Job"
                )
            except ApiError as e:
                if e.status != 409:
                    raise
            # Taken: ours from an earlier try of this very submission, or someone else's.
            existing = self.api.one(
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
        if job.id in self._cancelled:
            # Cancelled while its Job was being created: the cancel found no Job to delete, so this does.
            await self.cancel(job)
        return Observation(
            state="queued",
            backend_job_id=(created.get("metadata") or {}).get("name") or name,
            pending_reason=f"Submitted to Kubernetes ({self.ns.where(job.queue)}); waiting for its pod.",
        )

    async def poll(self, jobs: Sequence[Job]) -> dict[str, Observation]:
        seen: dict[str, Observation] = await self.api.run(
            lambda: self.observer.observe(jobs, self.job_folder), "read the jobs"
        )
        self._cancelled.intersection_update(j.id for j in jobs)
        return seen

    async def submit_sweep(self, jobs: Sequence[Job], max_concurrent: int) -> SweepSubmission:
        """One Indexed Job for all the runs (see :mod:`.indexed`): Kueue admits it as one workload."""
        folders = [self.job_folder(j) for j in jobs]
        if self.check_job_folder_mounted:
            self.ns.check_folder_shared(folders[0].parent)
        return await self.indexed.submit(jobs, folders, max_concurrent)

    async def stage(self, jobs: Sequence[Job]) -> None:
        """Write the held node's Job (one job's, or a sweep's Indexed Job and runs file) into its folder,
        exactly as :meth:`submit` or :meth:`submit_sweep` would create it: the pod of its last parent to
        end creates it from there (:mod:`.pipelines.carry`), and a later submit of the same jobs takes
        the Job it finds."""
        if not jobs:
            return
        await self._check_profile(jobs[0])  # one node's jobs share their resources
        folders = [self.job_folder(j) for j in jobs]
        target = node_target(jobs, folders)
        if self.check_job_folder_mounted:
            self.ns.check_folder_shared(target)
        await stage_node(self.ns, self.indexed, jobs, folders)

    async def cancel_sweep(self, jobs: Sequence[Job]) -> None:
        """Runs of sweeps: their Indexed Jobs deleted; jobs alone (a pipeline cancels its nodes' jobs
        together): their Jobs. A held pipeline node's jobs have no backend id yet, but a parent's pod may
        have created their Job just now (:mod:`.pipelines.carry`): its deterministic name is deleted."""
        await self.indexed.cancel([j for j in jobs if j.group_id is not None])
        for job in jobs:
            if job.group_id is None:
                await self.cancel(job)

    async def capacity(self) -> ClusterCapacity:
        """Free and total GPUs and MIG slices from the cluster's nodes and unfinished pods (cached)."""
        return await self._capacity.get()

    async def cancel(self, job: Job) -> None:
        self._cancelled.add(job.id)
        if job.group_id is not None:
            await self.indexed.cancel_run(job, self.job_folder(job))
            return
        await self._delete_job(job, "cancel the job")

    async def forget(self, job: Job) -> None:
        """Delete the job's Job and its pods now rather than at its TTL. A sweep's run shares its Indexed
        Job with the other runs: that Job stays until the sweep's is deleted or its TTL."""
        if job.group_id is None:
            await self._delete_job(job, "delete the job's Job")

    async def _delete_job(self, job: Job, doing: str) -> None:
        """Delete the job's Job (its pods in the background); one already gone is fine."""
        name = job.backend_job_id or objects.job_name(job)

        def delete() -> None:
            with gone_already():
                self.ns.delete_job(name, doing)

        await self.api.run(delete, doing)

    async def logs(self, job: Job, offset: int, limit: int) -> LogChunk | None:
        folder = self.job_folder(job)
        if job.state == "queued" or await asyncio.to_thread((folder / jobfiles.LOG).exists):
            return None  # nothing ran yet, or the shared job folder has it: the service reads log.txt

        def read() -> bytes | None:
            selector = objects.selector_for_user(self.settings)
            return pods.newest_log(
                self.api, self.ns.connected(), self.ns.name, selector, job.id, offset + limit
            )

        try:
            raw = await self.api.run(read, "read the pod log")
        except GpuEnvError as e:
            log.info("no pod log for job %s: %s", job.id, e)
            return None
        return None if raw is None else pods.log_chunk(raw, offset, limit, ended=job.state in TERMINAL_STATES)

    async def arm_schedule(self, plan: SchedulePlan) -> Armed:
        """The schedule's CronJob, made or changed in place (suspended while the schedule is paused);
        Conflict ``cron_required`` for an ISO-8601 interval, which a CronJob cannot hold."""
        return await self.cronjobs.arm(plan)

    async def disarm_schedule(self, plan: SchedulePlan) -> None:
        """Delete the CronJob (already gone is fine); runs already started go on."""
        await self.cronjobs.disarm(plan)

    async def schedules_armed(self, plans: Sequence[SchedulePlan]) -> dict[str, Armed]:
        return await self.cronjobs.armed(plans)

    def dask_launcher(self, settings: DaskSettings) -> DaskLauncher:
        return KubeLauncher(self, settings)

    async def close(self) -> None:
        await self._cluster_refresher.close()
        await self.api.close()

    # ----- the cluster's GPUs -----

    async def refresh_cluster(self) -> None:
        """Read the nodes: MIG profiles present, the most GPUs one node has. Never raises."""
        try:
            self._cluster = await self.api.run(self._read_cluster, "read the nodes")
        except GpuEnvError as e:
            self._cluster = status.ClusterView(read_at=time.time(), error=str(e))

    def _read_cluster(self) -> status.ClusterView:
        try:
            nodes = self.api.items("list nodes", client.CoreV1Api(self.ns.connected()).list_node)
        except ApiError as e:
            return status.ClusterView(read_at=time.time(), error=str(e))
        return status.cluster_view(nodes)
