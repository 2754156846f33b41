"""`gpu`: the container's memory and CPU, and the GPUs this server can see."""

from __future__ import annotations

from ..models import GpuSnapshot
from .base import GpuEnvHandler, operation


class GpuHandler(GpuEnvHandler):
    @operation(
        "The latest GPU and host-memory sample",
        response=GpuSnapshot,
        description="Served from the background sampler's cache: any number of callers cost one sample "
        "per interval. `gpus` is empty when no GPU is visible; `gpu_status` says why.",
    )
    async def get(self) -> bytes:
        return await self.services.sampler.snapshot_json()
