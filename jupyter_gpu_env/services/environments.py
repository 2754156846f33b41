"""The server's verbs on environments: reads answered at once, long operations started as tasks.

A long operation is started only after the checks that can fail fast (unknown source, name taken or
being made, managed target, missing tool, nothing to undo), so that those are a 4xx answer to the
request itself rather than a task that fails a moment later. The change handle claimed for it is
handed to the task, which releases it when it ends (or at once, if the task never starts).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..envs.changing import Change
from ..envs.service import EnvironmentService
from ..gpu.envcheck import check_environment
from ..models.envs import (
    CloneResult,
    CreateResult,
    EnvironmentDetail,
    EnvironmentList,
    ExportFormat,
    ExportResult,
    KernelInfo,
    NewEnvironmentRequest,
    PackagesResult,
    PublishRequest,
    PublishResult,
    UndoResult,
)
from ..models.envs.api import DeletedEnvironment
from ..models.envs.packages import (
    EnvironmentHistory,
    PackageKind,
    PackageSearch,
    PackagesPlan,
    PackagesRequest,
)
from ..models.gpu import GpuCheck
from ..models.tasks import Task
from ..tasks import TaskContext, TaskManager
from .kernels import ServerKernels


@dataclass
class EnvironmentOperations:
    """``envs`` does the work; ``tasks`` runs what outlasts a request; ``kernels`` are this server's
    (none may run in an environment being deleted); at most ``max_gpu_checks`` GPU checks and
    ``max_plans`` plans (a solver each) run at once, the others waiting their turn."""

    envs: EnvironmentService
    tasks: TaskManager
    kernels: ServerKernels
    max_gpu_checks: int = 4
    max_plans: int = 2

    def __post_init__(self) -> None:
        self._gpu_checks = asyncio.Semaphore(max(1, self.max_gpu_checks))
        self._plans = asyncio.Semaphore(max(1, self.max_plans))

    @contextlib.asynccontextmanager
    async def _plan_slot(self, ctx: TaskContext) -> AsyncIterator[None]:
        ctx.progress(0.0, "Waiting for a free slot (c.GpuEnvApp.max_concurrent_plans)")
        async with self._plans:
            yield

    # -- reads ----------------------------------------------------------------------------------

    async def list(self) -> EnvironmentList:
        return EnvironmentList(environments=await self.envs.list(), sharing=self.envs.sharing_enabled)

    async def get(self, name: str) -> EnvironmentDetail:
        return await self.envs.get(name)

    async def history(self, name: str) -> EnvironmentHistory:
        return await self.envs.history(name)

    async def search(self, query: str, kind: PackageKind, limit: int) -> PackageSearch:
        return await self.envs.search(query, kind, limit)

    async def export(self, name: str, fmt: ExportFormat | str) -> ExportResult:
        return await self.envs.export(name, fmt)

    async def register_kernel(self, name: str, display_name: str | None) -> KernelInfo:
        return await self.envs.register_kernel(name, display_name)

    async def unregister_kernel(self, name: str) -> str:
        return await self.envs.unregister_kernel(name)

    # -- changes, as tasks ----------------------------------------------------------------------

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
                async with self._plan_slot(ctx):
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
                async with self._plan_slot(ctx):
                    return await self.envs.plan_packages(
                        loc.name,
                        req.add,
                        req.remove,
                        pip_add=req.pip_add,
                        pip_remove=req.pip_remove,
                        progress=ctx.progress,
                    )

            title = f"Plan a change of '{loc.name}': {' '.join(changes)}"
            return self.tasks.start("plan", title, plan, target=f"environments/{loc.name}")
        change = await self.envs.changing(name)

        async def run(ctx: TaskContext) -> PackagesResult:
            return await self.envs.change_packages(
                change,
                req.add,
                req.remove,
                pip_add=req.pip_add,
                pip_remove=req.pip_remove,
                report=ctx,
                change_id=ctx.task_id,
            )

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

    async def delete(self, name: str, *, shutdown_kernels: bool = False) -> DeletedEnvironment:
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
            await self.kernels.clear(
                change.prefix, {spec} if spec else set(), shutdown_kernels, f"'{loc.name}'"
            )
            kernel = await self.envs.delete(change)
        return DeletedEnvironment(name=loc.name, kernel_removed=kernel)

    async def start_gpu_check(self, name: str) -> Task:
        """Does the environment see the GPU? Asked of its own Python, a few checks at a time."""
        loc = await self.envs.resolve(name)
        env, prefix = loc.name, loc.prefix

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
