"""The server's verbs on GPUs: the sampler's cached readings, the cluster's capacity, and releasing what
this server's kernels hold."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..gpu.cluster import CapacitySource, NoCapacity
from ..gpu.sampler import Sampler
from ..models.cluster import ClusterCapacity
from ..models.gpu import GpuHistory
from .kernels import ServerKernels


@dataclass
class GpuOperations:
    sampler: Sampler
    kernels: ServerKernels
    cluster: CapacitySource = field(default_factory=NoCapacity)

    async def snapshot_json(self) -> bytes:
        """The latest sample, serialized once for every caller."""
        return await self.sampler.snapshot_json()

    def history(self, seconds: float | None) -> GpuHistory:
        return self.sampler.history_points(seconds)

    async def capacity(self) -> ClusterCapacity:
        return await self.cluster.get()

    async def release(self) -> list[str]:
        """Shut down this server's kernels that hold GPU memory in the latest sample; their ids."""
        snap = self.sampler.latest()
        holders = [k.kernel_id for k in (snap.kernels if snap else []) if (k.gpu_memory_bytes or 0) > 0]
        running = self.kernels.running_ids()
        done = []
        for kernel_id in holders:
            if kernel_id in running:
                await self.kernels.shutdown(kernel_id)
                done.append(kernel_id)
        return done
