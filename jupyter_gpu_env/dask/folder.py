"""The cluster's folder on the server's side: built aside with its spec and the keeper's package, then
renamed into place (the scheduler never sees half a folder); a scale and a stop asked of the keeper."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from ..system.atomic import write_json_atomic
from .spec import CLUSTER_JSON, KEEPER_PACKAGE, SCALE_JSON, STOP, WORKER_LOGS, ClusterSpec, ScaleFile

INCLUSTER = Path(__file__).with_name("incluster")


def build(folder: Path, spec: ClusterSpec, extra: Callable[[Path], None] | None = None) -> None:
    """Write ``folder`` aside: ``cluster.json``, ``gpuenv_dask/``, ``workers/``, and what ``extra``
    writes there (a backend's scripts); then rename it into place. Runs off the event loop."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = folder.with_name(f".tmp-{folder.name}")
    tmp.mkdir()
    try:
        shutil.copytree(
            INCLUSTER, tmp / KEEPER_PACKAGE, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
        (tmp / WORKER_LOGS).mkdir()
        if extra is not None:
            extra(tmp)
        write_json_atomic(tmp / CLUSTER_JSON, spec.model_dump(mode="json"), durable=True)
        tmp.rename(folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_scale(folder: Path, scale: ScaleFile) -> None:
    write_json_atomic(folder / SCALE_JSON, scale.model_dump(mode="json"), durable=True)


def request_stop(folder: Path) -> None:
    """Ask the keeper to shut the cluster down (it looks every few seconds)."""
    (folder / STOP).touch()
