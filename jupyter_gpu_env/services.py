"""The services one server holds, built from configuration; handlers reach them through settings.

Operations that take longer than a request are started here as tasks, after the checks that can fail
fast (unknown source, name taken, managed target, missing tool) so that those are a 4xx answer to the
request itself rather than a task that fails a moment later.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .batch.service import JobService
from .envs.service import EnvironmentService
from .gpu.cluster import NoCapacity
from .gpu.envcheck import check_environment
from .gpu.sampler import Sampler
from .images.kernel import register_image_kernel, unregister_image_kernel
from .images.service import ImageService
from .models.envs import CloneRequest, KernelInfo, PackagesRequest
from .models.images import Image, ImageRequest
from .models.tasks import Task
from .tasks import TaskContext, TaskManager


@dataclass
class Services:
    sampler: Sampler
    tasks: TaskManager
    envs: EnvironmentService
    images: ImageService
    jobs: JobService
    image_kernel_container: str | None = None
    cluster: Any = None

    async def start_clone(self, req: CloneRequest) -> Task:
        source = await self.envs.check_clone(req.source, req.name)

        async def run(ctx: TaskContext):
            return await self.envs.clone(req.source, req.name, progress=ctx.progress, log=ctx.log)

        return self.tasks.start(
            "clone", f"Clone '{source}' as '{req.name}'", run, target=f"environments/{req.name}"
        )

    async def start_packages(self, name: str, req: PackagesRequest) -> Task:
        env = await self.envs.check_change(name)
        changes = [f"+{s}" for s in req.add] + [f"-{s}" for s in req.remove]

        async def run(ctx: TaskContext):
            return await self.envs.change_packages(
                env, req.add, req.remove, progress=ctx.progress, log=ctx.log
            )

        return self.tasks.start(
            "install", f"Change packages of '{env}': {' '.join(changes)}", run, target=f"environments/{env}"
        )

    async def _env_prefix(self, name: str) -> tuple[str, Path]:
        loc = await self.envs.catalog.resolve(name)
        return loc.name, loc.prefix

    async def cached_image(self, name: str, req: ImageRequest) -> Image | None:
        self.images.check_request(req)
        env, prefix = await self._env_prefix(name)
        return await self.images.cached(env, prefix, req)

    async def start_pack(self, name: str, req: ImageRequest) -> Task:
        env, prefix = await self._env_prefix(name)

        async def run(ctx: TaskContext):
            return await self.images.pack(env, prefix, req, ctx)

        return self.tasks.start(
            "pack", f"Pack '{env}' into a {req.format} image", run, target=f"images/{env}"
        )

    def __post_init__(self) -> None:
        self._started: asyncio.Task[None] | None = None
        if self.cluster is None:
            self.cluster = NoCapacity()

    async def start_gpu_check(self, name: str) -> Task:
        env, prefix = await self._env_prefix(name)

        async def run(ctx: TaskContext):
            ctx.progress(0.1, f"Running a GPU check with the Python of '{env}'")
            return await check_environment(prefix)

        return self.tasks.start(
            "gpu-check", f"Does '{env}' see the GPU?", run, target=f"environments/{env}/gpu"
        )

    async def release_gpu(self, kernel_manager: Any) -> list[str]:
        snap = self.sampler.latest()
        holders = [k.kernel_id for k in (snap.kernels if snap else []) if (k.gpu_memory_bytes or 0) > 0]
        running = set(kernel_manager.list_kernel_ids())
        done = []
        for kernel_id in holders:
            if kernel_id in running:
                await kernel_manager.shutdown_kernel(kernel_id)
                done.append(kernel_id)
        return done

    async def register_image_kernel(self, image_id: str, display_name: str | None) -> KernelInfo:
        image = await self.images.get(image_id)
        return await asyncio.to_thread(
            register_image_kernel, image, display_name=display_name, container=self.image_kernel_container
        )

    async def unregister_image_kernel(self, image_id: str) -> str:
        image = await self.images.get(image_id)
        return await asyncio.to_thread(unregister_image_kernel, image)

    async def start(self) -> None:
        """Clean what a crash left behind, reconcile jobs, start sampling. Idempotent.

        The server calls it once its loop runs; handlers call it too, so that an embedding that
        never runs extension start hooks (some test harnesses) still gets a working service.
        """
        if self._started is None:
            self._started = asyncio.ensure_future(self._start())
        await asyncio.shield(self._started)

    async def _start(self) -> None:
        await self.envs.cleanup_stale()
        await asyncio.to_thread(self.images.cleanup_stale)
        self.sampler.start()
        await self.jobs.start()

    async def stop(self) -> None:
        await self.tasks.stop()
        await self.jobs.stop()
        await self.sampler.stop()
