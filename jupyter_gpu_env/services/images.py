"""The server's verbs on images: packing as a task (one per image at a time, a few at once), and what
a kernel started from an image needs (its kernelspec, its mount) kept in step with the image."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

from .. import kernelspecs
from ..envs.service import EnvironmentService
from ..errors import Conflict
from ..images import mounts, runtime
from ..images.service import ImageService
from ..models.envs import KernelInfo
from ..models.images import Image, ImageRequest
from ..models.tasks import Task
from ..tasks import TaskContext, TaskManager
from .kernels import ServerKernels


@dataclass
class ImageOperations:
    """``images`` packs and keeps them; ``envs`` names what is packed; ``container`` is the container
    runtime a kernel from an image runs in (None: squashfuse or apptainer, whichever is here)."""

    images: ImageService
    envs: EnvironmentService
    tasks: TaskManager
    kernels: ServerKernels
    container: str | None = None
    max_packs: int = 2
    _answers: dict[str, asyncio.Future[Task | Image]] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self._packs = asyncio.Semaphore(max(1, self.max_packs))

    async def list(self, environment: str | None) -> list[Image]:
        return await self.images.list(environment)

    async def get(self, image_id: str) -> Image:
        return await self.images.get(image_id)

    async def file(self, image_id: str) -> tuple[Image, Path]:
        """The image and the file that holds it, for a download."""
        image = await self.images.get(image_id)
        return image, self.images.file_path(image)

    async def pack(self, name: str, req: ImageRequest) -> Task | Image:
        """The existing image of identical content, else the task packing it (one per image at a time).

        Concurrent requests for the same image share one answer: one read of the environment (the
        content hash a cached image is found by), then one task.
        """
        self.images.check_request(req)
        loc = await self.envs.resolve(name)
        key = f"pack:{loc.prefix}:{req.format}:{req.compression}"
        if (packing := self.tasks.unfinished(key)) is not None:
            return packing
        answer = self._answers.get(key)
        if answer is None:
            answer = asyncio.ensure_future(self._cached_or_packing(loc.name, loc.prefix, req, key))
            self._answers[key] = answer
            answer.add_done_callback(lambda _: self._answers.pop(key, None))
        return await asyncio.shield(answer)

    async def _cached_or_packing(self, env: str, prefix: Path, req: ImageRequest, key: str) -> Task | Image:
        cached = await self.images.cached(env, prefix, req)
        if cached is not None:
            return cached
        if self.envs.busy(env):
            raise Conflict(f"'{env}' is being changed right now; pack it when that ends.", reason="busy")

        async def run(ctx: TaskContext) -> Image:
            ctx.progress(0.0, "Waiting for a free packing slot")
            async with self._packs:
                return await self.images.pack(env, prefix, req, ctx.progress)

        return self.tasks.start(
            "pack", f"Pack '{env}' into a {req.format} image", run, target=f"images/{env}", key=key
        )

    async def delete(self, image_id: str, *, shutdown_kernels: bool = False) -> Image:
        """Delete an image with its kernelspec and its mount; 409 while this server's kernels run from it."""
        image = await self.images.get(image_id)
        mount = mounts.mount_root() / image.id
        kernel = kernelspecs.image_kernel_name(image)
        await self.kernels.clear(mount, {kernel}, shutdown_kernels, f"image '{image.id}'")
        await asyncio.to_thread(kernelspecs.unregister_image, image, missing_ok=True)
        await mounts.unmount(mount, lazy=True)
        await self.images.delete(image_id)
        return image

    async def register_kernel(self, image_id: str, display_name: str | None) -> KernelInfo:
        image = await self.images.get(image_id)
        tool = runtime.for_kernels(self.container)
        # squashfuse mounts it under this server's mount root; apptainer binds it where packs expect it
        mount = mounts.mount_root() / image.id if tool == "squashfuse" else Path(image.usage.mount_path)
        return await asyncio.to_thread(
            kernelspecs.register_image,
            image,
            tool=tool,
            mount=mount,
            display_name=display_name,
            container=self.container,
        )

    async def unregister_kernel(self, image_id: str) -> str:
        image = await self.images.get(image_id)
        return await asyncio.to_thread(kernelspecs.unregister_image, image)
