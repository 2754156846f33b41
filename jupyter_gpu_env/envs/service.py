"""EnvironmentService: what handlers and the CLI call to list, clone, change, export and delete.

Rules kept here, whatever the engine: managed environments are never written to (403); names are
validated (400) and unique (409); one operation at a time per name (a :class:`~.claims.Claim`, 409
while held); nothing half-done is ever visible. A clone is built in ``.<name>.partial-<hex>`` and
renamed into place when complete; a package change is a transaction (:mod:`.transaction`): built in
``.<name>.txn-<hex>`` and swapped in whole; a deletion first renames the environment to
``.<name>.deleting-<hex>``. Leftovers of a crash are removed by :meth:`EnvironmentService.cleanup_stale`
at start, except those whose name another process (the CLI) still holds.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import logging
import os
import secrets
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from .. import kernelspecs
from ..errors import Conflict, DiskFull, Forbidden, InvalidRequest, NotFound
from ..models.envs import (
    CloneReport,
    CloneResult,
    Environment,
    EnvironmentDetail,
    ExportFormat,
    ExportResult,
    KernelInfo,
    PackagesResult,
    UndoResult,
)
from ..models.envs.packages import EnvironmentHistory, PackagesPlan
from ..models.envs.syntax import validate_env_name
from ..models.tasks import Task
from . import conda_list, recovery, transaction
from .catalog import EnvironmentCatalog, EnvLocation
from .changes.packages import PackageChanges, request_of
from .changes.search import PackageSearcher
from .changes.undo import read as read_history
from .changes.undo import undo as undo_last
from .claims import Claim, Claims
from .engine import CondaEngine, LogFn, ProgressFn, scaled
from .fromfile import FileEnvironments
from .pip.tool import PipSettings
from .prefix import write_origin
from .sharing import SharedEnvironments
from .transaction import is_disk_full, previous_states, remove_tree

log = logging.getLogger(__name__)
T = TypeVar("T")


def default_user_env_dir() -> Path:
    """conda's per-user environment folder, so ``conda activate <name>`` finds clones by name."""
    return Path.home() / ".conda" / "envs"


def default_pkgs_dir() -> Path:
    """Our package cache; in the home directory like the default user env dir, so hard links work."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "jupyter-gpu-env" / "pkgs"


class EnvironmentService:
    def __init__(
        self,
        catalog: EnvironmentCatalog,
        engine: CondaEngine,
        *,
        conda_list_path: Path | None = None,
        kernel_data_dir: Path | None = None,
        pip: PipSettings | None = None,
        root_dir: Path | str | None = None,
    ) -> None:
        self.catalog = catalog
        self.engine = engine
        self.changes = PackageChanges(engine, pip)
        self.searcher = PackageSearcher(engine, self.changes.pip)
        self.conda_list_path = conda_list_path or conda_list.default_path()
        self.kernel_data_dir = kernel_data_dir
        self.claims = Claims(self.user_env_dir)
        self.files = FileEnvironments(self, root_dir)
        self.shared = SharedEnvironments(self)

    @property
    def user_env_dir(self) -> Path:
        return self.catalog.user_env_dir

    @staticmethod
    def _busy(name: str) -> str:
        return f"Another operation on '{name}' is in progress; try again when it ends."

    async def own(self, name: str, action: str) -> EnvLocation:
        """The user's own environment ``name``; Forbidden (saying it cannot be ``action``) for a managed one."""
        loc = await self.catalog.resolve(name)
        if loc.kind != "own":
            what = "a managed environment" if loc.kind == "managed" else "shared with the team (read-only)"
            raise Forbidden(
                f"'{loc.name}' is {what} and cannot be {action}. Clone it and change the clone.",
                reason="managed_env",
            )
        return loc

    async def summary(self, name: str) -> Environment:
        """The environment as listed after a change: its size is measured in the background."""
        return await self.catalog.listed(name)

    # -- reading ------------------------------------------------------------------------------------

    async def list(self, *, wait_for_sizes: bool = False) -> list[Environment]:
        return await self.catalog.list(wait_for_sizes=wait_for_sizes)

    async def get(self, name: str) -> EnvironmentDetail:
        return await self.catalog.get(name)

    async def export(self, name: str, fmt: ExportFormat | str) -> ExportResult:
        try:
            fmt = ExportFormat(fmt)
        except ValueError:
            choices = ", ".join(f.value for f in ExportFormat)
            raise InvalidRequest(f"Unknown export format {fmt!r}; use one of: {choices}.") from None
        loc = await self.catalog.resolve(name)
        content = await self.engine.export(loc.prefix, fmt, name=loc.name)
        filename = f"{loc.name}-environment.yml" if fmt is ExportFormat.yaml else f"{loc.name}-explicit.txt"
        return ExportResult(format=fmt, filename=filename, content=content)

    # -- claiming -----------------------------------------------------------------------------------

    async def begin_new(self, name: str) -> Claim:
        """Claim ``name`` for a new environment of the user's. Raises InvalidRequest (bad name), Conflict
        (name taken, or being made by another request: of concurrent requests for one name exactly one
        gets past here)."""
        validate_env_name(name)
        claim = self.claims.reserve(
            name, f"An environment named '{name}' is being made or changed right now."
        )
        try:
            final = self.user_env_dir / name

            def taken() -> bool:
                names = {loc.name for loc in self.catalog.locate() if loc.kind != "shared"}
                return name in names or final.exists() or final.is_symlink()

            if await asyncio.to_thread(taken):
                raise Conflict(f"An environment named '{name}' already exists.", reason="env_exists")
            await self.claims.lock(claim, f"An environment named '{name}' is being made elsewhere right now.")
        except BaseException:
            claim.release()
            raise
        return claim

    async def begin_clone(self, source: str, name: str) -> tuple[Claim, EnvLocation]:
        """Claim ``name`` for a clone of ``source`` (see :meth:`begin_new`); NotFound for an unknown source."""
        claim = await self.begin_new(name)
        try:
            return claim, await self.catalog.resolve(source)
        except BaseException:
            claim.release()
            raise

    async def begin_change(self, name: str, action: str = "changed") -> tuple[Claim, EnvLocation]:
        """Claim one of the user's environments for a change. Raises NotFound, Forbidden, Conflict(busy)."""
        loc = await self.own(name, action)
        claim = self.claims.reserve(loc.name, self._busy(loc.name))
        try:
            await self.claims.lock(claim, self._busy(loc.name))
        except BaseException:
            claim.release()
            raise
        return claim, loc

    def busy(self, name: str) -> bool:
        """Is an operation of this server working on ``name``?"""
        return self.claims.held_here(name)

    # -- changing -----------------------------------------------------------------------------------

    async def clone(
        self,
        source: str,
        name: str,
        *,
        progress: ProgressFn | None = None,
        log: LogFn | None = None,
        claimed: tuple[Claim, EnvLocation] | None = None,
    ) -> CloneResult:
        """Clone ``source`` (a listed name or prefix) as the user's environment ``name``.

        Raises InvalidRequest (bad name), NotFound (unknown source), Conflict (name taken or busy),
        DiskFull, and the engine's errors. Cancelling, failing or a full disk leave nothing behind.
        """
        claim, src = claimed or await self.begin_clone(source, name)
        final = self.user_env_dir / name

        async def fill(build: Path) -> CloneReport:
            report = await self.engine.clone(
                src.prefix, final, build_dir=build, progress=scaled(progress, 0.0, 0.98), log=log
            )
            await asyncio.to_thread(
                write_origin, build, source=str(src.prefix), source_name=src.name, engine=self.engine.name
            )
            return report

        with claim:
            report = await self.make(final, fill, "the clone")
        await self.record(final)
        if progress is not None:
            progress(1.0, f"Cloned '{src.name}' as '{name}'")
        return CloneResult(environment=await self.summary(name), report=report)

    async def make(self, final: Path, fill: Callable[[Path], Awaitable[T]], what: str) -> T:
        """Build a new environment in a hidden sibling of ``final`` with ``fill`` and rename it into
        place; cancelling, failing or a full disk leave nothing behind. The caller holds the claim."""
        parent = final.parent
        await asyncio.to_thread(parent.mkdir, parents=True, exist_ok=True)
        build = parent / f".{final.name}.partial-{secrets.token_hex(4)}"
        try:
            await asyncio.to_thread(build.mkdir)
            result = await fill(build)
            await asyncio.to_thread(self._publish, build, final)
        except BaseException as e:
            await asyncio.shield(asyncio.to_thread(remove_tree, build))
            if is_disk_full(e):
                raise self._full(what, parent) from e
            raise
        return result

    def _full(self, what: str, where: Path | None = None) -> DiskFull:
        return DiskFull(
            f"The disk holding {where or self.user_env_dir} is full, so {what} could not be written; nothing was "
            "kept. Delete environments or images you no longer need (or ask your administrator for more "
            "space), then try again."
        )

    @staticmethod
    def _publish(build: Path, final: Path) -> None:
        if final.exists() or final.is_symlink():
            raise Conflict(f"An environment named '{final.name}' appeared meanwhile.", reason="env_exists")
        try:
            os.rename(build, final)
        except OSError as e:
            raise Conflict(f"Could not move the new environment into place: {e}", reason="env_exists") from e

    async def record(self, prefix: Path) -> None:
        try:
            await asyncio.to_thread(conda_list.add, self.conda_list_path, prefix)
        except OSError as e:  # conda's list is a convenience; the environment itself is complete
            log.warning("could not record %s in %s: %s", prefix, self.conda_list_path, e)
        self.catalog.refresh(prefix)

    async def change_packages(
        self,
        name: str,
        add: builtins.list[str],
        remove: builtins.list[str],
        *,
        pip_add: builtins.list[str] | None = None,
        pip_remove: builtins.list[str] | None = None,
        progress: ProgressFn | None = None,
        log: LogFn | None = None,
        claimed: tuple[Claim, EnvLocation] | None = None,
        change_id: str | None = None,
    ) -> PackagesResult:
        """Install ``add`` (conda match specs) and remove ``remove`` (names), then ``pip_add``
        (requirements) and ``pip_remove`` (names) with the PyPI installer, in the user's environment,
        whole or not at all.

        The change is made in a hard-linked copy and swapped in (see :mod:`.transaction`): cancelling,
        a failure or a crash at any moment leaves the environment exactly as it was. Raises Forbidden
        (managed), NotFound, Conflict (busy, unsolvable, a pip package to remove with conda or a conda
        one with pip), Unavailable (channel unreachable), DiskFull.
        """
        req = request_of(add, remove, pip_add, pip_remove)
        claim, loc = claimed or await self.begin_change(name)
        change_id = change_id or secrets.token_hex(8)
        with claim:
            await asyncio.to_thread(self.changes.check, loc.prefix, req)

            async def apply(build: Path) -> object:
                return await self.changes.apply(
                    build, loc.prefix, req, change_id, progress=scaled(progress, 0.15, 0.95), log=log
                )

            report = await self.transaction(loc, apply, progress=progress)
        return PackagesResult(environment=await self.summary(loc.name), report=report)  # type: ignore[arg-type]

    async def plan_packages(
        self,
        name: str,
        add: builtins.list[str],
        remove: builtins.list[str],
        *,
        pip_add: builtins.list[str] | None = None,
        pip_remove: builtins.list[str] | None = None,
        progress: ProgressFn | None = None,
    ) -> PackagesPlan:
        """What :meth:`change_packages` would do, changing nothing (no claim: it only reads)."""
        req = request_of(add, remove, pip_add, pip_remove)
        loc = await self.own(name, "changed")
        await asyncio.to_thread(self.changes.check, loc.prefix, req)
        return await self.changes.plan(loc.name, loc.prefix, req, progress=progress)

    async def history(self, name: str) -> EnvironmentHistory:
        """The changes ``name`` holds, newest first, and what undo would do."""
        loc = await self.catalog.resolve(name)
        found = await asyncio.to_thread(read_history, loc.name, loc.prefix)
        return found if loc.kind == "own" else found.model_copy(update={"undo": None})

    async def can_undo(self, name: str) -> bool:
        loc = await self.catalog.resolve(name)
        return loc.kind == "own" and bool(await asyncio.to_thread(previous_states, loc.prefix))

    async def undo(
        self, name: str, *, claimed: tuple[Claim, EnvLocation] | None = None, change_id: str | None = None
    ) -> UndoResult:
        """Swap the state kept before the last change back in (a second undo redoes it). Raises
        Forbidden (managed), NotFound, Conflict (busy, nothing to undo)."""
        claim, loc = claimed or await self.begin_change(name)
        with claim:
            try:
                restored = await undo_last(loc.prefix, change_id or secrets.token_hex(8))
            finally:
                self.catalog.refresh(loc.prefix)
        return UndoResult(environment=await self.summary(loc.name), restored=restored)

    async def transaction(
        self,
        loc: EnvLocation,
        apply: Callable[[Path], Awaitable[T]],
        *,
        progress: ProgressFn | None = None,
    ) -> T:
        """Change a copy of ``loc`` with ``apply`` and swap it in (:func:`.transaction.run`); the caller
        holds the claim."""
        try:
            return await transaction.run(
                loc.prefix, apply, progress=progress, disk_full=lambda: self._full("the changed environment")
            )
        finally:
            self.catalog.refresh(loc.prefix)

    async def delete(self, name: str, *, claimed: tuple[Claim, EnvLocation] | None = None) -> str | None:
        """Delete the user's environment ``name``, its kept previous states, its kernelspec and its line in
        conda's list. Returns the name of the kernelspec removed, if there was one. Raises Forbidden
        (managed), NotFound, Conflict (busy).
        """
        claim, loc = claimed or await self.begin_change(name, "deleted")
        with claim:
            kernel = await asyncio.to_thread(kernelspecs.unregister_prefix, loc.prefix, self.kernel_data_dir)
            trash = loc.prefix.with_name(f".{loc.prefix.name}.deleting-{secrets.token_hex(4)}")
            await asyncio.to_thread(os.rename, loc.prefix, trash)
            with contextlib.suppress(OSError):
                await asyncio.to_thread(conda_list.remove, self.conda_list_path, loc.prefix)
            self.catalog.refresh(loc.prefix)

            def remove_all() -> None:
                for old in previous_states(loc.prefix):
                    remove_tree(old)
                remove_tree(trash)

            await asyncio.shield(asyncio.to_thread(remove_all))
        return kernel

    async def register_kernel(self, name: str, display_name: str | None = None) -> KernelInfo:
        """Register (or update) the kernelspec of ``name``; Conflict when it has no ipykernel."""
        loc = await self.catalog.resolve(name)
        return await asyncio.to_thread(
            kernelspecs.register,
            loc.name,
            loc.prefix,
            display_name=display_name,
            managed=loc.kind == "managed",
            data_dir=self.kernel_data_dir,
        )

    async def unregister_kernel(self, name: str) -> str:
        """Remove the kernelspec registered for ``name``; NotFound when there is none."""
        loc = await self.catalog.resolve(name)
        removed = await asyncio.to_thread(kernelspecs.unregister_prefix, loc.prefix, self.kernel_data_dir)
        if removed is None:
            raise NotFound(f"No kernel is registered for '{loc.name}'.", reason="kernel_not_found")
        return removed

    # -- after a crash ------------------------------------------------------------------------------

    async def cleanup_stale(self) -> builtins.list[Path]:
        """Undo what a crash left (see :func:`recovery.sweep`), in this user's folders."""
        removed = await asyncio.to_thread(
            recovery.sweep, self.user_env_dir, self.catalog.shared_dirs, self.claims.locked_elsewhere
        )
        for p in removed:
            log.info("removed stale temporary %s", p)
        return removed

    def interrupted_note(self, task: Task) -> str | None:
        """What can be told of a package change the server died in (blocking; read at start)."""
        return recovery.interrupted_note(self.user_env_dir, task)
