"""A package change, conda and PyPI: planned without changing anything, or applied to a transaction's
copy (conda's solve first, then the PyPI installer with the copy's interpreter), and recorded in the
copy's history before it is swapped in."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import ValidationError

from ...errors import Conflict, InvalidRequest
from ...models.envs.packages import PackagesPlan, PackagesReport, PackagesRequest
from ...models.envs.syntax import spec_name
from ..catalog.prefix import pypi_packages, python_version, read_records, site_packages
from ..engine import CondaEngine, ProgressFn, Reporter, part, scaled
from ..pip import change as pip_change
from ..pip.tool import PipSettings, installer_for
from . import history, plans


def _conda_names(prefix: Path) -> set[str]:
    return {pip_change.normalized(r["name"]) for r in read_records(prefix) if r.get("name")}


def request_of(
    add: list[str], remove: list[str], pip_add: list[str] | None, pip_remove: list[str] | None
) -> PackagesRequest:
    try:
        return PackagesRequest(add=add, remove=remove, pip_add=pip_add or [], pip_remove=pip_remove or [])
    except ValidationError as e:
        raise InvalidRequest(
            e.errors()[0]["msg"].removeprefix("Value error, "), reason="invalid_request"
        ) from e


def _refuse_pip_removals(prefix: Path, remove: list[str]) -> None:
    records = read_records(prefix)
    pip_only = {
        pip_change.normalized(p.name): p.name
        for p in pypi_packages(prefix, records, site_packages(prefix, python_version(records)))
    }
    if hit := [pip_only[n] for n in map(pip_change.normalized, remove) if n in pip_only]:
        raise Conflict(
            f"{', '.join(hit)} {'was' if len(hit) == 1 else 'were'} installed with pip, not conda, so conda "
            f"cannot remove {'it' if len(hit) == 1 else 'them'}; remove {'it' if len(hit) == 1 else 'them'} "
            "as PyPI packages (`pip_remove`).",
            reason="pip_package",
        )


class PackageChanges:
    def __init__(self, engine: CondaEngine, pip: PipSettings | None = None) -> None:
        self.engine = engine
        self.pip = pip or PipSettings()

    def check(self, prefix: Path, req: PackagesRequest) -> None:
        """Refuse at once what conda cannot do: remove a package pip installed."""
        if req.remove:
            _refuse_pip_removals(prefix, req.remove)

    async def plan(
        self, name: str, prefix: Path, req: PackagesRequest, *, progress: ProgressFn | None = None
    ) -> PackagesPlan:
        """What applying ``req`` to ``prefix`` would do; nothing changes."""
        conda_names = await asyncio.to_thread(_conda_names, prefix)
        changes = []
        if req.add or req.remove:
            found = await self.engine.plan(prefix, req.add, req.remove, progress=scaled(progress, 0.0, 0.7))
            requested = {spec_name(s) for s in req.add}
            changes += plans.conda_changes(found, requested | {n.lower() for n in req.remove})
        if req.pip_add or req.pip_remove:
            if progress is not None:
                progress(0.75, "Planning the PyPI packages")
            installer = installer_for(prefix, self.pip)
            steps = await pip_change.plan(installer, prefix, req.pip_add, req.pip_remove, conda_names)
            requested = {pip_change.normalized(_pip_name(r)) for r in req.pip_add}
            changes += plans.pypi_changes(
                steps, requested | {pip_change.normalized(n) for n in req.pip_remove}
            )
        had_kernel = await asyncio.to_thread(_has_kernel, prefix)
        return plans.assemble(
            name,
            changes,
            had_kernel=had_kernel,
            conda_names=conda_names,
            mixed=bool((req.add or req.remove) and (req.pip_add or req.pip_remove)),
        )

    async def apply(
        self,
        build: Path,
        final: Path,
        req: PackagesRequest,
        change_id: str,
        *,
        report: Reporter | None = None,
    ) -> PackagesReport:
        """Apply ``req`` to ``build`` (a copy that will be renamed to ``final``) and record it there."""
        installed: list[str] = []
        removed: list[str] = []
        seconds = 0.0
        has_pip = bool(req.pip_add or req.pip_remove)
        whole = part(report)
        if req.add or req.remove:
            conda = await self.engine.install(
                build,
                req.add,
                req.remove,
                final_prefix=final,
                report=part(report, 0.0, 0.7 if has_pip else 1.0),
            )
            installed += conda.installed
            removed += conda.removed
            seconds += conda.seconds
        if has_pip:
            whole.progress(0.75, "Installing PyPI packages" if req.pip_add else "Removing PyPI packages")
            installer = installer_for(build, self.pip)
            loop = asyncio.get_running_loop()
            started = loop.time()
            conda_names = await asyncio.to_thread(_conda_names, build)
            got, gone = await pip_change.apply(
                installer, build, final, req.pip_add, req.pip_remove, conda_names, log=whole.log
            )
            installed += got
            removed += gone
            seconds += loop.time() - started
        entry = {"id": change_id, "kind": "packages", "add": req.add, "remove": req.remove}
        entry |= {"pip_add": req.pip_add, "pip_remove": req.pip_remove}
        entry |= {"installed": installed, "removed": removed}
        await asyncio.to_thread(history.append, build, entry)
        return PackagesReport(installed=installed, removed=removed, seconds=round(seconds, 3))


def _pip_name(requirement: str) -> str:
    from packaging.requirements import Requirement

    return Requirement(requirement).name


def _has_kernel(prefix: Path) -> bool:
    return any((prefix / "lib").glob("python3*/site-packages/ipykernel/__init__.py"))
