"""Pure: what a cluster's folder tells its scheduler, and the commands scheduler and workers run.

The folder is the whole contract between the server and the cluster, as a job folder is for a job:

- ``cluster.json`` (:class:`ClusterSpec`, the server writes it once): the worker command, the worker
  count or adaptive bounds, timeouts, and ``pool``, what the keeper needs to start workers on its backend;
- ``scale.json`` (the server, on each scale; :class:`ScaleFile`): a newer ``generation`` replaces the count;
- ``stop`` (the server, to shut down): the keeper retires every worker, cancels those pending, and closes;
- ``scheduler.json``: distributed's own scheduler file, written by the scheduler where it runs, so
  workers find the address the scheduler itself chose, not one guessed from the Jupyter server's host;
- ``state.json`` (the keeper, every few seconds; read by the server as untrusted, :mod:`.state`);
- ``gpuenv_dask/``: the keeper's package (:mod:`.incluster`), copied so that the scheduler needs nothing
  of this package where it runs, only ``distributed``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

SPEC_FORMAT = 1
CLUSTER_JSON = "cluster.json"
SCALE_JSON = "scale.json"
STATE_JSON = "state.json"
SCHEDULER_JSON = "scheduler.json"
STOP = "stop"
LOG = "scheduler.log"
KEEPER_PACKAGE = "gpuenv_dask"  # where incluster/ is copied, importable with PYTHONPATH=<folder>
WORKER_LOGS = "workers"  # a folder of one log per worker

MIN_MARGIN = 20  # seconds a worker retires before its walltime, at least
MAX_MARGIN = 300


class Lifetime(BaseModel):
    """When a worker retires (``--lifetime``) and by how much that is spread (``--lifetime-stagger``)."""

    lifetime: int
    stagger: int


def lifetime_for(walltime_seconds: int) -> Lifetime:
    """Workers retire a few minutes under the walltime, staggered so they do not leave together.

    distributed spreads ``--lifetime`` by ±stagger (uniformly), so with a stagger of half the margin a
    worker retires between 1.5 and 0.5 margins before its walltime: never killed by the batch system
    with its data, and its replacement is asked for while the others still run.
    """
    margin = max(MIN_MARGIN, min(MAX_MARGIN, walltime_seconds // 10))
    margin = min(margin, walltime_seconds // 3)  # a very short walltime still leaves most of it to work
    return Lifetime(lifetime=max(1, walltime_seconds - margin), stagger=max(1, margin // 2))


class WorkerShape(BaseModel):
    """What each worker is: threads, memory limit, GPUs, and whether dask-cuda's worker runs it."""

    threads: int = Field(ge=1)
    memory_bytes: int | None = None
    cpus: int | None = None
    gpu_units: float = 0.0  # whole-GPU equivalents (a MIG slice its share), for GPU-hours
    cuda: bool = False  # dask-cuda is in the environment and the worker has a GPU


class ClusterSpec(BaseModel):
    """``cluster.json``."""

    model_config = ConfigDict(extra="forbid")

    format: int = SPEC_FORMAT
    id: str
    name: str
    backend: str
    created_at: float
    folder: str
    python: str | None = Field(
        description="The environment's Python; None when the backend's script opens an image and sets "
        "GPU_ENV_DASK_PYTHON."
    )
    workers: int | None = None
    adapt: dict[str, int] | None = None
    worker: WorkerShape
    walltime_seconds: int
    lifetime: Lifetime
    idle_timeout_seconds: int
    interval_seconds: float = 2.0
    connect_timeout_seconds: int = Field(
        default=300, description="A worker running this long without joining is reported as a problem."
    )
    worker_args: list[str] = Field(description="The worker's arguments after its Python (see worker_args()).")
    pool: dict[str, Any] = Field(
        description="What the keeper needs to start workers: `kind` (local, slurm, kubernetes, operator) "
        "and that kind's settings."
    )


class ScaleFile(BaseModel):
    """``scale.json``."""

    generation: int
    workers: int | None = None
    adapt: dict[str, int] | None = None


def worker_args(folder: Path, shape: WorkerShape, life: Lifetime, *, death_timeout: int = 120) -> list[str]:
    """A worker's command after its Python: ``-m`` the worker (dask-cuda's with GPUs and dask-cuda),
    finding the scheduler by its file. The keeper adds ``--name`` per worker."""
    module: list[str] = (
        ["-m", "dask_cuda.cli", "worker"] if shape.cuda else ["-m", "distributed.cli.dask_worker"]
    )
    args = [*module, "--scheduler-file", str(folder / SCHEDULER_JSON)]
    if shape.cuda:
        # dask-cuda starts one worker per visible GPU, each with one thread; its memory limit is per worker.
        args += ["--nthreads", "1"]
    else:
        args += ["--nthreads", str(shape.threads), "--nworkers", "1"]
    args += ["--memory-limit", str(shape.memory_bytes) if shape.memory_bytes else "auto"]
    args += [
        "--lifetime",
        f"{life.lifetime}s",
        "--lifetime-stagger",
        f"{life.stagger}s",
        "--death-timeout",
        f"{death_timeout}s",
        "--local-directory",
        str(folder / WORKER_LOGS),
    ]
    return args


def scheduler_args(folder: Path, idle_timeout: int, *, interface: str | None = None) -> list[str]:
    """The scheduler's command after its Python: any free port on the interface it picks (or
    ``interface``), a dashboard on any free port, our keeper preloaded, shut down after ``idle_timeout``.
    Run with ``PYTHONPATH=<folder>`` so that the preload imports the copied keeper."""
    args = [
        "-m",
        "distributed.cli.dask_scheduler",
        "--scheduler-file",
        str(folder / SCHEDULER_JSON),
        "--port",
        "0",
        "--dashboard-address",
        ":0",
        "--idle-timeout",
        f"{idle_timeout}s",
        "--preload",
        f"{KEEPER_PACKAGE}.keeper",
    ]
    if interface:
        args += ["--interface", interface]
    return args


def scheduler_env(folder: Path) -> dict[str, str]:
    """What the scheduler's environment adds: the copied keeper importable, the spec found."""
    return {"PYTHONPATH": str(folder), "GPU_ENV_DASK_FOLDER": str(folder)}
