"""Dask clusters on the Kubernetes backend: ``KubeLauncher`` creates a cluster's objects
(:mod:`.objects`) through the backend's namespace client, observes every scheduler in one list call,
and deletes everything labelled for a cluster when it stops.

With the dask-kubernetes operator (``c.DaskClusters.kubernetes_operator``: ``auto`` uses it where the
cluster serves ``daskclusters.kubernetes.dask.org``) a cluster is one ``DaskCluster``; without it, the
scheduler's Job (admitted by Kueue where a queue is named) and its Service, the workers' Jobs made by the
keeper in the scheduler's pod; or, for a fixed-size cluster of CPU workers, one Indexed Job that Kueue
admits whole (:mod:`.workload`). Every call blocks in a worker thread (:meth:`KubeApi.run`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from kubernetes import client

from ....contracts.dask.folder import add_pool_module
from ....contracts.dask.spec import ClusterSpec, Network
from ....errors import Conflict, Unavailable
from ....models.backends import BackendInfo
from ...base import Observation
from ...dask import ClusterRef, DaskSettings, Placement, SchedulerSeen, Started
from .. import objects as k8s
from .. import status
from ..api.client import ApiError, KubeApi
from ..api.kueue import Places
from ..api.namespace import Namespace, gone_already
from ..observe import KubernetesObserver
from . import objects, workload
from . import pool as keeper_pool
from .seen import from_pod, is_scheduler_pod, ours

DISCOVERY_TTL = 600.0
STOP_GRACE = 20.0  # seconds the keeper has to retire its workers before everything is deleted
STOP_TIMEOUT = 120.0  # seconds for what was deleted to be gone
PLURAL = "daskclusters"


class _Kubernetes(Protocol):
    """What the launcher uses of its backend (:class:`..backend.KubernetesBackend`, which makes it)."""

    ns: Namespace
    api: KubeApi
    observer: KubernetesObserver

    @property
    def dask_service_account(self) -> str: ...

    def info(self) -> BackendInfo: ...


class KubeLauncher:
    name = "kubernetes"

    def __init__(
        self,
        backend: _Kubernetes,
        settings: DaskSettings,
        *,
        stop_grace: float = STOP_GRACE,
        stop_timeout: float = STOP_TIMEOUT,
        poll: float = 1.0,
    ) -> None:
        self.backend = backend
        self.network = Network.on(settings.interface)
        self.settings = settings
        self.ns = backend.ns
        self.api = backend.api
        self.stop_grace, self.stop_timeout, self.poll = stop_grace, stop_timeout, poll
        self._served: tuple[float, bool] = (0.0, False)

    # ----- what it can run -----

    def operator(self) -> bool:
        """Whether clusters are made with the operator: the option, else (auto) whether the cluster serves
        the DaskCluster resource, asked at most every 10 minutes. Blocks."""
        mode = self.settings.kubernetes_operator
        if mode != "auto":
            return mode == "always"
        checked, served = self._served
        if time.time() - checked < DISCOVERY_TTL:
            return served
        custom = client.CustomObjectsApi(self.ns.connected())
        try:
            group, version = objects.OPERATOR_GROUP, objects.OPERATOR_VERSION
            reply = self.api.raw(custom.get_api_resources, group, version, what="discover Dask's operator")
            names = (
                {r.get("name") for r in (reply.get("resources") or [])} if isinstance(reply, dict) else set()
            )
            served = PLURAL in names
        except ApiError as e:
            if e.status != 404:
                raise
            served = False
        self._served = (time.time(), served)
        return served

    def check(self, placement: Placement, walltime_seconds: int) -> None:
        if placement.image:
            raise Conflict(
                "The Kubernetes backend cannot run a Dask cluster from a packed image; choose its environment.",
                reason="images_unsupported",
            )
        if not self.backend.dask_service_account:
            raise Conflict(
                "Dask clusters on this Kubernetes backend need a service account for the scheduler's pod "
                "(c.KubernetesBackend.dask_service_account; see docs/admin-kubernetes.md, Dask clusters).",
                reason="dask_not_configured",
            )
        limits = self.backend.info().limits
        if placement.gpus and limits.max_gpus is not None and placement.gpus > limits.max_gpus:
            raise Conflict(
                f"Each worker asks for {placement.gpus} GPUs; a node of this cluster has at most {limits.max_gpus}.",
                reason="resources_unavailable",
            )
        if limits.max_time_limit_seconds and walltime_seconds > limits.max_time_limit_seconds:
            raise Conflict(
                f"A worker's walltime ({walltime_seconds} s) is above this backend's limit "
                f"({limits.max_time_limit_seconds} s).",
                reason="resources_unavailable",
            )
        try:
            objects.queue_of(placement, self.ns.settings)
        except ValueError as e:
            raise Conflict(str(e), reason="invalid_queue") from None

    def pool(self, spec: ClusterSpec, placement: Placement, folder: Path) -> dict[str, Any]:
        """Blocks (the namespace settled, the operator discovered): call it off the event loop."""
        self.ns.connected()
        base = objects.cluster_name(spec)
        module = add_pool_module(folder, "pool_kubernetes", Path(keeper_pool.__file__))
        if self.operator():
            return {
                "kind": "operator",
                "module": module,
                "namespace": self.ns.name,
                "name": base,
                "group": objects.worker_group_name(base),
            }
        job = objects.worker_job(spec, placement, self.ns.settings)
        return {
            "kind": "kubernetes",
            "module": module,
            "namespace": self.ns.name,
            "name": base,
            "selector": objects.selector(self.ns.settings, spec.id, objects.WORKER),
            "job": k8s.as_dict(job),
        }

    # ----- start -----

    async def together(self, spec: ClusterSpec, placement: Placement) -> int:
        """Every worker, as one Kueue workload with the scheduler (:mod:`.workload`), for a fixed-size
        cluster of workers without GPUs, where the operator does not run it."""
        n = spec.workers or 0
        if not self.settings.one_allocation or spec.adapt is not None or n < 1 or spec.worker.cuda:
            return 0
        if placement.gpus or placement.mig_profile or await asyncio.to_thread(self.operator):
            return 0
        return n

    async def start(self, spec: ClusterSpec, placement: Placement, folder: Path) -> Started:
        if spec.python is None:
            raise Conflict("A Kubernetes cluster needs an environment's Python.", reason="no_python")
        self.ns.check_folder_shared(Path(spec.folder))
        started: Started = await self.api.run(
            lambda: self._start(spec, placement), "start the Dask scheduler"
        )
        return started

    def _start(self, spec: ClusterSpec, placement: Placement) -> Started:
        c = self.ns.connected()
        ns, account = self.ns.name, self.backend.dask_service_account
        if self.operator():
            body = objects.dask_cluster(
                spec, placement, self.ns.settings, account=account, interface=self.settings.interface
            )
            self.api.one(
                client.CustomObjectsApi(c).create_namespaced_custom_object,
                objects.OPERATOR_GROUP,
                objects.OPERATOR_VERSION,
                ns,
                PLURAL,
                body,
                what="create the DaskCluster",
            )
            return Started(handle=f"daskcluster/{body['metadata']['name']}")
        job = (
            workload.allocation_job(
                spec, placement, self.ns.settings, account=account, interface=self.settings.interface
            )
            if spec.together
            else objects.scheduler_job(
                spec,
                placement,
                self.ns.settings,
                account=account,
                walltime_seconds=self.settings.scheduler_walltime_seconds,
                interface=self.settings.interface,
            )
        )
        made = self.api.one(
            client.BatchV1Api(c).create_namespaced_job,
            ns,
            k8s.as_dict(job),
            what="create the Dask scheduler's Job",
        )
        make = workload.allocation_service if spec.together else objects.scheduler_service
        service = make(spec, self.ns.settings, owner=made)
        self.api.one(
            client.CoreV1Api(c).create_namespaced_service,
            ns,
            k8s.as_dict(service),
            what="create the scheduler's Service",
        )
        return Started(handle=f"job/{objects.cluster_name(spec)}")

    # ----- observe -----

    async def observe(self, clusters: Sequence[ClusterRef]) -> dict[str, SchedulerSeen]:
        if not clusters:
            return {}
        seen: dict[str, SchedulerSeen] = await self.api.run(
            lambda: self._observe(clusters), "read the Dask schedulers"
        )
        return seen

    def _observe(self, clusters: Sequence[ClusterRef]) -> dict[str, SchedulerSeen]:
        c = self.ns.connected()
        ns, settings = self.ns.name, self.ns.settings
        sel = objects.selector(settings, component=objects.SCHEDULER)
        pods: dict[str, dict[str, Any]] = {}
        for pod in self.api.items(
            "list the Dask schedulers' pods", client.CoreV1Api(c).list_namespaced_pod, ns, label_selector=sel
        ):
            labels = status.labels_of(pod)
            if not ours(pod, sel) or not is_scheduler_pod(pod):
                continue
            cid = labels[objects.CLUSTER_LABEL]
            if cid not in pods or (pod.get("status") or {}).get("phase") == "Running":
                pods[cid] = pod
        out: dict[str, SchedulerSeen] = {}
        missing: list[ClusterRef] = []
        for ref in clusters:
            found = pods.get(k8s.label_value(ref.id))
            if found is not None:
                out[ref.id] = from_pod(found)
            else:
                missing.append(ref)
        if missing:
            out.update(self._without_pod(c, missing))
        return out

    def _without_pod(self, c: Any, refs: Sequence[ClusterRef]) -> dict[str, SchedulerSeen]:
        """A scheduler with no pod: waiting (its Job in Kueue, its DaskCluster for the operator) or gone."""
        ns, settings = self.ns.name, self.ns.settings
        out: dict[str, SchedulerSeen] = {}
        jobs: dict[str, dict[str, Any]] = {}
        if any(not (r.handle or "").startswith("daskcluster/") for r in refs):
            sel = objects.selector(settings, component=objects.SCHEDULER)
            for item in self.api.items(
                "list the Dask schedulers' Jobs",
                client.BatchV1Api(c).list_namespaced_job,
                ns,
                label_selector=sel,
            ):
                if ours(item, sel):
                    jobs[status.labels_of(item)[objects.CLUSTER_LABEL]] = item
        dask_clusters: set[str] = set()
        if any((r.handle or "").startswith("daskcluster/") for r in refs):
            sel = objects.selector(settings)
            listed = self.api.items(
                "list DaskClusters",
                client.CustomObjectsApi(c).list_namespaced_custom_object,
                objects.OPERATOR_GROUP,
                objects.OPERATOR_VERSION,
                ns,
                PLURAL,
                label_selector=sel,
            )
            dask_clusters = {status.labels_of(d)[objects.CLUSTER_LABEL] for d in listed if ours(d, sel)}
        waiting: dict[str, dict[str, Any]] = {}
        for ref in refs:
            cid = k8s.label_value(ref.id)
            if cid in jobs:
                item = jobs[cid]
                ended = status.job_observation(item)
                if ended is not None:
                    out[ref.id] = SchedulerSeen(state="ended", reason=ended.message)
                else:
                    waiting[ref.id] = item
            elif cid in dask_clusters:
                out[ref.id] = SchedulerSeen(
                    state="queued", reason="Waiting for the Dask operator to start the scheduler."
                )
            else:
                out[ref.id] = SchedulerSeen(state="gone")
        if waiting:
            out.update(self._in_kueue(waiting))
        return out

    def _in_kueue(self, waiting: dict[str, dict[str, Any]]) -> dict[str, SchedulerSeen]:
        """Why each scheduler Job waits (Kueue's word, as the backend reads it for jobs) and its place."""
        ns = self.ns.name
        kueue = self.backend.observer.kueue
        managed = [i for i in waiting.values() if status.kueue_managed(i)]
        workloads = kueue.workloads(ns, managed) if managed else None
        out: dict[str, SchedulerSeen] = {}
        places: dict[str, Places] = {}
        for cid, item in waiting.items():
            workload = (workloads or {}).get(status.uid_or_name(item))
            obs = status.pending_observation(
                Observation(state="queued"), item, [], workload, kueue=workloads is not None
            )
            seen = SchedulerSeen(state="queued", reason=obs.pending_reason)
            queue = status.labels_of(item).get(k8s.QUEUE_LABEL)
            if workload is not None and queue:
                places[queue] = places.get(queue) or kueue.pending_positions(ns, queue)  # once a queue
                place = places[queue].found.get(str((workload.get("metadata") or {}).get("name")))
                if place is not None:
                    seen = replace(seen, place=place[0])
            out[cid] = seen
        return out

    # ----- stop -----

    async def stop(self, cluster: ClusterRef) -> None:
        """The keeper has ``stop_grace`` to retire its workers and end the scheduler; then every object
        labelled for the cluster is deleted (foreground: a Job's pods before it), until none is left."""
        deadline = time.monotonic() + self.stop_grace
        while time.monotonic() < deadline:  # another machine's process: no event to wait on
            seen = await self.observe([cluster])
            if seen[cluster.id].state != "running":
                break
            await asyncio.sleep(self.poll)
        deadline = time.monotonic() + self.stop_timeout
        while await self.api.run(lambda: self._delete_all(cluster), "delete the Dask cluster"):
            if time.monotonic() > deadline:
                raise Unavailable(
                    f"The Dask cluster {cluster.id}'s Kubernetes objects are still being deleted."
                )
            await asyncio.sleep(self.poll)

    def _delete_all(self, cluster: ClusterRef) -> int:
        """Delete what is left of the cluster; how many objects were still there."""
        c = self.ns.connected()
        ns, sel = self.ns.name, objects.selector(self.ns.settings, cluster.id)
        core, batch, custom = client.CoreV1Api(c), client.BatchV1Api(c), client.CustomObjectsApi(c)
        foreground = client.V1DeleteOptions(propagation_policy="Foreground")
        kinds: list[tuple[str, Any, Any, tuple[Any, ...]]] = [
            ("Jobs", batch.list_namespaced_job, batch.delete_namespaced_job, ()),
            ("Services", core.list_namespaced_service, core.delete_namespaced_service, ()),
            ("pods", core.list_namespaced_pod, core.delete_namespaced_pod, ()),
        ]
        if (cluster.handle or "").startswith("daskcluster/") or self.operator():
            group = (objects.OPERATOR_GROUP, objects.OPERATOR_VERSION)
            kinds.insert(
                0,
                (
                    "DaskClusters",
                    custom.list_namespaced_custom_object,
                    custom.delete_namespaced_custom_object,
                    group,
                ),
            )
        left = 0
        for what, lister, deleter, group in kinds:
            plural = (PLURAL,) if group else ()
            for item in self.api.items(
                f"list the cluster's {what}", lister, *group, ns, *plural, label_selector=sel
            ):
                if not ours(item, sel, terminating=True):
                    continue
                left += 1
                if (item.get("metadata") or {}).get("deletionTimestamp"):
                    continue  # being deleted
                with gone_already():
                    name = item["metadata"]["name"]
                    where = (*group, ns, *plural, name) if group else (name, ns)
                    self.api.raw(deleter, *where, body=foreground, what=f"delete {what}")
        return left
