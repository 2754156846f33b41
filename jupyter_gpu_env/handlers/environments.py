"""`environments` and their sub-resources: list, clone or create from a file, change packages, publish,
delete (or unpublish), export, kernel, pack."""

from __future__ import annotations

from ..models.envs import (
    EnvironmentDetail,
    EnvironmentList,
    ExportResult,
    KernelInfo,
    KernelRequest,
    NewEnvironmentRequest,
    PublishRequest,
)
from ..models.envs.api import DeletedEnvironment, KernelRemoved
from ..models.envs.packages import EnvironmentHistory, PackageSearch, PackagesRequest
from ..models.images import Image, ImageRequest
from ..models.tasks import Task
from .base import GpuEnvHandler, Param, operation, starts_task

KERNELSPECS = (("write", "kernelspecs"),)
SHUTDOWN = Param(
    "shutdown_kernels",
    {"type": "boolean", "default": False},
    "Shut down this server's kernels running in it first (needs `write` on kernels); without it, running "
    "kernels make the request a 409 that names them.",
)


class EnvironmentsHandler(GpuEnvHandler):
    @operation("Managed and own environments", response=EnvironmentList)
    async def get(self) -> EnvironmentList:
        return await self.services.environments.list()

    @starts_task(
        "Make a new environment of the user's: a clone, or from a file",
        request=NewEnvironmentRequest,
        errors=(403, 404, 409),
        description="With `source`, a clone: packages are hard-linked from the package cache, untracked files "
        "(pip installs, user files) copied with the prefix rewritten; the task's result is a CloneResult. "
        "With `from_file`, the packages an environment.yml, requirements.txt or explicit lock under the "
        "server's root names are installed (conda first, then PyPI); the task's result is a CreateResult, "
        "or with `dry_run` a PackagesPlan and nothing is made. Either is built aside and appears only when "
        "complete. 400 names what is wrong in the file and where; 403 for a file outside the root; 409 when "
        "the name is taken or being made by another request.",
    )
    async def post(self, body: NewEnvironmentRequest) -> Task:
        return await self.services.environments.start_new(body)


class PublishHandler(GpuEnvHandler):
    @starts_task(
        "Share one of the user's environments with the team",
        request=PublishRequest,
        errors=(403, 404, 409),
        description="A copy is built in the shared folder (`c.GpuEnvApp.shared_env_dirs`), read-only for "
        "everyone but its owner, and listed to teammates as `shared`, with the owner and the description; "
        "they clone it like a managed one. The task's result is a PublishResult. 403 when the server has "
        "no shared folder or the environment is not the user's; 409 when the shared name is taken. "
        "Unpublish with `DELETE environments/{name}` on the shared environment.",
    )
    async def post(self, name: str, body: PublishRequest) -> Task:
        return await self.services.environments.start_publish(name, body)


class EnvironmentHandler(GpuEnvHandler):
    @operation("One environment with its packages", response=EnvironmentDetail, errors=(404,))
    async def get(self, name: str) -> EnvironmentDetail:
        return await self.services.environments.get(name)

    @operation(
        "Delete one of the user's environments (and its kernel)",
        response=DeletedEnvironment,
        query=(SHUTDOWN,),
        errors=(400, 403, 404, 409),
        permissions=KERNELSPECS,
        description="403 for a managed environment; 409 while another operation works on it, or while "
        "kernels of this server run in it (the message names them) unless `shutdown_kernels` is true.",
    )
    async def delete(self, name: str) -> DeletedEnvironment:
        if self.query["shutdown_kernels"]:
            await self.check_permissions((("write", "kernels"),))
        return await self.services.environments.delete(name, shutdown_kernels=self.query["shutdown_kernels"])


class PackagesHandler(GpuEnvHandler):
    @starts_task(
        "Add or remove packages (conda and PyPI) in one of the user's environments, or plan it",
        request=PackagesRequest,
        errors=(403, 404, 409),
        description="Conda packages are solved against the configured channels, then PyPI packages are "
        "installed with the environment's interpreter; all of it built aside and swapped in whole: the "
        "environment is never half-changed, whatever happens meanwhile. The task's result is a "
        "PackagesResult; with `dry_run`, a PackagesPlan, and nothing changes.",
    )
    async def post(self, name: str, body: PackagesRequest) -> Task:
        return await self.services.environments.start_packages(name, body)


class PackageSearchHandler(GpuEnvHandler):
    @operation(
        "Packages that exist, to add: conda by part of the name, PyPI by exact name",
        response=PackageSearch,
        query=(
            Param(
                "q",
                {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$"},
                "Part of a conda package's name, or a PyPI package's exact name.",
                required=True,
            ),
            Param(
                "kind", {"type": "string", "enum": ["conda", "pypi"], "default": "conda"}, "Where to look."
            ),
            Param(
                "limit",
                {"type": "integer", "minimum": 1, "maximum": 50, "default": 20},
                "How many conda names.",
            ),
        ),
        errors=(400, 503),
        description="Conda: the configured channels' names holding `q` (the exact one first, then those "
        "starting with it), each with its newest versions, from repodata cached on disk. PyPI: the "
        "versions of the project named `q` on the configured index and wheel folders (an index offers "
        "no search), or none. 503 when a channel or the index cannot be reached.",
    )
    async def get(self) -> PackageSearch:
        return await self.services.environments.search(
            self.query["q"], self.query["kind"], self.query["limit"]
        )


class HistoryHandler(GpuEnvHandler):
    @operation(
        "The changes an environment holds, and what undo would do",
        response=EnvironmentHistory,
        errors=(404,),
        description="Newest first. `undo` is null for a managed environment or when no earlier state is kept.",
    )
    async def get(self, name: str) -> EnvironmentHistory:
        return await self.services.environments.history(name)


class UndoHandler(GpuEnvHandler):
    @starts_task(
        "Undo the last change of one of the user's environments",
        errors=(403, 404, 409),
        description="Swaps the state kept before the last change back in, in one rename: running kernels "
        "keep working until restarted. Undoing again redoes the change. 409 `nothing_to_undo` when no "
        "earlier state is kept. The task's result is an UndoResult.",
    )
    async def post(self, name: str) -> Task:
        return await self.services.environments.start_undo(name)


class KernelHandler(GpuEnvHandler):
    @operation(
        "Register the environment as a Jupyter kernel",
        request=KernelRequest,
        response=KernelInfo,
        status=201,
        errors=(404, 409),
        permissions=KERNELSPECS,
        description="409 when the environment has no ipykernel; the message says how to add it. Needs "
        "Jupyter's `write` permission on kernelspecs.",
    )
    async def post(self, name: str, body: KernelRequest) -> KernelInfo:
        return await self.services.environments.register_kernel(name, body.display_name)

    @operation(
        "Remove the environment's kernel", response=KernelRemoved, errors=(404,), permissions=KERNELSPECS
    )
    async def delete(self, name: str) -> KernelRemoved:
        return KernelRemoved(kernel_name=await self.services.environments.unregister_kernel(name))


class ExportHandler(GpuEnvHandler):
    @operation(
        "Export an environment as environment.yml or an explicit lock",
        response=ExportResult,
        query=(
            Param("format", {"type": "string", "enum": ["yaml", "explicit"], "default": "yaml"}, "The form."),
        ),
        errors=(400, 404),
    )
    async def get(self, name: str) -> ExportResult:
        return await self.services.environments.export(name, self.query["format"])


class ImageBuildHandler(GpuEnvHandler):
    @starts_task(
        "Pack the environment into one squashfs (or SIF) image",
        request=ImageRequest,
        errors=(404, 409),
        also=((200, Image),),
        description="Answers 200 with the existing Image at once when an image of identical content exists; "
        "else 202 and a task whose result is the Image. Requests for an image being packed answer the same "
        "task. SIF needs apptainer on the server (409 otherwise).",
    )
    async def post(self, name: str, body: ImageRequest) -> Task | Image:
        started = await self.services.images.pack(name, body)
        if isinstance(started, Image):
            self.override_status(200)
        return started


class GpuCheckHandler(GpuEnvHandler):
    @starts_task(
        "Check whether the environment sees the GPU",
        errors=(404, 409),
        permissions=(("execute", "kernels"),),
        description="Runs the environment's own Python: loads the CUDA driver library, counts devices, and "
        "computes with torch or cupy where installed. The task's result is a GpuCheck. Running code needs "
        "Jupyter's `execute` permission on kernels.",
    )
    async def post(self, name: str) -> Task:
        return await self.services.environments.start_gpu_check(name)
