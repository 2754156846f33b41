"""`images`, `images/{image_id}`, `images/{image_id}/download`, `images/{image_id}/kernel`."""

from __future__ import annotations

import asyncio
import os

from ..models.envs import KernelInfo, KernelRequest
from ..models.envs.api import KernelRemoved
from ..models.images import Image, ImageList
from ..models.jobs import ENV_REF_PATTERN
from .base import GpuEnvHandler, Param, operation
from .environments import KERNELSPECS, SHUTDOWN

_CHUNK = 1 << 20


class ImagesHandler(GpuEnvHandler):
    @operation(
        "Packed images, newest first",
        response=ImageList,
        query=(
            Param(
                "environment",
                {"type": "string", "pattern": ENV_REF_PATTERN},
                "Only images of this environment.",
            ),
        ),
        errors=(400,),
    )
    async def get(self) -> ImageList:
        return ImageList(images=await self.services.images.list(self.query["environment"]))


class ImageHandler(GpuEnvHandler):
    @operation("One image, with the command lines to use it", response=Image, errors=(404,))
    async def get(self, image_id: str) -> Image:
        return await self.services.images.get(image_id)

    @operation(
        "Delete an image, its kernel and its mounts",
        response=Image,
        query=(SHUTDOWN,),
        errors=(400, 404, 409),
        permissions=KERNELSPECS,
        description="Removes the image's kernelspec and unmounts it where this server mounted it. 409 while "
        "kernels of this server run from it (the message names them) unless `shutdown_kernels` is true.",
    )
    async def delete(self, image_id: str) -> Image:
        if self.query["shutdown_kernels"]:
            await self.check_permissions((("write", "kernels"),))
        return await self.services.images.delete(image_id, shutdown_kernels=self.query["shutdown_kernels"])


class ImageDownloadHandler(GpuEnvHandler):
    @operation(
        "Download the image file",
        errors=(404,),
        response_content_type="application/octet-stream",
        description="The squashfs (or SIF) file, streamed.",
    )
    async def get(self, image_id: str) -> None:
        image, path = await self.services.images.file(image_id)
        self.set_header("Content-Type", "application/octet-stream")
        self.set_header("Content-Disposition", f'attachment; filename="{os.path.basename(path)}"')
        self.set_header("Content-Length", str(image.size_bytes))
        with open(path, "rb") as f:  # noqa: ASYNC230 - reads happen in a thread below
            while chunk := await asyncio.to_thread(f.read, _CHUNK):
                self.write(chunk)
                await self.flush()
        await self.finish()


class ImageKernelHandler(GpuEnvHandler):
    @operation(
        "Register a kernel that runs Python from the image",
        request=KernelRequest,
        response=KernelInfo,
        status=201,
        errors=(404, 409),
        permissions=KERNELSPECS,
        description="The kernel mounts the image with squashfuse (else binds it with apptainer) at start; "
        "409 when neither tool is available.",
    )
    async def post(self, image_id: str, body: KernelRequest) -> KernelInfo:
        return await self.services.images.register_kernel(image_id, body.display_name)

    @operation("Remove the image's kernel", response=KernelRemoved, errors=(404,), permissions=KERNELSPECS)
    async def delete(self, image_id: str) -> KernelRemoved:
        return KernelRemoved(kernel_name=await self.services.images.unregister_kernel(image_id))
