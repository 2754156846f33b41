"""EnvironmentService: what handlers and the CLI call to list, clone, change, export and delete.

Rules kept here, whatever the engine: managed environments are never written to (403); names are
validated (400) and unique (409); a clone is built in a hidden sibling ``.<name>.partial-<hex>`` and
renamed into place only when complete, so a failure or a cancellation leaves nothing visible; a
deletion first renames the environment to ``.<name>.deleting-<hex>``. Leftovers of either (after a
crash) are removed by :meth:`EnvironmentService.cleanup_stale`, to be called at start.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import secrets
import shutil
import stat
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from .. import kernels
from ..errors import Conflict, Forbidden, InvalidRequest, NotFound
from ..models.envs import (
    CloneResult,
    Environment,
    EnvironmentDetail,
    ExportFormat,
    ExportResult,
    KernelInfo,
    PackagesResult,
)
from . import conda_list
from .discovery import EnvironmentCatalog, EnvLocation
from .engine import CondaEngine, LogFn, ProgressFn, scaled
from .names import validate_env_name
from .prefix import pypi_packages, python_version, read_records, site_packages, write_origin

log = logging.getLogger(__name__)

_TEMPORARY = re.compile(r"^\.(?P<name>.+)\.(partial|deleting)-[0-9a-f]+$")


def default_user_env_dir() -> Path:
    """conda's per-user environment folder, so ``conda activate <name>`` finds clones by name."""
    return Path.home() / ".conda" / "envs"


def default_pkgs_dir() -> Path:
    """Our package cache; in the home directory like the default user env dir, so hard links work."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "jupyter-gpu-env" / "pkgs"


def _remove_tree(path: Path) -> None:
    def fix(func: Callable[[str], object], p: str, _exc: object) -> None:
        # a read-only folder copied from a managed environment: make it writable and retry once
        with contextlib.suppress(OSError):
            os.chmod(os.path.dirname(p), stat.S_IRWXU)
            func(p)

    if path.is_symlink() or path.is_file():
        path.unlink(missing_ok=True)
    elif path.exists():
        if sys.version_info >= (3, 12):
            shutil.rmtree(path, onexc=fix)
        else:
            shutil.rmtree(path, onerror=fix)


def _refuse_pip_removals(prefix: Path, remove: list[str]) -> None:
    records = read_records(prefix)
    pip_only = {
        p.name.lower().replace("_", "-"): p.name
        for p in pypi_packages(prefix, records, site_packages(prefix, python_version(records)))
    }
    if hit := [pip_only[n] for n in (r.lower().replace("_", "-") for r in remove) if n in pip_only]:
        names = " ".join(hit)
        raise InvalidRequest(
            f"{', '.join(hit)} {'was' if len(hit) == 1 else 'were'} installed with pip, not conda, so conda "
            f"cannot remove {'it' if len(hit) == 1 else 'them'}; run `{prefix}/bin/python -m pip uninstall {names}`.",
            reason="pip_package",
        )


class EnvironmentService:
    def __init__(
        self,
        catalog: EnvironmentCatalog,
        engine: CondaEngine,
        *,
        conda_list_path: Path | None = None,
        kernel_data_dir: Path | None = None,
    ) -> None:
        self.catalog = catalog
        self.engine = engine
        self.conda_list_path = conda_list_path or conda_list.default_path()
        self.kernel_data_dir = kernel_data_dir
        self._busy: set[str] = set()

    @property
    def user_env_dir(self) -> Path:
        return self.catalog.user_env_dir

    @contextlib.contextmanager
    def _claim(self, name: str) -> Iterator[None]:
        if name in self._busy:
            raise Conflict(
                f"Another operation on '{name}' is in progress; try again when it ends.", reason="busy"
            )
        self._busy.add(name)
        try:
            yield
        finally:
            self._busy.discard(name)

    async def _own(self, name: str, action: str) -> EnvLocation:
        loc = await self.catalog.resolve(name)
        if loc.kind != "own":
            raise Forbidden(
                f"'{loc.name}' is a managed environment and cannot be {action}. Clone it and change the clone.",
                reason="managed_env",
            )
        return loc

    async def _summary(self, name: str) -> Environment:
        detail = await self.catalog.get(name)
        return Environment.model_validate(detail.model_dump(exclude={"packages"}))

    # -- reading ------------------------------------------------------------------------------------

    async def list(self) -> list[Environment]:
        return await self.catalog.list()

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

    # -- changing -----------------------------------------------------------------------------------

    async def _check_clone(self, source: str, name: str) -> EnvLocation:
        validate_env_name(name)
        src = await self.catalog.resolve(source)
        final = self.user_env_dir / name

        def taken() -> bool:
            names = {loc.name for loc in self.catalog.locate()}
            return name in names or final.exists() or final.is_symlink()

        if name in self._busy:
            raise Conflict(
                f"An environment named '{name}' is being made or changed right now.", reason="busy"
            )
        if await asyncio.to_thread(taken):
            raise Conflict(f"An environment named '{name}' already exists.", reason="env_exists")
        return src

    async def check_clone(self, source: str, name: str) -> str:
        """The checks :meth:`clone` starts with, to answer a request at once; returns the source's name.

        Raises InvalidRequest (bad name), NotFound (unknown source), Conflict (name taken).
        """
        return (await self._check_clone(source, name)).name

    async def check_change(self, name: str) -> str:
        """The checks :meth:`change_packages` starts with; returns the environment's listed name.

        Raises NotFound, Forbidden (managed), Conflict (another operation on it is running).
        """
        loc = await self._own(name, "changed")
        if loc.name in self._busy:
            raise Conflict(
                f"Another operation on '{loc.name}' is in progress; try again when it ends.", reason="busy"
            )
        return loc.name

    async def clone(
        self, source: str, name: str, *, progress: ProgressFn | None = None, log: LogFn | None = None
    ) -> CloneResult:
        """Clone ``source`` (a listed name or prefix) as the user's environment ``name``.

        Raises InvalidRequest (bad name), NotFound (unknown source), Conflict (name taken or busy),
        and the engine's errors. Cancelling leaves nothing behind.
        """
        src = await self._check_clone(source, name)
        final = self.user_env_dir / name
        with self._claim(name):
            await asyncio.to_thread(self.user_env_dir.mkdir, parents=True, exist_ok=True)
            build = self.user_env_dir / f".{name}.partial-{secrets.token_hex(4)}"
            report = None
            try:
                await asyncio.to_thread(build.mkdir)
                report = await self.engine.clone(
                    src.prefix, final, build_dir=build, progress=scaled(progress, 0.0, 0.98), log=log
                )
                await asyncio.to_thread(
                    write_origin, build, source=str(src.prefix), source_name=src.name, engine=self.engine.name
                )
                await asyncio.to_thread(self._publish, build, final)
            except BaseException:
                await asyncio.shield(asyncio.to_thread(_remove_tree, build))
                raise
        await self._record(final)
        if progress is not None:
            progress(1.0, f"Cloned '{src.name}' as '{name}'")
        return CloneResult(environment=await self._summary(name), report=report)

    @staticmethod
    def _publish(build: Path, final: Path) -> None:
        if final.exists() or final.is_symlink():
            raise Conflict(f"An environment named '{final.name}' appeared meanwhile.", reason="env_exists")
        try:
            os.rename(build, final)
        except OSError as e:
            raise Conflict(f"Could not move the new environment into place: {e}", reason="env_exists") from e

    async def _record(self, prefix: Path) -> None:
        try:
            await asyncio.to_thread(conda_list.add, self.conda_list_path, prefix)
        except OSError as e:  # conda's list is a convenience; the environment itself is complete
            log.warning("could not record %s in %s: %s", prefix, self.conda_list_path, e)
        self.catalog.refresh(prefix)

    async def change_packages(
        self,
        name: str,
        add: list[str],
        remove: list[str],
        *,
        progress: ProgressFn | None = None,
        log: LogFn | None = None,
    ) -> PackagesResult:
        """Install ``add`` (match specs) and remove ``remove`` (names) in the user's environment.

        Raises Forbidden (managed), NotFound, Conflict (busy or unsolvable), InvalidRequest (unknown
        package or bad spec), Unavailable (channel unreachable).
        """
        loc = await self._own(name, "changed")
        if remove:
            await asyncio.to_thread(_refuse_pip_removals, loc.prefix, remove)
        with self._claim(loc.name):
            try:
                report = await self.engine.install(loc.prefix, add, remove, progress=progress, log=log)
            finally:
                self.catalog.refresh(loc.prefix)
        return PackagesResult(environment=await self._summary(loc.name), report=report)

    async def delete(self, name: str) -> str | None:
        """Delete the user's environment ``name``, its kernelspec and its line in conda's list.

        Returns the name of the kernelspec removed, if there was one. Raises Forbidden (managed),
        NotFound, Conflict (busy).
        """
        loc = await self._own(name, "deleted")
        with self._claim(loc.name):
            kernel = await asyncio.to_thread(kernels.unregister_prefix, loc.prefix, self.kernel_data_dir)
            trash = loc.prefix.with_name(f".{loc.prefix.name}.deleting-{secrets.token_hex(4)}")
            await asyncio.to_thread(os.rename, loc.prefix, trash)
            with contextlib.suppress(OSError):
                await asyncio.to_thread(conda_list.remove, self.conda_list_path, loc.prefix)
            self.catalog.refresh(loc.prefix)
            await asyncio.shield(asyncio.to_thread(_remove_tree, trash))
        return kernel

    async def register_kernel(self, name: str, display_name: str | None = None) -> KernelInfo:
        """Register (or update) the kernelspec of ``name``; Conflict when it has no ipykernel."""
        loc = await self.catalog.resolve(name)
        return await asyncio.to_thread(
            kernels.register,
            loc.name,
            loc.prefix,
            display_name=display_name,
            managed=loc.kind == "managed",
            data_dir=self.kernel_data_dir,
        )

    async def unregister_kernel(self, name: str) -> str:
        """Remove the kernelspec registered for ``name``; NotFound when there is none."""
        loc = await self.catalog.resolve(name)
        removed = await asyncio.to_thread(kernels.unregister_prefix, loc.prefix, self.kernel_data_dir)
        if removed is None:
            raise NotFound(f"No kernel is registered for '{loc.name}'.", reason="kernel_not_found")
        return removed

    async def cleanup_stale(self) -> list[Path]:
        """Remove temporaries left by a crash (``.<name>.partial-*``, ``.<name>.deleting-*``)."""

        def sweep() -> list[Path]:
            try:
                entries = list(self.user_env_dir.iterdir())
            except OSError:
                return []
            gone = [
                p for p in entries if (m := _TEMPORARY.match(p.name)) and m.group("name") not in self._busy
            ]
            for p in gone:
                _remove_tree(p)
            return gone

        removed = await asyncio.to_thread(sweep)
        for p in removed:
            log.info("removed stale temporary %s", p)
        return removed
