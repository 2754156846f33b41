"""Before a cluster starts: the environment its scheduler and workers run in has ``distributed``, of the
version its ``dask`` needs, and (for GPU workers) whether it has ``dask-cuda``. Read from the prefix's
installed distributions, without starting its Python; a missing package is a 409 that names what to add
(``bokeh`` too where it lacks the dashboard's) and, once ``place`` has asked, where from: the configured
conda channels where they hold it, PyPI where they do not. The sidebar offers to add them through the
environment's planned change."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import Conflict

_DIST_INFO = re.compile(r"^(?P<name>[A-Za-z0-9_.]+)-(?P<version>[^-]+)\.(dist|egg)-info$")


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def installed(
    prefix: Path, names: tuple[str, ...] = ("dask", "distributed", "dask-cuda", "jupyter-gpu-env", "bokeh")
) -> dict[str, str]:
    """The versions of ``names`` installed in ``prefix`` (conda's and pip's alike leave a dist-info)."""
    wanted = set(names)
    found: dict[str, str] = {}
    for site in [*prefix.glob("lib/python3*/site-packages"), prefix / "Lib" / "site-packages"]:
        try:
            entries = list(site.iterdir())
        except OSError:
            continue
        for entry in entries:
            m = _DIST_INFO.match(entry.name)
            if m and _normalized(m["name"]) in wanted:
                found.setdefault(_normalized(m["name"]), m["version"])
    return found


@dataclass(frozen=True)
class Readiness:
    python: str
    distributed: str
    dask_cuda: str | None
    connect_module: bool = False  # jupyter-gpu-env is there too: a notebook can `connect(cluster_id)`


def python_of(prefix: Path) -> Path:
    return prefix / "bin" / "python"


def check(prefix: Path, shown: str | None, *, gpus: bool) -> Readiness:
    """What the cluster will run, or a Conflict naming what the environment lacks and how to add it.

    ``shown`` is the environment's name where it has one (the planned change needs it)."""
    python = python_of(prefix)
    where = f"Environment '{shown}'" if shown else f"The Python at {prefix}"
    if not python.exists():
        raise Conflict(f"{where} has no bin/python.", reason="no_python")
    have = installed(prefix)
    if "distributed" not in have:
        # the dashboard needs bokeh too (the keeper says so when it is missing): added in the same change
        packages = ["distributed"] if "bokeh" in have else ["distributed", "bokeh"]
        also = "" if "bokeh" in have else " (and 'bokeh' for its dashboard)"
        raise Conflict(
            f"{where} does not have the 'distributed' package, which Dask's scheduler and workers need. "
            f"Add it{also} to the environment (the sidebar offers to), then start the cluster again.",
            reason="dask_not_installed",
            details=[{"environment": shown, "prefix": str(prefix), "packages": packages}],
        )
    dask, distributed = have.get("dask"), have["distributed"]
    if dask is not None and dask != distributed:
        raise Conflict(
            f"{where} has dask {dask} but distributed {distributed}; they are released together and must "
            f"match. Install dask=={distributed} (or distributed=={dask}).",
            reason="dask_versions_differ",
            details=[{"environment": shown, "prefix": str(prefix), "packages": [f"dask=={distributed}"]}],
        )
    return Readiness(
        str(python), distributed, have.get("dask-cuda") if gpus else None, "jupyter-gpu-env" in have
    )


Source = Callable[[str], Awaitable[str]]
"""Where a package spec can be added from: ``"conda"`` (the configured channels hold it) or ``"pypi"``."""


async def place(error: Conflict, source: Source | None) -> None:
    """Say in ``error``'s details where each package to add comes from: ``conda`` and ``pip`` lists beside
    ``packages``. Without ``source`` (nothing to ask), every one is a conda package."""
    for detail in error.details or []:
        conda: list[str] = []
        pip: list[str] = []
        for spec in detail.get("packages", []):
            kind = await source(spec) if source is not None else "conda"
            (pip if kind == "pypi" else conda).append(spec)
        detail["conda"], detail["pip"] = conda, pip
