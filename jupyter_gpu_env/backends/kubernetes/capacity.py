"""Cluster capacity: free and total GPUs and MIG slices per profile and GPU model.

``capacity()`` is a pure function over Kubernetes Node and Pod objects as the API returns them (plain
dicts, camelCase), so it is tested without a cluster. ``KubernetesCapacity`` reads them through the
client module the Kubernetes backend uses too (:mod:`jupyter_gpu_env.backends.kubernetes.api.client`), in a worker thread
(the client is synchronous), and caches the answer: one list of nodes and pods per ``ttl`` seconds,
whatever the number of open panels.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from ...models.cluster import CapacityRow, ClusterCapacity
from .api.client import KubeApi

GPU = "nvidia.com/gpu"
MIG_PREFIX = "nvidia.com/mig-"
_FINISHED = {"Succeeded", "Failed"}


def _count(value: Any) -> int:
    try:
        return int(math.floor(float(str(value))))
    except ValueError:
        return 0


def gpu_resources(resources: dict[str, Any] | None) -> dict[str, int]:
    return {k: _count(v) for k, v in (resources or {}).items() if k == GPU or k.startswith(MIG_PREFIX)}


def allocatable_from_labels(labels: dict[str, str]) -> dict[str, int]:
    """What GPU feature discovery labels say a node offers (when allocatable is not at hand)."""
    out = {}
    for key, value in labels.items():
        if key.startswith(MIG_PREFIX) and key.endswith(".count"):
            out[key.removesuffix(".count")] = _count(value)
    if not out and labels.get("nvidia.com/gpu.count"):
        out[GPU] = _count(labels["nvidia.com/gpu.count"])
    return out


def _pod_requests(pod: dict[str, Any]) -> dict[str, int]:
    """Extended resources must have requests == limits; take limits where requests are missing."""
    total: dict[str, int] = defaultdict(int)
    spec = pod.get("spec") or {}
    for c in spec.get("containers") or []:
        res = c.get("resources") or {}
        asked = gpu_resources(res.get("requests")) or gpu_resources(res.get("limits"))
        for k, v in asked.items():
            total[k] += v
    # Init containers run before the others, so a pod holds the larger of the two.
    for c in spec.get("initContainers") or []:
        res = c.get("resources") or {}
        for k, v in (gpu_resources(res.get("requests")) or gpu_resources(res.get("limits"))).items():
            total[k] = max(total[k], v)
    return dict(total)


def capacity(nodes: Iterable[dict[str, Any]], pods: Iterable[dict[str, Any]]) -> list[CapacityRow]:
    by_node: dict[str, tuple[str, dict[str, int]]] = {}
    for node in nodes:
        meta, spec, status = node.get("metadata") or {}, node.get("spec") or {}, node.get("status") or {}
        if spec.get("unschedulable"):
            continue
        labels = meta.get("labels") or {}
        offered = gpu_resources(status.get("allocatable")) or allocatable_from_labels(labels)
        if offered:
            model = labels.get("nvidia.com/gpu.product", "unknown GPU")
            by_node[meta.get("name", "")] = (model, offered)
    used: dict[tuple[str, str], int] = defaultdict(int)
    for pod in pods:
        node_name = (pod.get("spec") or {}).get("nodeName")
        if node_name not in by_node or (pod.get("status") or {}).get("phase") in _FINISHED:
            continue
        model = by_node[node_name][0]
        for k, v in _pod_requests(pod).items():
            used[(model, k)] += v
    totals: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for model, offered in by_node.values():
        for k, v in offered.items():
            totals[(model, k)][0] += v
            totals[(model, k)][1] += 1
    rows = []
    for (model, resource), (total, n_nodes) in sorted(totals.items()):
        taken = min(used.get((model, resource), 0), total)
        rows.append(
            CapacityRow(
                resource=resource,
                profile=resource.removeprefix(MIG_PREFIX) if resource.startswith(MIG_PREFIX) else None,
                gpu_model=model,
                total=total,
                used=taken,
                free=total - taken,
                nodes=n_nodes,
            )
        )
    return rows


class KubernetesCapacity:
    """Reads nodes and unfinished pods through a :class:`KubeApi` (the configuration the Kubernetes backend
    uses: c.KubernetesBackend.kubeconfig and context), cached for ``ttl`` seconds."""

    def __init__(self, ttl: float = 30.0, api: KubeApi | None = None) -> None:
        self.ttl = ttl
        self.api = api
        self._cached: ClusterCapacity | None = None
        self._lock = asyncio.Lock()

    def _read(self) -> ClusterCapacity:
        try:
            from kubernetes import client
        except ImportError:
            return ClusterCapacity(
                available=False,
                message="The kubernetes Python client is not installed (pip install 'jupyter-gpu-env[kubernetes]').",
            )
        api = self.api = self.api or KubeApi()
        try:
            core = client.CoreV1Api(api.client())
            nodes = api.items("list nodes", core.list_node)
            pods = api.items(
                "list pods",
                core.list_pod_for_all_namespaces,
                field_selector="status.phase!=Succeeded,status.phase!=Failed",
            )
        except Exception as e:  # any API or configuration failure is shown, not raised
            return ClusterCapacity(available=False, message=f"Cluster capacity could not be read: {e}")
        return ClusterCapacity(available=True, rows=capacity(nodes, pods), read_at=time.time())

    async def get(self) -> ClusterCapacity:
        async with self._lock:
            if self._cached is None or time.time() - (self._cached.read_at or 0) > self.ttl:
                self._cached = await asyncio.to_thread(self._read)
            return self._cached


def capacity_source(ttl: float, kube_config: Mapping[str, Any]) -> KubernetesCapacity:
    """What the GPU panel reads with ``c.GpuEnvApp.cluster_capacity = 'kubernetes'``; ``kube_config`` is
    the Kubernetes backend's section (its kubeconfig and context), so the panel reads the cluster the
    backend talks to."""
    api = KubeApi(str(kube_config.get("kubeconfig", "")), str(kube_config.get("context", "")))
    return KubernetesCapacity(ttl, api)
