"""The Kubernetes backend: each batch job is a batch/v1 Job running the runner on the job folder.

The Job comes from :func:`k8s_manifests.job_object`; this module talks to the API server. The
official client is synchronous, so every call runs in a worker thread and the event loop never
waits on the network. One poll makes at most three list calls, whatever the number of jobs: the
user's Jobs (always), their pods (only when a job is pending or ended without a status) and Kueue
Workloads (only when a job waits in Kueue). Labels are filtered here as well as on the server.

What a job's state is, in order of authority:

1. ``status.json`` in the job folder (the runner's own word) when the folder is shared;
2. the Job's conditions (Complete, Failed with DeadlineExceeded or the pod's failure);
3. for a job not running yet, why: Kueue's Workload conditions (QuotaReserved, Admitted, Evicted)
   when the Job is queued through Kueue, else the pod's (Unschedulable, image pull, ...).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..errors import Conflict, GpuEnvError, InvalidRequest, Unavailable
from ..models.jobs import TERMINAL_STATES, BackendInfo, Job, JobRequest, LogChunk, ResourceLimits
from . import jobfiles as jf
from . import k8s_manifests as km
from .base import Backend, Observation, check_against_info
from .k8s_status import (
    _ApiError,
    _ClusterView,
    _explain_end,
    _job_observation,
    _kueue_managed,
    _labels,
    _load_client,
    _message,
    _pending_observation,
    _ts,
    _uid,
    _uid_or_name,
    _unreachable,
    cluster_view,
)

log = logging.getLogger(__name__)

KUEUE_GROUP = "kueue.x-k8s.io"
KUEUE_VERSIONS = ("v1beta2", "v1beta1")  # newest first; the first the server serves is used
KUEUE_JOB_UID = "kueue.x-k8s.io/job-uid"
_DISCOVERY_TTL = 600.0


class KubernetesBackend(Backend):
    kind = "kubernetes"

    def __init__(
        self,
        name: str = "kubernetes",
        *,
        settings: km.K8sSettings,
        kubeconfig: str = "",
        context: str = "",
        queues: Sequence[str] = (),
        mig_profiles: Sequence[str] = (),
        max_cpus: int | None = None,
        max_memory_bytes: int | None = None,
        max_gpus: int | None = None,
        max_time_limit_seconds: int | None = None,
        supports_images: bool = False,
        capacity_ttl: float = 60.0,
        request_timeout: float = 30.0,
        status_grace: float = 60.0,
        check_job_folder_mounted: bool = True,
        api_client: Callable[[], Any] | None = None,
    ) -> None:
        super().__init__(name)
        self.settings = replace(settings, backend_name=name)
        self.kubeconfig = kubeconfig
        self.context = context
        queue_list = list(dict.fromkeys([*([settings.local_queue] if settings.local_queue else []), *queues]))
        self.queues = queue_list
        self.configured_profiles = tuple(mig_profiles)
        self.max_cpus = max_cpus
        self.max_memory_bytes = max_memory_bytes
        self.max_gpus = max_gpus
        self.max_time_limit_seconds = max_time_limit_seconds
        self.supports_images = supports_images
        self.capacity_ttl = capacity_ttl
        self.request_timeout = request_timeout
        self.status_grace = status_grace
        self.check_job_folder_mounted = check_job_folder_mounted
        self._client_factory = api_client
        self._client: Any = None
        self._client_lock = threading.Lock()
        self._namespace_resolved = bool(settings.namespace)
        self._cluster = _ClusterView()
        self._cluster_task: asyncio.Task[None] | None = None
        self._kueue: tuple[float, str | None] = (0.0, None)
        self._cancelled: set[str] = set()

    # ----- what it offers -----

    def info(self) -> BackendInfo:
        self._refresh_cluster_soon()
        view = self._cluster
        profiles = list(self.configured_profiles or view.profiles or ())
        notes = [
            f"Runs each job as a Kubernetes Job in namespace '{self.settings.namespace or '(from the cluster)'}'"
            + (f", image {self.settings.image}." if self.settings.image else "."),
            "CPUs, memory, GPUs and the time limit are enforced by Kubernetes (requests equal limits).",
        ]
        if self.queues:
            notes.append(f"Queues are Kueue LocalQueues; the default is '{self.queues[0]}'.")
        if view.error and not self.configured_profiles:
            notes.append(
                f"The cluster's nodes could not be read ({view.error}); MIG profiles are not checked."
            )
        max_gpus = self.max_gpus if self.max_gpus is not None else view.max_gpus_per_node
        any_gpu = view.any_gpu if view.any_gpu is not None else True
        return BackendInfo(
            name=self.name,
            kind=self.kind,
            queues=list(self.queues),
            default_queue=self.queues[0] if self.settings.local_queue else None,
            limits=ResourceLimits(
                max_cpus=self.max_cpus,
                max_memory_bytes=self.max_memory_bytes,
                max_gpus=max_gpus,
                max_time_limit_seconds=self.max_time_limit_seconds,
            ),
            mig_profiles=profiles,
            supports_images=self.supports_images,
            supports_gpus=bool(any_gpu or profiles or self.max_gpus),
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
        return bool(self.configured_profiles) or self._cluster.profiles is not None

    # ----- contract -----

    async def submit(self, job: Job) -> Observation:
        res = job.resources
        if res.mig_profile and not self.configured_profiles:
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
        name = km.job_name(job)

        def create() -> dict[str, Any]:
            api = self._api()
            from kubernetes import client

            body = km.job_object(job, folder, self.settings)
            batch = client.BatchV1Api(api)
            try:
                return self._raw(
                    batch.create_namespaced_job, self.settings.namespace, body, what="create the Job"
                )
            except _ApiError as e:
                if e.status != 409:
                    raise
            # Taken: ours from an earlier try of this very submission, or someone else's.
            existing = self._raw(
                batch.read_namespaced_job, name, self.settings.namespace, what="read the existing Job"
            )
            labels = (existing.get("metadata") or {}).get("labels") or {}
            if labels.get(km.JOB_ID_LABEL) != km.label_value(job.id):
                raise Conflict(
                    f"A Kubernetes Job named '{name}' already exists in namespace "
                    f"'{self.settings.namespace}' and is not this job's.",
                    reason="kubernetes_conflict",
                )
            return existing

        created = await self._run(create, "submit the job")
        queue = job.queue or self.settings.local_queue
        where = f"Kueue queue '{queue}'" if queue else f"namespace '{self.settings.namespace}'"
        return Observation(
            state="queued",
            backend_job_id=(created.get("metadata") or {}).get("name") or name,
            pending_reason=f"Submitted to Kubernetes ({where}); waiting for its pod.",
        )

    async def poll(self, jobs: Sequence[Job]) -> dict[str, Observation]:
        seen = await self._run(lambda: self._observe_all(jobs), "read the jobs")
        self._cancelled.intersection_update(j.id for j in jobs)
        return seen

    async def cancel(self, job: Job) -> None:
        self._cancelled.add(job.id)
        name = job.backend_job_id or km.job_name(job)

        def delete() -> None:
            from kubernetes import client

            batch = client.BatchV1Api(self._api())
            try:
                self._raw(
                    batch.delete_namespaced_job,
                    name,
                    self.settings.namespace,
                    propagation_policy="Background",
                    what="delete the Job",
                )
            except _ApiError as e:
                if e.status != 404:  # already gone: nothing to stop
                    raise

        await self._run(delete, "cancel the job")

    async def logs(self, job: Job, offset: int, limit: int) -> LogChunk | None:
        folder = self.job_folder(job)
        if job.state == "queued" or await asyncio.to_thread((folder / jf.LOG).exists):
            return None  # nothing ran yet, or the shared job folder has it: the service reads log.txt
        try:
            raw = await self._run(lambda: self._pod_log(job, offset + limit), "read the pod log")
        except GpuEnvError as e:
            log.info("no pod log for job %s: %s", job.id, e)
            return None
        if raw is None:
            return None
        body = raw[offset : offset + limit]
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        text = decoder.decode(body, final=False)
        used = len(body) - len(decoder.getstate()[0])
        if used == 0 and body:  # a chunk too small for one character still advances
            text, used = body.decode("utf-8", "replace"), len(body)
        nxt = offset + used
        whole = len(raw) < offset + limit
        return LogChunk(
            offset=offset,
            next_offset=nxt,
            text=text,
            eof=job.state in TERMINAL_STATES and whole and nxt >= len(raw),
        )

    async def close(self) -> None:
        if self._cluster_task is not None:
            self._cluster_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._cluster_task
        client_ = self._client
        self._client = None
        if client_ is not None:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(client_.close)

    # ----- connection -----

    def _api(self) -> Any:
        """The ApiClient, made on first use (in a worker thread: it reads kubeconfig files)."""
        with self._client_lock:
            if self._client is None:
                if self._client_factory is not None:
                    self._client, namespace = self._client_factory(), None
                else:
                    self._client, namespace = _load_client(self.kubeconfig, self.context)
                if not self._namespace_resolved:
                    self.settings = replace(self.settings, namespace=namespace or "default")
                    self._namespace_resolved = True
            return self._client

    def _raw(
        self, method: Callable[..., Any], *args: Any, what: str, parse: bool = True, **kwargs: Any
    ) -> Any:
        """Call a client method and return the reply's JSON (its bytes when ``parse`` is false).

        Replies are parsed here, not by the client's models: faster for a hundred Jobs, the same
        for custom resources, and independent of the client's model generation.
        """
        from kubernetes.client.exceptions import ApiException

        kwargs.setdefault("_request_timeout", self.request_timeout)
        try:
            resp = method(*args, _preload_content=False, **kwargs)
        except ApiException as e:
            raise _ApiError.from_exception(e, what) from None
        status = getattr(resp, "status", 200)
        data = resp.data if hasattr(resp, "data") else resp.read()
        if status >= 400:
            raise _ApiError(status, _message(data) or str(getattr(resp, "reason", "")), what)
        if not parse:
            return data
        try:
            return json.loads(data)
        except ValueError:
            return data

    async def _run(self, fn: Callable[[], Any], doing: str) -> Any:
        """Run blocking client work in a thread; turn every failure into a GpuEnvError."""
        try:
            return await asyncio.to_thread(fn)
        except GpuEnvError:
            raise
        except _ApiError as e:
            raise e.as_error(doing) from None
        except Exception as e:
            if not _unreachable(e):
                raise  # a bug, not the cluster: let it show as one
            raise Unavailable(f"Could not {doing}: the Kubernetes API cannot be reached ({e}).") from e

    # ----- observing -----

    def _list(self, what: str, method: Callable[..., Any], *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        reply = self._raw(method, *args, what=what, **kwargs)
        return list(reply.get("items") or []) if isinstance(reply, dict) else []

    def _observe_all(self, jobs: Sequence[Job]) -> dict[str, Observation]:
        from kubernetes import client

        api = self._api()
        ns = self.settings.namespace
        selector = km.selector_for_user(self.settings)
        wanted = {km.label_value(j.id): j for j in jobs}
        k8s_jobs: dict[str, dict[str, Any]] = {}
        for item in self._list(
            "list Jobs", client.BatchV1Api(api).list_namespaced_job, ns, label_selector=selector
        ):
            labels = _labels(item)
            jid = labels.get(km.JOB_ID_LABEL)
            if labels.get(km.MANAGED_BY_KEY) == km.MANAGED_BY and jid in wanted:
                k8s_jobs[wanted[jid].id] = item

        now = time.time()
        out: dict[str, Observation] = {}
        pending: list[Job] = []  # not running: ask the pods (and Kueue) why
        ended: list[Job] = []  # ended without the runner's status: ask the pods how
        for job in jobs:
            folder = self.job_folder(job)
            status = jf.read_status(folder)
            item = k8s_jobs.get(job.id)
            if status is not None:
                out[job.id] = self._from_status(job, status, item)
                continue
            if item is None:
                if job.id in self._cancelled:
                    out[job.id] = Observation(
                        state="cancelled", reason="cancelled", message="Cancelled by the user."
                    )
                else:
                    out[job.id] = Observation(
                        state="failed",
                        reason="lost",
                        message=f"The Kubernetes Job {km.job_name(job)} no longer exists and the runner left "
                        "no status (deleted from outside, or removed after it finished while the server was away).",
                    )
                continue
            obs = _job_observation(item)
            if obs is not None:  # Complete or Failed
                started = (folder / jf.HEARTBEAT).exists()
                if started and now - (obs.finished_at or now) < self.status_grace:
                    continue  # the runner's status.json is on its way through the shared filesystem
                ended.append(job)
                out[job.id] = obs
                continue
            spec, st = item.get("spec") or {}, item.get("status") or {}
            name = (item.get("metadata") or {}).get("name")
            if not spec.get("suspend") and (
                (st.get("ready") or 0) > 0
                or ((st.get("active") or 0) > 0 and (folder / jf.HEARTBEAT).exists())
            ):
                out[job.id] = Observation(
                    state="running", backend_job_id=name, started_at=_ts(st.get("startTime"))
                )
                continue
            pending.append(job)
            out[job.id] = Observation(state="queued", backend_job_id=name)

        if pending or ended:
            pods = self._pods_by_job(api, ns, selector, {j.id for j in (*pending, *ended)})
            for job in ended:
                out[job.id] = _explain_end(out[job.id], k8s_jobs[job.id], pods.get(job.id, []))
            kueue_jobs = [k8s_jobs[j.id] for j in pending if _kueue_managed(k8s_jobs[j.id])]
            workloads = self._workloads(api, ns, kueue_jobs) if kueue_jobs else None
            for job in pending:
                item = k8s_jobs[job.id]
                out[job.id] = _pending_observation(
                    out[job.id],
                    item,
                    pods.get(job.id, []),
                    workloads.get(_uid_or_name(item)) if workloads is not None else None,
                    kueue=workloads is not None,
                )
        return out

    def _from_status(self, job: Job, status: dict[str, Any], item: dict[str, Any] | None) -> Observation:
        obs = Observation(
            state=status["state"],
            reason=status.get("reason"),
            message=status.get("message"),
            exit_code=status.get("exit_code"),
            started_at=status.get("started_at"),
            finished_at=status.get("finished_at"),
        )
        if obs.state == "cancelled" and job.id not in self._cancelled:
            # The runner saw SIGTERM, but not from us: the pod was stopped from outside.
            obs = replace(
                obs,
                state="failed",
                reason="stopped",
                message="The pod was stopped from outside (deleted, preempted, evicted, or its node drained)"
                + (" and Kueue suspended the Job" if item and (item.get("spec") or {}).get("suspend") else "")
                + ".",
            )
        if item is not None and (item.get("spec") or {}).get("suspend"):
            # Evicted by Kueue after the runner ended: Kueue would run the notebook again. It ran.
            self._delete_quietly(item)
        return obs

    def _delete_quietly(self, item: dict[str, Any]) -> None:
        name = (item.get("metadata") or {}).get("name")
        if not name:
            return
        from kubernetes import client

        with contextlib.suppress(GpuEnvError, _ApiError):
            self._raw(
                client.BatchV1Api(self._api()).delete_namespaced_job,
                name,
                self.settings.namespace,
                propagation_policy="Background",
                what="delete the finished Job",
            )

    def _pods_by_job(
        self, api: Any, ns: str, selector: str, ids: set[str]
    ) -> dict[str, list[dict[str, Any]]]:
        from kubernetes import client

        try:
            pods = self._list(
                "list pods", client.CoreV1Api(api).list_namespaced_pod, ns, label_selector=selector
            )
        except _ApiError as e:
            log.info("pods could not be listed: %s", e)
            return {}
        wanted = {km.label_value(i): i for i in ids}
        out: dict[str, list[dict[str, Any]]] = {}
        for pod in pods:
            jid = _labels(pod).get(km.JOB_ID_LABEL)
            if jid in wanted:
                out.setdefault(wanted[jid], []).append(pod)
        for group in out.values():
            group.sort(key=lambda p: (p.get("metadata") or {}).get("creationTimestamp") or "", reverse=True)
        return out

    def _kueue_version(self, api: Any) -> str | None:
        """The Workload API version the cluster serves (v1beta2 preferred), None without Kueue.

        Asks ``/apis/kueue.x-k8s.io/<version>`` for each known version (at most two calls, cached).
        """
        checked, version = self._kueue
        if time.time() - checked < _DISCOVERY_TTL:
            return version
        from kubernetes import client

        version = None
        custom = client.CustomObjectsApi(api)
        for candidate in KUEUE_VERSIONS:
            try:
                reply = self._raw(
                    custom.get_api_resources, KUEUE_GROUP, candidate, what="discover Kueue's API"
                )
            except _ApiError as e:
                if e.status != 404:
                    log.info("Kueue's API could not be discovered: %s", e)
                continue
            names = (
                {r.get("name") for r in (reply.get("resources") or [])} if isinstance(reply, dict) else set()
            )
            if "workloads" in names:
                version = candidate
                break
        self._kueue = (time.time(), version)
        return version

    def _workloads(
        self, api: Any, ns: str, items: Iterable[dict[str, Any]]
    ) -> dict[str, dict[str, Any]] | None:
        """Kueue Workloads of these Jobs, by Job uid (or name when the Job has no uid); None without Kueue."""
        version = self._kueue_version(api)
        if version is None:
            return None
        from kubernetes import client

        items = list(items)
        uids = sorted({u for u in (_uid(i) for i in items) if u})
        selector = f"{KUEUE_JOB_UID} in ({','.join(uids)})" if uids and len(uids) == len(items) else None
        try:
            reply = self._raw(
                client.CustomObjectsApi(api).list_namespaced_custom_object,
                KUEUE_GROUP,
                version,
                ns,
                "workloads",
                label_selector=selector,
                what="list Kueue Workloads",
            )
        except _ApiError as e:
            if e.status == 404:
                self._kueue = (0.0, None)  # Kueue went away or changed versions: discover again
            log.info("Kueue workloads could not be listed: %s", e)
            return {}
        wanted_uids = {_uid(i) for i in items} - {None}
        wanted_names = {(i.get("metadata") or {}).get("name") for i in items}
        out: dict[str, dict[str, Any]] = {}
        for wl in (reply.get("items") if isinstance(reply, dict) else None) or []:
            uid = _labels(wl).get(KUEUE_JOB_UID)
            if uid and uid in wanted_uids:
                out[uid] = wl
                continue
            for ref in (wl.get("metadata") or {}).get("ownerReferences") or []:
                if ref.get("kind") == "Job" and ref.get("name") in wanted_names:
                    match = next(i for i in items if (i.get("metadata") or {}).get("name") == ref.get("name"))
                    if ref.get("uid") in (None, _uid(match)):
                        out[_uid_or_name(match)] = wl
        return out

    def _pod_log(self, job: Job, limit_bytes: int) -> bytes | None:
        from kubernetes import client

        api = self._api()
        core = client.CoreV1Api(api)
        pods = self._pods_by_job(api, self.settings.namespace, km.selector_for_user(self.settings), {job.id})
        pod = next(iter(pods.get(job.id, [])), None)
        if pod is None:
            return None
        name = (pod.get("metadata") or {}).get("name")
        try:
            data = self._raw(
                core.read_namespaced_pod_log,
                name,
                self.settings.namespace,
                container=km.CONTAINER,
                limit_bytes=max(1, limit_bytes),
                what="read the pod log",
                parse=False,
            )
        except _ApiError as e:
            if e.status in (400, 404):  # the container has not started, or the pod is gone
                return None
            raise
        return data if isinstance(data, bytes) else str(data).encode()

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
            self._cluster = await self._run(self._read_cluster, "read the nodes")
        except GpuEnvError as e:
            self._cluster = _ClusterView(read_at=time.time(), error=str(e))

    def _read_cluster(self) -> _ClusterView:
        from kubernetes import client

        try:
            nodes = self._list("list nodes", client.CoreV1Api(self._api()).list_node)
        except _ApiError as e:
            return _ClusterView(read_at=time.time(), error=str(e))
        return cluster_view(nodes)

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


# ----- pure helpers (tested without a server) -----
