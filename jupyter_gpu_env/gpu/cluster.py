"""Where the GPU panel reads a cluster's free and total GPUs and MIG slices: a :class:`CapacitySource`.
The Kubernetes one is its backend's (:mod:`..backends.kubernetes.capacity`); with none configured, the
panel says so.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

from ..models.cluster import ClusterCapacity


class NoCapacity:
    async def get(self) -> ClusterCapacity:
        return ClusterCapacity(
            available=False,
            message="No cluster is configured (c.GpuEnvApp.cluster_capacity = 'kubernetes' reads one).",
        )


class CapacitySource(Protocol):
    """Where the panel reads the cluster's free and total GPUs and MIG slices."""

    async def get(self) -> ClusterCapacity: ...


class BackendCapacity:
    """A backend's own reading (``Backend.capacity``, cached by the backend), shown as it is."""

    def __init__(self, read: Callable[[], Awaitable[ClusterCapacity]]) -> None:
        self._read = read

    async def get(self) -> ClusterCapacity:
        return await self._read()
