"""The services one server holds, built from configuration; handlers reach them through settings.

Operations that take longer than a request are started here as tasks, after the checks that can fail
fast (unknown source, name taken or being made, managed target, missing tool), so that those are a
4xx answer to the request itself rather than a task that fails a moment later. Work that many
requests may ask for at once is bounded here: one task per image being packed, a few GPU checks and
packs running at a time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import kernelspecs
from .batch.service import JobService
from .envs.changing import Change
from .envs.service import EnvironmentService
from .errors import Conflict
from .gpu.cluster import NoCapacity
from .gpu.envcheck import check_environment
from .gpu.kernel_processes import RunningKernel, describe_kernels, running_in
from .gpu.sampler import Sampler
from .images import mounts, runtime
from .images.service import ImageService
from .models.envs import (
    CloneResult,
    CreateResult,
    KernelInfo,
    NewEnvironmentRequest,
    PackagesResult,
    PublishRequest,
    PublishResult,
    UndoResult,
)
from .models.envs.api import DeletedEnvironment
from .models.envs.packages import PackagesPlan, PackagesRequest
from .models.gpu import GpuCheck
from .models.images import Image, ImageRequest
from .models.tasks import Task
from .tasks import TaskContext, TaskManager

KernelLister = Callable[[], Awaitable[list[RunningKernel]]]


async def _no_kernels() -> list[RunningKernel]:
    return []


@dataclass
class Services:
    sampler: Sampler
    tasks: TaskManager
    envs: EnvironmentService
    images: ImageService
    jobs: JobService
    image_kernel_container: str | None = None
    cluster: Any = None
    kernels: KernelLister = _no_kernels
    kernel_manager: Any = None
    max_gpu_checks: int = 4
    max_packs: int = 2
    _started: asyncio.Task[None] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.cluster is None:
            self.cluster = NoCapacity()
        self._gpu_checks = asyncio.Semaphore(max(1, self.max_gpu_checks))
        self._packs = asyncio.Semaphore(max(1, self.max_packs))
        self._pack_answers: dict[str, asyncio.Future[Task | Image]] = {}

    # -- environments ---------------------------------------------------------------------------

    async def start_new(self, req: NewEnvironmentRequest) -> Task:
        """A clone of ``req.source``, or an environment made (or planned) from ``req.from_file``."""
        if req.from_file is not None:
            return await self._start_from_file(req.name, req.from_file, req.dry_run)
        assert req.source is not None  # the model requires one of the two
        change = await self.envs.making(req.name, req.source)
        source = change.source.name if change.source else req.source

        async def run(ctx: TaskContext) -> CloneResult:
            return await self.envs.clone(change, report=ctx)

        return self._start_changing(change, "clone", f"Clone '{source}' as '{req.name}'", run)

    async def _start_from_file(self, name: str, from_file: str, dry_run: bool) -> Task:
        # A missing or malformed file is the request's 4xx, not the task's.
        await self.envs.check_file(from_file)
        if dry_run:

            async def plan(ctx: TaskContext) -> PackagesPlan:
                return await self.envs.plan_from_file(name, from_file, progress=ctx.progress)

            return self.tasks.start(
                "plan", f"Plan '{name}' from {from_file}", plan, target=f"environments/{name}"
            )
        change = await self.envs.making(name)

        async def run(ctx: TaskContext) -> CreateResult:
            return await self.envs.create_from_file(change, from_file, report=ctx, change_id=ctx.task_id)

        return self._start_changing(change, "create", f"Create '{name}' from {from_file}", run)

    async def start_publish(self, name: str, req: PublishRequest) -> Task:
        change = await self.envs.publishing(name, req.name)
        shared = change.target.name if change.target else change.name

        async def run(ctx: TaskContext) -> PublishResult:
            env = await self.envs.publish(change, req, report=ctx)
            return PublishResult(environment=env)

        return self._start_changing(
            change, "publish", f"Share '{change.name}' with the team as '{shared}'", run
        )

    async def start_packages(self, name: str, req: PackagesRequest) -> Task:
        changes = [f"+{s}" for s in req.add] + [f"-{s}" for s in req.remove]
        changes += [f"+pip:{s}" for s in req.pip_add] + [f"-pip:{s}" for s in req.pip_remove]
        if req.dry_run:
            loc = await self.envs.own(name, "changed")

            async def plan(ctx: TaskContext) -> PackagesPlan:
                return await self.envs.plan_packages(
                    loc.name, req.add, req.remove, pip_add=req.pip_add, pip_remove=req.pip_remove,
                    progress=ctx.progress,
                )  # fmt: skip

            title = f"Plan a change of '{loc.name}': {' '.join(changes)}"
            return self.tasks.start("plan", title, plan, target=f"environments/{loc.name}")
        change = await self.envs.changing(name)

        async def run(ctx: TaskContext) -> PackagesResult:
            return await self.envs.change_packages(
                change, req.add, req.remove, pip_add=req.pip_add, pip_remove=req.pip_remove,
                report=ctx, change_id=ctx.task_id,
            )  # fmt: skip

        title = f"Change packages of '{change.name}': {' '.join(changes)}"
        return self._start_changing(change, "install", title, run)

    async def start_undo(self, name: str) -> Task:
        change = await self.envs.undoing(name)

        async def run(ctx: TaskContext) -> UndoResult:
            ctx.progress(0.5, "Swapping the earlier state back in")
            return await self.envs.undo(change, change_id=ctx.task_id)

        return self._start_changing(change, "undo", f"Undo the last change of '{change.name}'", run)

    def _start_changing(
        self, change: Change, kind: str, title: str, run: Callable[[TaskContext], Awaitable[Any]]
    ) -> Task:
        """Start a task that owns ``change``; the change is released if the task never gets to run."""
        try:
            return self.tasks.start(
                kind, title, run, target=f"environments/{change.name}", on_done=change.release
            )
        except BaseException:
            change.release()
            raise

    async def delete_environment(self, name: str, *, shutdown_kernels: bool = False) -> DeletedEnvironment:
        """Delete one of the user's environments; 409 while this server's kernels run in it.

        With ``shutdown_kernels`` they are shut down first. Nothing is stranded: the kernelspec goes
        with the environment, and no kernel is left running from a folder that no longer exists.
        """
        loc = await self.envs.resolve(name)
        if loc.kind == "shared":
            await self.envs.unpublish(loc)
            return DeletedEnvironment(name=loc.name, kernel_removed=None)
        async with self.envs.changing(loc, "deleted") as change:
            spec = await asyncio.to_thread(self.envs.kernel_name, change.prefix)
            await self._stop_kernels(
                change.prefix, {spec} if spec else set(), shutdown_kernels, f"'{loc.name}'"
            )
            kernel = await self.envs.delete(change)
        return DeletedEnvironment(name=loc.name, kernel_removed=kernel)

    async def _stop_kernels(self, prefix: Path, spec_names: set[str], shutdown: bool, what: str) -> None:
        running = await asyncio.to_thread(running_in, await self.kernels(), prefix, spec_names)
        if not running:
            return
        if not shutdown:
            raise Conflict(
                f"{describe_kernels(running)} of this server run in {what}. Shut "
                f"{'it' if len(running) == 1 else 'them'} down first, or ask to shut them down and delete.",
                reason="kernels_running",
                details=[
                    {"kernel_id": k.kernel_id, "name": k.name, "notebook_path": k.notebook_path}
                    for k in running
                ],
            )
        for k in running:
            await self.kernel_manager.shutdown_kernel(k.kernel_id)

    # -- images ---------------------------------------------------------------------------------

    async def _env_prefix(self, name: str) -> tuple[str, Path]:
        loc = await self.envs.resolve(name)
        return loc.name, loc.prefix

    async def pack(self, name: str, req: ImageRequest) -> Task | Image:
        """The existing image of identical content, else the task packing it (one per image at a time).

        Concurrent requests for the same image share one answer: one read of the environment (the
        content hash a cached image is found by), then one task.
        """
        self.images.check_request(req)
        env, prefix = await self._env_prefix(name)
        key = f"pack:{prefix}:{req.format}:{req.compression}"
        if (packing := self.tasks.unfinished(key)) is not None:
            return packing
        answer = self._pack_answers.get(key)
        if answer is None:
            answer = asyncio.ensure_future(self._cached_or_packing(env, prefix, req, key))
            self._pack_answers[key] = answer
            answer.add_done_callback(lambda _: self._pack_answers.pop(key, None))
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
            "pack",
            f"Pack '{env}' into a {req.format} image",
            run,
            target=f"images/{env}",
            key=key,
        )

    async def delete_image(self, image_id: str, *, shutdown_kernels: bool = False) -> Image:
        """Delete an image with its kernelspec and its mount; 409 while this server's kernels run from it."""
        image = await self.images.get(image_id)
        mount = mounts.mount_root() / image.id
        kernel = kernelspecs.image_kernel_name(image)
        await self._stop_kernels(mount, {kernel}, shutdown_kernels, f"image '{image.id}'")
        await asyncio.to_thread(kernelspecs.unregister_image, image, missing_ok=True)
        await mounts.unmount(mount, lazy=True)
        await self.images.delete(image_id)
        return image

    async def register_image_kernel(self, image_id: str, display_name: str | None) -> KernelInfo:
        image = await self.images.get(image_id)
        tool = runtime.for_kernels(self.image_kernel_container)
        # squashfuse mounts it under this server's mount root; apptainer binds it where packs expect it
        mount = mounts.mount_root() / image.id if tool == "squashfuse" else Path(image.usage.mount_path)
        return await asyncio.to_thread(
            kernelspecs.register_image,
            image,
            tool=tool,
            mount=mount,
            display_name=display_name,
            container=self.image_kernel_container,
        )

    async def unregister_image_kernel(self, image_id: str) -> str:
        image = await self.images.get(image_id)
        return await asyncio.to_thread(kernelspecs.unregister_image, image)

    # -- GPU ------------------------------------------------------------------------------------

    async def start_gpu_check(self, name: str) -> Task:
        env, prefix = await self._env_prefix(name)

        async def run(ctx: TaskContext) -> GpuCheck:
            ctx.progress(0.05, "Waiting for a free slot")
            async with self._gpu_checks:
                ctx.progress(0.1, f"Running a GPU check with the Python of '{env}'")
                return await check_environment(prefix)

        return self.tasks.start(
            "gpu-check",
            f"Does '{env}' see the GPU?",
            run,
            target=f"environments/{env}/gpu",
            key=f"gpu-check:{prefix}",
        )

    async def release_gpu(self) -> list[str]:
        snap = self.sampler.latest()
        holders = [k.kernel_id for k in (snap.kernels if snap else []) if (k.gpu_memory_bytes or 0) > 0]
        running = set(self.kernel_manager.list_kernel_ids())
        done = []
        for kernel_id in holders:
            if kernel_id in running:
                await self.kernel_manager.shutdown_kernel(kernel_id)
                done.append(kernel_id)
        return done

    # -- lifetime -------------------------------------------------------------------------------

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
        await mounts.sweep()
        self.sampler.start()
        await self.jobs.start()
        await self.envs.warm_up()
        await self.images.warm_up()

    async def stop(self) -> None:
        await self.tasks.stop()
        await self.envs.close()
        await self.images.close()
        await self.jobs.stop()
        await self.sampler.stop()
        await mounts.unmount_all()
