"""Before a cluster starts: the environment its scheduler and workers run in has ``distributed``, of the
version its ``dask`` needs, and (for GPU workers) whether it has ``dask-cuda``. Read from the prefix's
installed distributions, without starting its Python; a missing package is a 409 that names what to add,
which the sidebar offers to add through the environment's planned change."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import Conflict

_DIST_INFO = re.compile(r"^(?P<name>[A-Za-z0-9_.]+)-(?P<version>[^-]+)\.(dist|egg)-info$")


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def installed(
    prefix: Path, names: tuple[str, ...] = ("dask", "distributed", "dask-cuda", "jupyter-gpu-env")
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
        raise Conflict(
            f"{where} does not have the 'distributed' package, which Dask's scheduler and workers need. "
            "Add it to the environment (the sidebar offers to), then start the cluster again.",
            reason="dask_not_installed",
            details=[{"environment": shown, "prefix": str(prefix), "packages": ["distributed"]}],
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
