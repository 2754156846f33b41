"""Dask clusters on the batch system: what a cluster is asked to be, a scale, and the cluster as it stands.

The scheduler runs as a batch job of its own and keeps its workers itself (``contracts/dask/keeper/``), so a
cluster outlives the Jupyter server that started it; these are the server's view of it.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field, model_validator
from pydantic.config import JsonDict

from ..common import ApiModel, Page
from ..fields import line, patterned, whole_number
from ..jobs import BackendName, EnvRef, ImageId, KernelName, QueueName
from ..resources import MAX_TIME_MINUTES, JobResources, Resources, TimeLimitText, parse_time_limit

MAX_WORKERS = 1000  # the schema's ceiling; c.DaskClusters.max_workers is the one that applies
CLUSTER_ID_PATTERN = r"^[0-9a-f]{12}$"

ClusterState = Literal["starting", "running", "stopping", "stopped", "failed"]
ClusterId = Annotated[str, patterned(CLUSTER_ID_PATTERN, "cluster id", hint="12 hexadecimal digits")]
WorkerCount = Annotated[int, whole_number("workers", 0, MAX_WORKERS)]


class DaskAdapt(ApiModel):
    """Adaptive scaling: the cluster asks for as many workers as its work needs, between these bounds."""

    minimum: WorkerCount = Field(default=0, description="Workers kept even when idle.")
    maximum: Annotated[int, whole_number("maximum", 1, MAX_WORKERS)] = Field(
        description="Workers asked for at most.", examples=[10]
    )

    @model_validator(mode="after")
    def _ordered(self) -> DaskAdapt:
        if self.minimum > self.maximum:
            raise ValueError(f"adapt: minimum ({self.minimum}) is above maximum ({self.maximum})")
        return self


def _given(name: str, kind: str) -> JsonDict:
    return {"required": [name], "properties": {name: {"type": kind}}}


_NOT_BOTH: JsonDict = {
    "not": {
        "required": ["workers", "adapt"],
        "properties": {"workers": {"type": "integer"}, "adapt": {"type": "object"}},
    }
}


def _workers_or_adapt(workers: int | None, adapt: DaskAdapt | None) -> None:
    if workers is not None and adapt is not None:
        raise ValueError("give either a number of workers or adapt: {minimum, maximum}, not both")


class DaskClusterRequest(ApiModel):
    """`POST dask/clusters`: a Dask cluster whose scheduler and workers run on a backend, in an environment."""

    model_config = ConfigDict(
        json_schema_extra={
            "oneOf": [_given("environment", "string"), _given("kernel", "string"), _given("image", "string")],
            **_NOT_BOTH,
        }
    )

    name: Annotated[str, line("name", max_length=100, min_length=1)] | None = Field(
        default=None, description="Shown in lists and the usage ledger (default: the environment's name)."
    )
    environment: EnvRef | None = Field(
        default=None,
        description="The environment scheduler and workers run in (one of environment, "
        "kernel or image; the sidebar fills in the open notebook's).",
    )
    kernel: KernelName | None = Field(
        default=None, description="A kernel whose Python scheduler and workers run (its environment)."
    )
    image: ImageId | None = Field(default=None, description="A packed image scheduler and workers run from.")
    backend: BackendName = Field(default="local", description="Where the cluster runs (`GET backends`).")
    workers: WorkerCount | None = Field(
        default=None, description="A fixed number of workers (default 1, unless adapt is given)."
    )
    adapt: DaskAdapt | None = Field(default=None, description="Adaptive scaling instead of a fixed number.")
    resources: Resources = Field(
        default_factory=Resources,
        description="What each worker asks of the backend, as a job does: cpus, memory, gpus or mig_profile, "
        "and `time_limit`, how long each worker job may run (minutes, or 'HH:MM:SS'): workers retire a few "
        "minutes before it, staggered, and are replaced (default: c.DaskClusters.worker_walltime).",
    )
    walltime: (
        Annotated[int, whole_number("walltime in minutes", 1, MAX_TIME_MINUTES)] | TimeLimitText | None
    ) = Field(
        default=None,
        json_schema_extra={"deprecated": True},  # in the document; pydantic's own flag warns on each read
        description="The older name of `resources.time_limit` (one word for a time limit, as jobs have), "
        "still read; giving both with different values is refused.",
    )
    queue: QueueName | None = Field(
        default=None, description="The partition or queue the scheduler and workers go to."
    )
    threads_per_worker: Annotated[int, whole_number("threads per worker", 1, 1024)] | None = Field(
        default=None, description="Threads in each worker (default: its cpus, else 1)."
    )

    @model_validator(mode="after")
    def _consistent(self) -> DaskClusterRequest:
        given = [k for k in ("environment", "kernel", "image") if getattr(self, k)]
        if len(given) != 1:
            raise ValueError(
                "give the environment (or kernel, or packed image) the workers run in"
                if not given
                else f"give one of environment, kernel or image, not {' and '.join(given)}"
            )
        _workers_or_adapt(self.workers, self.adapt)
        old, new = self.walltime, self.resources.time_limit
        if old is not None and new is not None and parse_time_limit(old) != parse_time_limit(new):
            raise ValueError(
                f"the time limit ({new}) and walltime ({old}) differ: give the time limit alone (walltime is its "
                "older name)"
            )
        return self

    @property
    def time_limit(self) -> int | str | None:
        """Each worker's time limit as given, under either name."""
        return self.resources.time_limit if self.resources.time_limit is not None else self.walltime


class DaskScaleRequest(ApiModel):
    """`POST dask/clusters/{id}/scale`: a fixed number of workers, or adaptive bounds."""

    model_config = ConfigDict(
        json_schema_extra={"anyOf": [_given("workers", "integer"), _given("adapt", "object")], **_NOT_BOTH}
    )

    workers: WorkerCount | None = Field(default=None, examples=[3])
    adapt: DaskAdapt | None = None

    @model_validator(mode="after")
    def _one(self) -> DaskScaleRequest:
        _workers_or_adapt(self.workers, self.adapt)
        if self.workers is None and self.adapt is None:
            raise ValueError("give workers (a number) or adapt: {minimum, maximum}")
        return self


class DaskPendingWorker(ApiModel):
    """A worker asked for that has not joined the scheduler yet."""

    name: str = Field(description="The batch system's name for it (a SLURM array task, a pod, a process).")
    state: Literal["queued", "starting"] = Field(
        description="`queued`: waiting for the batch system; `starting`: running, not joined yet."
    )
    place: int | None = Field(default=None, description="Its place in the queue (1 is next), where known.")
    reason: str | None = Field(default=None, description="Why it waits, in the batch system's words.")


class DaskWorkers(ApiModel):
    requested: int = Field(description="Workers the cluster wants now (fixed, or adapt's current target).")
    running: int = Field(description="Workers joined to the scheduler.")
    pending: int = Field(description="Workers asked for that have not joined yet.")
    pending_workers: list[DaskPendingWorker] = Field(
        default_factory=list, description="The pending workers (at most 100), with their queue places."
    )
    started_total: int = Field(
        default=0, description="Workers started over the cluster's life, replacements included."
    )
    in_allocation: int = Field(
        default=0,
        description="Of the running and pending workers, those started in the scheduler's own allocation; "
        "the others are batch jobs of their own.",
    )


class DaskVersions(ApiModel):
    python: str | None = None
    distributed: str | None = None
    dask_cuda: str | None = Field(default=None, description="Set when GPU workers run dask-cuda's worker.")


class DaskTls(ApiModel):
    """The cluster's own TLS files, which every client presents and requires (mutual TLS); the key is
    readable by its owner alone."""

    ca_file: str = Field(description="The cluster's own certificate authority.")
    cert_file: str = Field(description="The certificate scheduler, workers and clients present.")
    key_file: str = Field(description="Its key (mode 0600).")


class DaskCluster(ApiModel):
    """A Dask cluster as it stands: its scheduler's address, its dashboard through this server, its workers."""

    id: ClusterId
    name: str
    backend: str
    state: ClusterState = Field(
        description="`starting` until the scheduler runs; `stopping` while it is being shut down; "
        "`stopped` when shut down (by its user, or idle); `failed` when it ended otherwise (the message says how)."
    )
    message: str = Field(default="", description="What the cluster is doing or why it ended, in words.")
    environment: str | None = None
    kernel: str | None = None
    image: str | None = None
    queue: str | None = None
    scheduler_address: str | None = Field(
        default=None,
        description="What a client connects to (`tls://…`), as the scheduler itself reported it, with the "
        "cluster's certificate (`tls`).",
    )
    tls: DaskTls | None = Field(
        default=None, description="The files a client presents; null for a cluster made without TLS."
    )
    client_code: str | None = Field(
        default=None,
        description="Python that connects a `distributed.Client` to the cluster from a notebook: "
        "`jupyter_gpu_env.dask.connect(id)` where its environment has jupyter-gpu-env, else "
        "`Client(address, security=Security(...))` with the cluster's files.",
    )
    dashboard: str | None = Field(
        default=None, description="The dashboard's status page through this server (a path under base_url)."
    )
    workers: DaskWorkers
    layout: Literal["one_allocation", "separate_jobs", "processes"] = Field(
        default="separate_jobs",
        description="`one_allocation`: the scheduler and its workers started as one batch job (one queue "
        "wait; the cluster ends at its walltime), and any worker beyond them a job of its own; "
        "`separate_jobs`: the scheduler a job of its own, and each worker another; `processes`: "
        "processes on the Jupyter server's machine (the local backend).",
    )
    adapt: DaskAdapt | None = None
    resources: JobResources = Field(description="What each worker asked for.")
    threads_per_worker: int
    walltime_seconds: int
    lifetime_seconds: int = Field(description="Each worker retires after about this long, staggered.")
    idle_timeout_seconds: int = Field(description="The scheduler shuts down after this long unused.")
    created_at: float
    started_at: float | None = None
    ended_at: float | None = None
    idle_since: float | None = Field(default=None, description="Since when nothing has run, when idle.")
    worker_hours: float = Field(default=0.0, description="Hours of worker time so far.")
    gpu_hours: float = Field(default=0.0, description="GPU-hours allocated to its workers so far.")
    versions: DaskVersions = Field(default_factory=DaskVersions)
    problems: list[str] = Field(
        default_factory=list,
        description="What the scheduler noticed that needs attention (a worker that "
        "cannot reach it, versions that differ), newest last.",
    )


class DaskClusterList(Page[DaskCluster]):
    """Clusters, those not ended first, then newest first."""
