"""Pure: what a cluster's folder tells its scheduler, and the commands scheduler and workers run.

The folder is the whole contract between the server and the cluster, as a job folder is for a job:

- ``cluster.json`` (:class:`ClusterSpec`, the server writes it once): the worker command, the worker
  count or adaptive bounds, timeouts, and ``pool``, what the keeper needs to start workers on its backend;
- ``scale.json`` (the server, on each scale; :class:`ScaleFile`): a newer ``generation`` replaces the count;
- ``stop`` (the server, to shut down): the keeper retires every worker, cancels those pending, and closes;
- ``scheduler.json``: distributed's own scheduler file, written by the scheduler where it runs, so
  workers find the address the scheduler itself chose, not one guessed from the Jupyter server's host;
- ``state.json`` (the keeper, every few seconds; read by the server as untrusted, :mod:`.state`);
- ``tls/``: the cluster's own authority (``ca.pem``), the certificate it signed (``cluster.pem``) and its
  key (``cluster.key``, the owner's alone), made with the folder (:mod:`.folder`): scheduler, workers
  and clients speak ``tls://`` only and each requires that certificate of the other side;
- ``gpuenv_dask/``: the keeper's package (:mod:`.keeper`), copied so that the scheduler needs nothing
  of this package where it runs, only ``distributed``; ``python -m gpuenv_dask.scheduler`` starts the
  scheduler with the cluster's TLS and the keeper.

Where each listens: on the local backend (one machine, :attr:`Network.loopback`) scheduler, workers and
dashboards bind 127.0.0.1; on a batch system the scheduler binds ``c.DaskClusters.interface`` (or its
own choice) and its dashboard every interface, behind the same mutual TLS, so that only this server's
authenticated proxy (which holds the certificate) reaches it. Workers serve no dashboard.
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
KEEPER_PACKAGE = "gpuenv_dask"  # where keeper/ is copied, importable with PYTHONPATH=<folder>
# The TLS files; keeper/scheduler.py names them too (it cannot import this package where it runs).
TLS_DIR = "tls"
CA_PEM = f"{TLS_DIR}/ca.pem"
CERT_PEM = f"{TLS_DIR}/cluster.pem"
KEY_PEM = f"{TLS_DIR}/cluster.key"
LOOPBACK = "127.0.0.1"
# Set by the server and the CLI for everything they start (kernels, terminals, scripts): the folder of
# the clusters' folders, where jupyter_gpu_env.dask.connect(id) looks first.
DIR_ENV = "JUPYTER_GPU_ENV_DASK_DIR"
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
    together: int = Field(
        default=0,
        ge=0,
        description="Workers started with the scheduler, as steps of its own allocation (one queue wait; "
        "the cluster then ends with that allocation's walltime). 0: the scheduler's job alone, every "
        "worker a job of its own that the keeper submits.",
    )
    pool: dict[str, Any] = Field(
        description="What the keeper needs to start workers: `kind` (local, slurm, kubernetes, operator) "
        "and that kind's settings."
    )


class Network(BaseModel):
    """Where a cluster's processes listen: ``loopback`` where all of them run on this machine (the
    local backend), else the scheduler on ``interface`` (None: its own choice)."""

    loopback: bool = False
    interface: str | None = None

    @classmethod
    def on(cls, interface: str | None) -> Network:
        """A batch system's cluster on ``c.DaskClusters.interface``: ``lo`` (a single-node cluster, as the
        tests run one) puts every process and the dashboard on loopback, as the local backend does."""
        return cls(loopback=interface == "lo", interface=interface)


class ScaleFile(BaseModel):
    """``scale.json``."""

    generation: int
    workers: int | None = None
    adapt: dict[str, int] | None = None


def worker_args(
    folder: Path,
    shape: WorkerShape,
    life: Lifetime | None,
    network: Network,
    *,
    death_timeout: int = 120,
    nanny: bool = True,
) -> list[str]:
    """A worker's command after its Python: ``-m`` the worker (dask-cuda's with GPUs and dask-cuda),
    finding the scheduler by its file, speaking TLS with the cluster's certificate, serving no
    dashboard. The keeper adds ``--name`` per worker.

    ``life`` None and ``nanny`` False for the workers that share the scheduler's allocation
    (:func:`together_args`)."""
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
    if life is not None:
        args += ["--lifetime", f"{life.lifetime}s", "--lifetime-stagger", f"{life.stagger}s"]
    if not nanny:
        args.append("--no-nanny")
    args += [
        "--death-timeout",
        f"{death_timeout}s",
        "--local-directory",
        str(folder / WORKER_LOGS),
        *_tls_args(folder),
        "--no-dashboard",
    ]
    if network.loopback:
        # its HTTP server (health, metrics) still listens: on loopback, with the worker and its nanny
        args += ["--host", LOOPBACK, "--dashboard-address", f"{LOOPBACK}:0"]
    return args


def together_args(folder: Path, shape: WorkerShape, network: Network) -> list[str]:
    """The command of a worker started with the scheduler in its allocation: no ``--lifetime`` (the
    allocation's walltime ends scheduler and workers alike, so there is nothing to retire early for)
    and no nanny. One Python process per worker, as dask-jobqueue's SLURMRunner and dask-mpi start
    them: a nanny is a second interpreter that imports distributed again before the worker can, which
    on a busy node doubles the time to ready. What a nanny would restart the keeper replaces instead,
    as a worker job of its own."""
    return worker_args(folder, shape, None, network, nanny=False)


def _tls_args(folder: Path) -> list[str]:
    return [
        "--protocol",
        "tls",
        "--tls-ca-file",
        str(folder / CA_PEM),
        "--tls-cert",
        str(folder / CERT_PEM),
        "--tls-key",
        str(folder / KEY_PEM),
    ]


def scheduler_args(
    folder: Path, idle_timeout: int, network: Network, *, port: int = 0, dashboard_port: int = 0
) -> list[str]:
    """The scheduler's command after its Python: the keeper's own entry point
    (``keeper/scheduler.py``), which starts distributed's scheduler with the cluster's TLS, its
    dashboard requiring the cluster's certificate, and the keeper preloaded; any free ports unless
    given; shut down after ``idle_timeout``. Run with ``PYTHONPATH=<folder>`` (:func:`scheduler_env`)."""
    dashboard_host = LOOPBACK if network.loopback else ""
    args = [
        "-m",
        f"{KEEPER_PACKAGE}.scheduler",
        "--scheduler-file",
        str(folder / SCHEDULER_JSON),
        "--port",
        str(port),
        "--dashboard-address",
        f"{dashboard_host}:{dashboard_port}",
        "--idle-timeout",
        f"{idle_timeout}s",
    ]
    if network.loopback:
        args += ["--host", LOOPBACK]
    elif network.interface:
        args += ["--interface", network.interface]
    return args


def scheduler_env(folder: Path) -> dict[str, str]:
    """What the scheduler's environment adds: the copied keeper importable, the spec found, and what
    every process of the cluster is told (:func:`worker_env`)."""
    return {"PYTHONPATH": str(folder), "GPU_ENV_DASK_FOLDER": str(folder), **worker_env()}


def worker_env() -> dict[str, str]:
    """What a worker's environment adds: no connection of any of the cluster's processes without TLS,
    and no route on a worker's HTTP server (its health and metrics pages are nobody's business here)."""
    return {
        "DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION": "True",
        "DASK_DISTRIBUTED__WORKER__HTTP__ROUTES": "[]",
    }
