"""``c.DaskClusters.*``: how Dask clusters run, declared once with their help and defaults (rendered
into docs/configuration.md with the other options)."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from traitlets import Bool, Enum, Int, Unicode
from traitlets.config import Configurable

from ..backends.dask import DaskSettings, OperatorChoice


class DaskClusters(Configurable):
    dir = Unicode(
        "",
        config=True,
        help="Where each Dask cluster's folder (its spec, the scheduler's address file, the keeper's state, "
        "logs) is created; on a shared filesystem for cluster backends, since scheduler and workers read "
        "it. Default: `dask` inside c.GpuEnvApp.job_dir.",
    )
    idle_timeout = Int(
        3600,
        min=60,
        config=True,
        help="Seconds a Dask cluster may sit unused (no task running or queued) before its scheduler shuts "
        "it down, workers included. Its scheduler enforces it, so it holds with no Jupyter server.",
    )
    worker_walltime = Int(
        60,
        min=1,
        config=True,
        help="Minutes each Dask worker job may run when the request gives no walltime. Workers retire a "
        "few minutes before it, staggered, and are replaced.",
    )
    scheduler_walltime = Int(
        24 * 60,
        min=1,
        config=True,
        help="Minutes a Dask cluster's scheduler job may run (SLURM's --time for it); the cluster ends then.",
    )
    max_workers = Int(
        100,
        min=1,
        max=1000,
        config=True,
        help="The most workers one Dask cluster may ask for (a count, or adapt's maximum): more is a 409.",
    )
    connect_timeout = Int(
        300,
        min=10,
        config=True,
        help="Seconds a started worker may take to join its scheduler before the cluster reports it as a "
        "problem (most often: the workers' nodes cannot reach the scheduler's).",
    )
    interface = Unicode(
        "",
        config=True,
        help="The network interface a Dask scheduler listens on (e.g. `ib0`), where the default one is "
        "not the one workers reach. Default: the scheduler's own choice. Its dashboard listens on every "
        "interface (this server's proxy reaches it at the node's name); both require the cluster's own "
        "certificate of every client. `lo` puts the scheduler, its dashboard and the workers on loopback: "
        "for a single-node cluster only. The local backend's clusters are always on loopback.",
    )
    kubernetes_operator = Enum(
        ["auto", "always", "never"],
        default_value="auto",
        config=True,
        help="On Kubernetes, run Dask clusters through the dask-kubernetes operator's DaskCluster: `auto` "
        "when its CRD is installed; otherwise the scheduler and workers are Jobs admitted by Kueue.",
    )

    one_allocation = Bool(
        True,
        config=True,
        help="Start a fixed-size Dask cluster as one allocation: on SLURM, where its scheduler and workers fit "
        "one node of the queue, one batch job (the scheduler in its batch step, the workers one srun step); "
        "on Kubernetes without the operator, for workers without GPUs, one Indexed Job that Kueue admits "
        "whole. One queue wait, the workers connect as soon as the scheduler listens, and the cluster ends "
        "at its walltime. Adaptive clusters, larger ones, and workers with a MIG slice or dask-cuda have the "
        "scheduler in a job of its own and each worker in another. False: always that shape.",
    )

    def root(self, job_dir: Path) -> Path:
        """The folder holding the clusters' folders, for jobs kept in ``job_dir``."""
        return Path(self.dir) if self.dir else job_dir / "dask"

    def settings(self) -> DaskSettings:
        return DaskSettings(
            idle_timeout_seconds=self.idle_timeout,
            worker_walltime_seconds=self.worker_walltime * 60,
            scheduler_walltime_seconds=self.scheduler_walltime * 60,
            max_workers=self.max_workers,
            connect_timeout_seconds=self.connect_timeout,
            interface=self.interface or None,
            kubernetes_operator=cast(OperatorChoice, self.kubernetes_operator),
            one_allocation=self.one_allocation,
        )
