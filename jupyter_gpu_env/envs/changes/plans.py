"""The plan of a package change, shown before it is applied: conda's solve and the PyPI installer's
dry run, as one list with what each package does and what the user did not ask for."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from packaging.version import InvalidVersion, Version

from ...models.envs.packages import PackagesPlan, PlanAction, PlannedChange
from ..pip.change import PipStep, normalized

# Without these a conda environment cannot start a Jupyter kernel.
KERNEL_PACKAGES = ("ipykernel",)


def _action(before: str | None, after: str | None, rebuilt: bool = False) -> PlanAction:
    if before is None:
        return PlanAction.install
    if after is None:
        return PlanAction.remove
    if before == after:
        return PlanAction.change if rebuilt else PlanAction.upgrade
    try:
        return PlanAction.upgrade if Version(after) > Version(before) else PlanAction.downgrade
    except InvalidVersion:  # a conda version PEP 440 does not read: compare the parts we can
        return PlanAction.upgrade if _parts(after) > _parts(before) else PlanAction.downgrade


def _parts(version: str) -> list[tuple[int, str]]:
    out = []
    for part in version.replace("_", ".").replace("-", ".").split("."):
        digits = "".join(c for c in part if c.isdigit())
        out.append((int(digits) if digits else -1, part))
    return out


def conda_changes(steps: Iterable[dict[str, Any]], requested: set[str]) -> list[PlannedChange]:
    """From the conda engine's plan (name, before, after, builds, download_bytes)."""
    out = []
    for s in steps:
        rebuilt = s.get("build_before") != s.get("build_after")
        out.append(
            PlannedChange(
                name=s["name"],
                kind="conda",
                action=_action(s.get("before"), s.get("after"), rebuilt),
                version_before=s.get("before"),
                version_after=s.get("after"),
                download_bytes=s.get("download_bytes"),
                requested=s["name"].lower() in requested,
            )
        )
    return out


def pypi_changes(steps: Iterable[PipStep], requested: set[str]) -> list[PlannedChange]:
    return [
        PlannedChange(
            name=s.name,
            kind="pypi",
            action=_action(s.before, s.after),
            version_before=s.before,
            version_after=s.after,
            download_bytes=s.download_bytes,
            requested=normalized(s.name) in requested,
        )
        for s in steps
    ]


def assemble(
    environment: str,
    changes: list[PlannedChange],
    *,
    had_kernel: bool,
    conda_names: set[str],
    mixed: bool,
) -> PackagesPlan:
    """The plan with its totals and warnings. ``had_kernel``: ipykernel is there now; ``conda_names``:
    the conda packages now (a PyPI change to one of them replaces conda's files); ``mixed``: conda and
    PyPI changes together (the PyPI part was planned against the environment as it is now)."""
    unrequested = sorted({c.name for c in changes if c.action is PlanAction.remove and not c.requested})
    removed = {normalized(c.name) for c in changes if c.action is PlanAction.remove}
    added = {normalized(c.name) for c in changes if c.action is not PlanAction.remove}
    runs_notebooks = all((had_kernel and k not in removed) or k in added for k in KERNEL_PACKAGES)
    warnings = []
    if had_kernel and not runs_notebooks:
        warnings.append(
            "This environment will no longer run notebooks: ipykernel would be removed. Its kernel and "
            "batch jobs using it will fail until ipykernel is added back."
        )
    if unrequested:
        warnings.append(
            f"{len(unrequested)} package{'s' if len(unrequested) != 1 else ''} you did not name would be "
            f"removed: {', '.join(unrequested)}."
        )
    over_conda = sorted(
        c.name
        for c in changes
        if c.kind == "pypi" and c.action is not PlanAction.install and normalized(c.name) in conda_names
    )
    if over_conda:
        warnings.append(
            f"pip would replace the conda package{'s' if len(over_conda) != 1 else ''} {', '.join(over_conda)}; "
            "conda will no longer know what is installed there. Prefer the conda package where one exists."
        )
    if mixed:
        warnings.append(
            "The PyPI part was planned against the environment as it is now; conda's changes come first "
            "and may change what pip then needs."
        )
    return PackagesPlan(
        environment=environment,
        changes=sorted(changes, key=lambda c: (c.kind, c.action is not PlanAction.remove, c.name.lower())),
        download_bytes=sum(c.download_bytes or 0 for c in changes),
        unrequested_removals=unrequested,
        runs_notebooks=runs_notebooks,
        warnings=warnings,
    )
