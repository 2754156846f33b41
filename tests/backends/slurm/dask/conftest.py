"""Dask clusters on the real single-node SLURM the batch tests start (``slurm_conf``), and how a test
builds one: the cluster folder through ``dask.folder.build`` with the launcher's pool, the scheduler
started by the launcher."""

from __future__ import annotations

import asyncio
import sys
import time
import uuid
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

from distributed import Client, Security
from helpers import wait_until_sync
from intruder import assert_all_refused, attempts_as_nobody

from jupyter_gpu_env.backends.dask import ClusterRef, DaskSettings, Placement
from jupyter_gpu_env.backends.slurm import SlurmBackend
from jupyter_gpu_env.backends.slurm.dask.launcher import SlurmLauncher
from jupyter_gpu_env.contracts.dask import folder as cluster_folder
from jupyter_gpu_env.contracts.dask.spec import (
    CA_PEM,
    CERT_PEM,
    KEY_PEM,
    ClusterSpec,
    Network,
    ScaleFile,
    WorkerShape,
    lifetime_for,
    worker_args,
)
from jupyter_gpu_env.contracts.dask.state import KeeperState, read_state

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def launcher(conf: str, **settings: Any) -> SlurmLauncher:
    """The cluster on loopback (``lo``): this SLURM's one node is this machine, and tests bind nothing else."""
    settings.setdefault("interface", "lo")
    backend = SlurmBackend("slurm", slurm_conf=conf, command_timeout=20.0)
    return SlurmLauncher(backend, DaskSettings(**settings))


def make_spec(
    folder: Path, network: Network, *, workers: int, walltime: int, cpus: int = 1, idle: int = 600
) -> ClusterSpec:
    shape = WorkerShape(threads=1, cpus=cpus, memory_bytes=1 << 30)
    life = lifetime_for(walltime)
    return ClusterSpec(
        id=uuid.uuid4().hex[:12],
        name=folder.name,
        backend="slurm",
        created_at=time.time(),
        folder=str(folder),
        python=sys.executable,
        workers=workers,
        worker=shape,
        walltime_seconds=walltime,
        lifetime=life,
        idle_timeout_seconds=idle,
        interval_seconds=1.0,
        worker_args=worker_args(folder, shape, life, network),
        pool={},
    )


class Cluster:
    """One cluster started on SLURM by the launcher, as the service starts one."""

    def __init__(
        self,
        launch: SlurmLauncher,
        folder: Path,
        workers: int,
        walltime: int,
        *,
        one_allocation: bool = False,
        **placed: Any,
    ) -> None:
        self.launcher = launch
        self.folder = folder
        self.spec = make_spec(folder, launch.network, workers=workers, walltime=walltime)
        self.placement = Placement(
            queue=placed.get("queue"), cpus=1, memory_bytes=1 << 30, gpus=placed.get("gpus"), mig_profile=None
        )
        launch.check(self.placement, walltime)
        if one_allocation:  # as the service asks: the launcher says whether it fits (here, from sinfo)
            self.spec.together = run(launch.together(self.spec, self.placement))

        def scripts(tmp: Path) -> None:  # the pool section, with worker.sbatch written aside
            self.spec.pool.update(launch.pool(self.spec, self.placement, tmp))

        cluster_folder.build(folder, self.spec, scripts, valid_seconds=3600)
        self.handle = run(launch.start(self.spec, self.placement, folder)).handle
        self.ref = ClusterRef(self.spec.id, folder, self.handle)

    def security(self) -> Security:
        """What the owner's client presents: the cluster's own certificate."""
        return Security(
            tls_ca_file=str(self.folder / CA_PEM),
            tls_client_cert=str(self.folder / CERT_PEM),
            tls_client_key=str(self.folder / KEY_PEM),
            require_encryption=True,
        )

    def client(self) -> Client:
        """The owner's client, once the scheduler has written its address file."""
        wait_until_sync(
            lambda: (self.folder / "scheduler.json").exists(), within=60, every=0.2, what="the scheduler file"
        )
        return Client(
            scheduler_file=str(self.folder / "scheduler.json"), security=self.security(), timeout=30
        )

    def assert_refused_to_others(self) -> None:
        """Another user of the scheduler's node reaches its ports (here loopback); each refuses them
        without the cluster's certificate."""
        state = self.state()
        assert state is not None and state.address and state.address.startswith("tls://127.0.0.1:")
        assert state.dashboard_port
        assert_all_refused(attempts_as_nobody(state.address, state.dashboard_port), dashboard=True)

    def state(self) -> KeeperState | None:
        return read_state(self.folder)

    def scale(self, generation: int, workers: int) -> None:
        cluster_folder.write_scale(self.folder, ScaleFile(generation=generation, workers=workers))
