"""`environments` and their sub-resources: list, clone, change packages, delete, export, kernel, pack."""

from __future__ import annotations

from ..errors import InvalidRequest
from ..models.envs import (
    CloneRequest,
    EnvironmentDetail,
    EnvironmentList,
    ExportFormat,
    ExportResult,
    KernelInfo,
    KernelRequest,
    PackagesRequest,
)
from ..models.envs_api import DeletedEnvironment, KernelRemoved
from ..models.images import Image, ImageRequest
from ..models.tasks import Task
from .base import GpuEnvHandler, Param, operation


class TaskStartingHandler(GpuEnvHandler):
    def accepted(self, task: Task) -> Task:
        """202 with the task's base_url-aware Location: the caller polls it (or DELETEs it to cancel)."""
        self.set_header("Location", self.api_url("tasks", task.id))
        return task


class EnvironmentsHandler(TaskStartingHandler):
    @operation("Managed and own environments", response=EnvironmentList)
    async def get(self) -> EnvironmentList:
        return EnvironmentList(environments=await self.services.envs.list())

    @operation(
        "Clone an environment into the user's area",
        request=CloneRequest,
        response=Task,
        status=202,
        errors=(404, 409),
        description="Packages are hard-linked from the package cache, untracked files (pip installs, user "
        "files) copied with the prefix rewritten; the clone is built aside and appears only when complete. "
        "The task's result is a CloneResult.",
    )
    async def post(self, body: CloneRequest) -> Task:
        return self.accepted(await self.services.start_clone(body))


class EnvironmentHandler(GpuEnvHandler):
    @operation("One environment with its packages", response=EnvironmentDetail, errors=(404,))
    async def get(self, name: str) -> EnvironmentDetail:
        return await self.services.envs.get(name)

    @operation(
        "Delete one of the user's environments (and its kernel)",
        response=DeletedEnvironment,
        errors=(403, 404, 409),
    )
    async def delete(self, name: str) -> DeletedEnvironment:
        kernel = await self.services.envs.delete(name)
        return DeletedEnvironment(name=name, kernel_removed=kernel)


class PackagesHandler(TaskStartingHandler):
    @operation(
        "Add or remove packages in one of the user's environments",
        request=PackagesRequest,
        response=Task,
        status=202,
        errors=(403, 404, 409),
        description="Solved against the configured channels; the task's result is a PackagesResult.",
    )
    async def post(self, name: str, body: PackagesRequest) -> Task:
        return self.accepted(await self.services.start_packages(name, body))


class KernelHandler(GpuEnvHandler):
    @operation(
        "Register the environment as a Jupyter kernel",
        request=KernelRequest,
        response=KernelInfo,
        status=201,
        errors=(404, 409),
        description="409 when the environment has no ipykernel; the message says how to add it.",
    )
    async def post(self, name: str, body: KernelRequest) -> KernelInfo:
        return await self.services.envs.register_kernel(name, body.display_name)

    @operation("Remove the environment's kernel", response=KernelRemoved, errors=(404,))
    async def delete(self, name: str) -> KernelRemoved:
        return KernelRemoved(kernel_name=await self.services.envs.unregister_kernel(name))


class ExportHandler(GpuEnvHandler):
    @operation(
        "Export an environment as environment.yml or an explicit lock",
        response=ExportResult,
        query=(Param("format", {"type": "string", "enum": ["yaml", "explicit"]}, "Default `yaml`."),),
        errors=(400, 404),
    )
    async def get(self, name: str) -> ExportResult:
        fmt = self.query_arg("format", "yaml")
        if fmt not in ExportFormat.__members__:
            raise InvalidRequest(f"format must be 'yaml' or 'explicit', not '{fmt}'.")
        return await self.services.envs.export(name, fmt)


class ImageBuildHandler(TaskStartingHandler):
    @operation(
        "Pack the environment into one squashfs (or SIF) image",
        request=ImageRequest,
        response=Task,
        status=202,
        errors=(404, 409),
        also=((200, Image),),
        description="Answers 200 with the existing Image at once when an image of identical content exists; "
        "else 202 and a task whose result is the Image. SIF needs apptainer on the server (409 otherwise).",
    )
    async def post(self, name: str, body: ImageRequest) -> Task | Image:
        cached = await self.services.cached_image(name, body)
        if cached is not None:
            self.override_status(200)
            return cached
        return self.accepted(await self.services.start_pack(name, body))


class GpuCheckHandler(TaskStartingHandler):
    @operation(
        "Check whether the environment sees the GPU",
        response=Task,
        status=202,
        errors=(404, 409),
        description="Runs the environment's own Python: loads the CUDA driver library, counts devices, and "
        "computes with torch or cupy where installed. The task's result is a GpuCheck.",
    )
    async def post(self, name: str) -> Task:
        return self.accepted(await self.services.start_gpu_check(name))
