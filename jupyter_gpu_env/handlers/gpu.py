"""`gpu`: the container's memory and CPU, and the GPUs this server can see."""

from __future__ import annotations

from ..models import GpuHistory, GpuSnapshot
from ..models.cluster import ClusterCapacity
from ..models.gpu import ReleaseResult
from .base import GpuEnvHandler, Param, operation


class GpuHandler(GpuEnvHandler):
    @operation(
        "The latest GPU and host-memory sample",
        response=GpuSnapshot,
        description="Served from the background sampler's cache: any number of callers cost one sample "
        "per interval. `gpus` is empty when no GPU is visible; `gpu_status` says why.",
    )
    async def get(self) -> bytes:
        return await self.services.gpu.snapshot_json()


class GpuHistoryHandler(GpuEnvHandler):
    @operation(
        "Past samples, oldest first",
        response=GpuHistory,
        query=(
            Param(
                "seconds",
                {"type": "number", "exclusiveMinimum": 0, "maximum": 31536000},
                "Only the last N seconds.",
            ),
        ),
        errors=(400,),
        description="A ring buffer of `c.GpuEnvApp.gpu_history_seconds`; host memory, CPU and per-device "
        "GPU memory and utilization.",
    )
    async def get(self) -> GpuHistory:
        return self.services.gpu.history(self.query["seconds"])


class GpuReleaseHandler(GpuEnvHandler):
    @operation(
        "Shut down this server's kernels that hold GPU memory",
        response=ReleaseResult,
        permissions=(("write", "kernels"),),
        description="Frees the GPU for others (the idle warning's action). Only kernels whose processes hold "
        "GPU memory in the latest sample are shut down; their unsaved state is lost, so ask first. Needs "
        "Jupyter's `write` permission on kernels.",
    )
    async def post(self) -> ReleaseResult:
        return ReleaseResult(shut_down=await self.services.gpu.release())


class ClusterCapacityHandler(GpuEnvHandler):
    @operation(
        "Free and total GPUs and MIG slices per profile and GPU model in the cluster",
        response=ClusterCapacity,
        description="From node allocatable minus the requests of unfinished pods; cached. `available` is "
        "false (with a message) when no cluster is configured.",
    )
    async def get(self) -> ClusterCapacity:
        return await self.services.gpu.capacity()
