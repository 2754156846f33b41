"""A new environment from a file (:mod:`..fromfile.specfile`): planned without making anything, or built into a
folder that the caller renames into place (conda's solve and install first, then the PyPI requirements
with the new interpreter), its history starting with how it was made."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from ...models.envs import CreateReport
from ...models.envs.packages import PackagesPlan
from ...models.envs.syntax import spec_name
from ..engine import CondaEngine, ProgressFn, Reporter, part, scaled
from ..fromfile.specfile import EnvFile
from ..pip import change as pip_change
from ..pip.tool import PipSettings, installer_for
from . import history, plans


def _requested_conda(spec: EnvFile) -> set[str]:
    return {spec_name(s) for s in spec.conda}


def _notes(spec: EnvFile) -> list[str]:
    return [f"Not applied: {what}." for what in spec.ignored]


async def plan(
    engine: CondaEngine,
    pip: PipSettings,
    name: str,
    spec: EnvFile,
    *,
    progress: ProgressFn | None = None,
) -> PackagesPlan:
    """Everything the new environment would hold; nothing is made."""
    found = await engine.plan_create(
        spec.conda, channels=spec.channels or None, progress=scaled(progress, 0.0, 0.7)
    )
    changes = plans.conda_changes(found, _requested_conda(spec))
    if spec.pip:
        if progress is not None:
            progress(0.75, "Resolving the PyPI requirements")
        python = next((s["after"] for s in found if s["name"] == "python"), None)
        steps = await pip_change.plan_new(pip, python, spec.pip)
        requested = {pip_change.normalized(_name(r)) for r in spec.pip}
        changes += plans.pypi_changes(steps, requested)
    made = plans.assemble(name, changes, had_kernel=False, conda_names=set(), mixed=False)
    warnings = list(made.warnings)
    if not made.runs_notebooks:
        warnings.append(
            "The new environment will have no ipykernel, so it cannot run notebooks or batch jobs; add "
            "ipykernel to the file to use it from Jupyter."
        )
    return made.model_copy(update={"warnings": warnings + _notes(spec)})


async def build(
    engine: CondaEngine,
    pip: PipSettings,
    build_dir: Path,
    final: Path,
    spec: EnvFile,
    *,
    from_file: str,
    change_id: str,
    report: Reporter | None = None,
) -> CreateReport:
    """Install ``spec`` into ``build_dir`` (files embedding ``final``) and start its history."""
    started = time.monotonic()
    conda = part(report, 0.0, 0.75 if spec.pip else 1.0)
    installed = await engine.create(
        final, spec.conda, build_dir=build_dir, channels=spec.channels or None, report=conda
    )
    if spec.pip:
        whole = part(report)
        whole.progress(0.8, "Installing the PyPI requirements")
        installer = installer_for(build_dir, pip)
        conda_names = {pip_change.normalized(p.rsplit("-", 2)[0]) for p in installed}
        got, _ = await pip_change.apply(installer, build_dir, final, spec.pip, [], conda_names, log=whole.log)
        installed += got
    entry: dict[str, object] = {"id": change_id, "kind": "create", "from_file": from_file}
    entry |= {"file_kind": spec.kind}
    entry |= {"add": spec.conda, "pip_add": spec.pip, "installed": installed}
    await asyncio.to_thread(history.append, build_dir, entry)
    return CreateReport(
        from_file=from_file,
        file_kind=spec.kind,
        installed=installed,
        ignored=spec.ignored,
        seconds=round(time.monotonic() - started, 3),
    )


def _name(requirement: str) -> str:
    from packaging.requirements import Requirement

    return Requirement(requirement).name
