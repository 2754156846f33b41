"""EnvironmentService: what handlers and the CLI call to list, make, change, share, export and delete
environments: one verb per operation, composed of the parts that do the work.

Rules kept here, whatever the engine: managed environments are never written to (403); names are
validated (400) and unique (409); one operation at a time per name (a :class:`~.changing.Change`, 409
while another is held); nothing half-done is ever visible (:mod:`.building`); a deletion first sets the
environment aside. :meth:`EnvironmentService.cleanup_stale` removes a crash's leftovers at start,
except those another live process (the CLI, another server) still works on.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import logging
import os
import secrets
from pathlib import Path

from .. import kernelspecs
from ..errors import InvalidRequest, NotFound
from ..models.envs import (
    CloneReport,
    CloneResult,
    CreateResult,
    Environment,
    EnvironmentDetail,
    ExportFormat,
    ExportResult,
    KernelInfo,
    PackagesResult,
    PublishRequest,
    UndoResult,
)
from ..models.envs.packages import (
    EnvironmentHistory,
    PackageKind,
    PackageSearch,
    PackagesPlan,
    PackagesReport,
)
from ..models.tasks import Task
from ..system.trees import remove_trees
from ..tasks import Outcome
from . import conda_list, recovery
from .building import Builder
from .catalog import EnvironmentCatalog, EnvLocation
from .catalog.prefix import write_origin
from .changes.packages import PackageChanges, request_of
from .changes.search import PackageSearcher
from .changes.undo import check_undoable, kept_state
from .changes.undo import read as read_history
from .changes.undo import undo as undo_last
from .changing import Change, Claiming, EnvironmentClaims, held
from .engine import CondaEngine, ProgressFn, Reporter, part
from .fromfile.environments import FileEnvironments
from .pip.tool import PipSettings
from .sharing import SharedEnvironments
from .transaction import set_aside

log = logging.getLogger(__name__)


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
        self.claims = EnvironmentClaims(catalog)
        self.builder = Builder(catalog, self.conda_list_path)
        root = Path(root_dir or os.getcwd())
        self.files = FileEnvironments(engine, self.changes.pip, self.builder, root)
        self.shared = SharedEnvironments(catalog, engine, self.builder, self.claims)

    @property
    def user_env_dir(self) -> Path:
        return self.catalog.user_env_dir

    # -- reading ------------------------------------------------------------------------------------

    async def list(self, *, wait_for_sizes: bool = False) -> builtins.list[Environment]:
        return await self.catalog.list(wait_for_sizes=wait_for_sizes)

    def locate(self) -> builtins.list[EnvLocation]:
        """Where every environment is (blocking; quick: no environment is read)."""
        return self.catalog.locate()

    async def resolve(self, name: str) -> EnvLocation:
        """The environment listed as ``name``, or at the prefix ``name``; NotFound otherwise."""
        return await self.catalog.resolve(name)

    async def get(self, name: str) -> EnvironmentDetail:
        return await self.catalog.get(name)

    async def summary(self, name: str) -> Environment:
        """The environment as listed after a change: its size is measured in the background."""
        return await self.catalog.listed(name)

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

    async def search(self, query: str, kind: PackageKind, limit: int = 20) -> PackageSearch:
        """Packages to add: conda names holding ``query``, or the PyPI project named ``query``."""
        return await self.searcher.search(query, kind, limit)

    async def history(self, name: str) -> EnvironmentHistory:
        """The changes ``name`` holds, newest first, and what undo would do."""
        loc = await self.catalog.resolve(name)
        found = await asyncio.to_thread(read_history, loc.name, loc.prefix)
        return found if loc.kind == "own" else found.model_copy(update={"undo": None})

    async def can_undo(self, name: str) -> bool:
        loc = await self.catalog.resolve(name)
        return loc.kind == "own" and await asyncio.to_thread(kept_state, loc.prefix) is not None

    def kernel_name(self, prefix: Path) -> str | None:
        """The kernelspec registered for ``prefix``, if any (blocking)."""
        spec = kernelspecs.find_for_prefix(prefix, self.kernel_data_dir)
        return spec.kernel_name if spec else None

    # -- claiming (see .changing) -------------------------------------------------------------------

    def changing(self, name: str | EnvLocation, action: str = "changed") -> Claiming:
        """One of the user's environments claimed for a change: awaited, or with ``async with``."""
        return self.claims.changing(name, action)

    def making(self, name: str, source: str | None = None) -> Claiming:
        """``name`` claimed for a new environment of the user's (a clone of ``source``, if given)."""
        return self.claims.making(name, source)

    def publishing(self, name: str, shared_name: str | None = None) -> Claiming:
        """The user's environment ``name`` claimed to be published as ``shared_name``."""
        return self.shared.publishing(name, shared_name)

    def undoing(self, name: str) -> Claiming:
        """One of the user's environments claimed to undo its last change; Conflict(nothing_to_undo) at
        once when no earlier state of it is kept."""

        async def take() -> Change:
            change = await self.changing(name)
            try:
                await asyncio.to_thread(check_undoable, change.prefix)
            except BaseException:
                change.release()
                raise
            return change

        return Claiming(take)

    def busy(self, name: str) -> bool:
        """Is an operation of this server working on ``name``?"""
        return self.claims.busy(name)

    async def own(self, name: str, action: str) -> EnvLocation:
        """The user's own environment ``name``; Forbidden (saying it cannot be ``action``) otherwise."""
        return await self.claims.own(name, action)

    # -- making -------------------------------------------------------------------------------------

    async def clone(
        self,
        source: str | Change,
        name: str | None = None,
        *,
        report: Reporter | None = None,
    ) -> CloneResult:
        """Clone ``source`` (a listed name or prefix) as the user's environment ``name``, or what a
        change from :meth:`making` with a source names.

        Raises InvalidRequest (bad name), NotFound (unknown source), Conflict (name taken or busy),
        DiskFull, and the engine's errors. Cancelling, failing or a full disk leave nothing behind.
        """
        async with held(source, lambda src: self.making(name or "", src)) as change:
            src, final = change.source, change.prefix
            assert src is not None  # a clone's change names its source

            async def fill(build: Path) -> CloneReport:
                made = await self.engine.clone(
                    src.prefix,
                    final,
                    build_dir=build,
                    report=part(report, 0.0, 0.98),
                    link_source=src.kind == "managed",
                )
                await asyncio.to_thread(
                    write_origin,
                    build,
                    source=str(src.prefix),
                    source_name=src.name,
                    made_from="clone",
                    engine=self.engine.name,
                )
                return made

            made = await self.builder.make(final, fill, "the clone", source=src)
        await self.builder.record(final)
        part(report).progress(1.0, f"Cloned '{src.name}' as '{change.name}'")
        return CloneResult(environment=await self.summary(change.name), report=made)

    async def check_file(self, from_file: str) -> None:
        """Check the file an environment is to be made from (see :meth:`.FileEnvironments.read_file`)."""
        await self.files.read_file(from_file)

    async def plan_from_file(
        self, name: str, from_file: str, *, progress: ProgressFn | None = None, root_dir: Path | None = None
    ) -> PackagesPlan:
        """What :meth:`create_from_file` would install; nothing is made. ``root_dir``: where files are
        read from instead of the server's root (a terminal's is ``/``)."""
        files = self.files if root_dir is None else self.files.under(root_dir)
        return await files.plan(name, from_file, progress=progress)

    async def create_from_file(
        self,
        new: str | Change,
        from_file: str,
        *,
        report: Reporter | None = None,
        change_id: str | None = None,
        root_dir: Path | None = None,
    ) -> CreateResult:
        """Make the user's environment ``new`` (a name, or a change from :meth:`making`) from a file."""
        files = self.files if root_dir is None else self.files.under(root_dir)
        path, spec = await files.read_file(from_file)
        async with held(new, self.making) as change:
            made = await files.make(change, path, spec, from_file, report, change_id or secrets.token_hex(8))
        await self.builder.record(change.prefix)
        part(report).progress(1.0, f"Created '{change.name}' from {path.name}")
        return CreateResult(environment=await self.summary(change.name), report=made)

    # -- sharing ------------------------------------------------------------------------------------

    @property
    def sharing_enabled(self) -> bool:
        return self.shared.enabled

    async def publish(
        self,
        env: str | Change,
        request: PublishRequest,
        *,
        report: Reporter | None = None,
    ) -> Environment:
        """Publish a copy of the user's environment ``env`` (a name, or a change from :meth:`publishing`)
        as ``request`` says, for the team (see :mod:`.sharing`). Returns it as listed."""
        async with held(env, lambda name: self.publishing(name, request.name)) as change:
            final = await self.shared.make(change, request.description, report)
        part(report).progress(1.0, f"Shared '{change.name}' as '{final.name}'")
        return await self.catalog.listed(str(final))

    async def unpublish(self, loc: EnvLocation) -> None:
        """Remove a shared environment this user published (Forbidden for anyone else's)."""
        await self.shared.unpublish(loc)

    # -- changing -----------------------------------------------------------------------------------

    async def change_packages(
        self,
        env: str | Change,
        add: builtins.list[str],
        remove: builtins.list[str],
        *,
        pip_add: builtins.list[str] | None = None,
        pip_remove: builtins.list[str] | None = None,
        report: Reporter | None = None,
        change_id: str | None = None,
    ) -> PackagesResult:
        """Install ``add`` (conda match specs) and remove ``remove`` (names), then ``pip_add``
        (requirements) and ``pip_remove`` (names) with the PyPI installer, in the user's environment
        ``env`` (a name, or a change from :meth:`changing`), whole or not at all.

        The change is made in a hard-linked copy and swapped in (see :mod:`.transaction`): cancelling,
        a failure or a crash at any moment leaves the environment exactly as it was. Raises Forbidden
        (managed), NotFound, Conflict (busy, unsolvable, a package removed with the wrong installer),
        Unavailable (channel unreachable), DiskFull."""
        req = request_of(add, remove, pip_add, pip_remove)
        async with held(env, self.changing) as change:
            prefix = change.prefix
            change_id = change_id or secrets.token_hex(8)
            await asyncio.to_thread(self.changes.check, prefix, req)

            async def apply(build: Path) -> PackagesReport:
                return await self.changes.apply(
                    build, prefix, req, change_id, report=part(report, 0.15, 0.95)
                )

            done = await self.builder.change(prefix, apply, progress=part(report).progress)
        return PackagesResult(environment=await self.summary(change.name), report=done)

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

    async def undo(self, env: str | Change, *, change_id: str | None = None) -> UndoResult:
        """Swap the state kept before the last change back in (a second undo redoes it). Raises
        Forbidden (managed), NotFound, Conflict (busy, nothing to undo)."""
        async with held(env, self.changing) as change:
            try:
                restored, done = await undo_last(change.prefix, change_id or secrets.token_hex(8))
            finally:
                self.catalog.refresh(change.prefix)
        return UndoResult(environment=await self.summary(change.name), restored=restored, done=done)

    async def delete(self, env: str | Change) -> str | None:
        """Delete the user's environment ``env`` (a name, or a change from :meth:`changing`), its kept
        states, kernelspec and line in conda's list; the kernelspec's name, if there was one. Raises
        Forbidden (managed), NotFound, Conflict (busy)."""
        async with held(env, lambda name: self.changing(name, "deleted")) as change:
            prefix = change.prefix
            kernel = await asyncio.to_thread(kernelspecs.unregister_prefix, prefix, self.kernel_data_dir)
            trash = await asyncio.shield(asyncio.to_thread(set_aside, prefix))
            with contextlib.suppress(OSError):
                await asyncio.to_thread(conda_list.remove, self.conda_list_path, prefix)
            self.catalog.refresh(prefix)
            await asyncio.shield(asyncio.to_thread(remove_trees, trash))
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

    # -- lifetime -----------------------------------------------------------------------------------

    async def warm_up(self) -> None:
        await self.engine.warm_up()

    async def close(self) -> None:
        await self.engine.close()

    async def cleanup_stale(self) -> builtins.list[Path]:
        """Undo what a crash left (see :func:`recovery.sweep`), in this user's folders."""
        removed = await asyncio.to_thread(
            recovery.sweep, self.user_env_dir, self.catalog.shared_dirs, self.claims.claims.locked_elsewhere
        )
        for p in removed:
            log.info("removed stale temporary %s", p)
        return removed

    def interrupted_note(self, task: Task) -> Outcome | None:
        """What is on disk of a package change or undo the server died in (blocking; read at start)."""
        return recovery.interrupted_note(self.user_env_dir, task)
