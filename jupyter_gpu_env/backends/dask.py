"""How a backend runs a Dask cluster: the small contract each backend's launcher keeps, and which
launcher a configured backend has.

A launcher starts the scheduler (a batch job of its own, or a process here) in a folder the service has
built, observes every cluster's scheduler in one query, and stops a cluster so that nothing of it is
left (the scheduler and every worker, queued ones included). Workers are the keeper's business once the
scheduler runs (``contracts/dask/keeper/``): ``pool(spec)`` says what the keeper needs to start them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from ..contracts.dask.spec import ClusterSpec, Network


@dataclass(frozen=True)
class Placement:
    """What a cluster asks of its backend, beyond the spec: the queue, each worker's resources."""

    queue: str | None
    cpus: int | None
    memory_bytes: int | None
    gpus: int | None
    mig_profile: str | None
    image: dict[str, str] | None = None  # {"name", "path"} when the cluster runs from a packed image


@dataclass(frozen=True)
class Started:
    """A scheduler handed to its backend: the id the backend knows it by (a SLURM job id, a pid, a
    Kubernetes object's name)."""

    handle: str


@dataclass(frozen=True)
class PendingPlace:
    name: str
    place: int | None
    reason: str | None


@dataclass(frozen=True)
class SchedulerSeen:
    """One scheduler as its backend sees it. ``gone``: the backend knows nothing of it any more."""

    state: Literal["queued", "running", "ended", "gone"]
    host: str | None = None  # where it runs: the only host the dashboard proxy goes to
    place: int | None = None  # its place in the queue while queued
    reason: str | None = None  # why it waits, or how it ended, in words
    workers: Sequence[PendingPlace] = field(default_factory=tuple)  # pending workers' places, where known


@dataclass(frozen=True)
class ClusterRef:
    """What a launcher is told of a cluster it observes or stops."""

    id: str
    folder: Path
    handle: str | None


class DaskLauncher(Protocol):
    name: str
    network: Network  # where the cluster's processes listen (loopback where all run on this machine)

    def check(self, placement: Placement, walltime_seconds: int) -> None:
        """Raise a Conflict (or NotFound for an unknown queue) when the backend cannot run these workers."""

    def pool(self, spec: ClusterSpec, placement: Placement, folder: Path) -> dict[str, Any]:
        """``cluster.json``'s ``pool``: what the keeper needs to start workers; may write scripts into
        ``folder`` (it is being built aside)."""

    async def together(self, spec: ClusterSpec, placement: Placement) -> int:
        """How many of a new cluster's workers start with its scheduler, in one allocation of the
        backend (0: none; the scheduler's job alone, each worker a job the keeper submits)."""

    async def start(self, spec: ClusterSpec, placement: Placement, folder: Path) -> Started:
        """Start the scheduler (the keeper preloaded) in ``folder``, with ``spec.together`` workers
        in its allocation."""

    async def observe(self, clusters: Sequence[ClusterRef]) -> dict[str, SchedulerSeen]:
        """Every given cluster's scheduler, by cluster id, in one query of the backend."""

    async def stop(self, cluster: ClusterRef) -> None:
        """End the scheduler and every worker, pending ones included; return when none is left."""


OperatorChoice = Literal["auto", "always", "never"]


@dataclass(frozen=True)
class DaskSettings:
    """The server's Dask options (``c.DaskClusters.*``), as launchers and the service take them."""

    idle_timeout_seconds: int = 3600
    worker_walltime_seconds: int = 3600
    scheduler_walltime_seconds: int = 7 * 24 * 3600
    max_workers: int = 100
    connect_timeout_seconds: int = 300
    interface: str | None = None  # the network interface the scheduler listens on (None: its default)
    kubernetes_operator: OperatorChoice = "auto"
    one_allocation: bool = True  # a fixed-size cluster that fits one allocation is one job
