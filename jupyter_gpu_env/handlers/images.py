"""`images`, `images/{image_id}`, `images/{image_id}/download`."""

from __future__ import annotations

import asyncio
import os

from ..models.envs import KernelInfo, KernelRequest
from ..models.envs_api import KernelRemoved
from ..models.images import Image, ImageList
from .base import GpuEnvHandler, Param, operation

_CHUNK = 1 << 20


class ImagesHandler(GpuEnvHandler):
    @operation(
        "Packed images, newest first",
        response=ImageList,
        query=(Param("environment", {"type": "string"}, "Only images of this environment."),),
    )
    async def get(self) -> ImageList:
        return ImageList(images=await self.services.images.list(self.query_arg("environment")))


class ImageHandler(GpuEnvHandler):
    @operation("One image, with the command lines to use it", response=Image, errors=(404,))
    async def get(self, image_id: str) -> Image:
        return await self.services.images.get(image_id)

    @operation("Delete an image", response=Image, errors=(404,))
    async def delete(self, image_id: str) -> Image:
        image = await self.services.images.get(image_id)
        await self.services.images.delete(image_id)
        return image


class ImageDownloadHandler(GpuEnvHandler):
    @operation("Download the image file", errors=(404,), description="application/octet-stream, streamed.")
    async def get(self, image_id: str) -> None:
        image = await self.services.images.get(image_id)
        path = self.services.images.file_path(image)
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
        description="The kernel mounts the image with squashfuse (else binds it with apptainer) at start; "
        "409 when neither tool is available.",
    )
    async def post(self, image_id: str, body: KernelRequest) -> KernelInfo:
        return await self.services.register_image_kernel(image_id, body.display_name)

    @operation("Remove the image's kernel", response=KernelRemoved, errors=(404,))
    async def delete(self, image_id: str) -> KernelRemoved:
        return KernelRemoved(kernel_name=await self.services.unregister_image_kernel(image_id))
