"""Dask on SLURM: click-to-N-workers-ready with our launcher against dask-jobqueue's SLURMCluster.

Needs the single-node SLURM of scripts/slurm-local.sh (started here when it is not up, and stopped again;
root). Ours: the cluster folder built, SlurmLauncher submitting the first workers' job array and the
scheduler's batch job together (the keeper adopts the workers); timed until a client sees N workers. Baseline: dask-jobqueue's
SLURMCluster as a notebook starts it (the scheduler in the notebook's process, one sbatch per worker):
`SLURMCluster(...)`, `cluster.scale(N)`, `client.wait_for_workers(N)`. Same resources (1 CPU, 1 GiB per
worker), interleaved, each cluster shut down before the next.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from distributed import Client

from jupyter_gpu_env.backends.dask import ClusterRef, DaskSettings, Placement
from jupyter_gpu_env.backends.slurm import SlurmBackend
from jupyter_gpu_env.backends.slurm.dask.launcher import SlurmLauncher
from jupyter_gpu_env.contracts.dask import folder as cluster_folder
from jupyter_gpu_env.contracts.dask.spec import ClusterSpec, WorkerShape, lifetime_for, worker_args

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "slurm-local.sh"
ROUNDS = 3


def _cluster(action: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(SCRIPT), action], capture_output=True, text=True, check=False)


def ours(conf: str, tmp: Path, n: int) -> float:
    launcher = SlurmLauncher(SlurmBackend("slurm", slurm_conf=conf), DaskSettings())
    folder = tmp / uuid.uuid4().hex[:8]
    t0 = time.perf_counter()
    shape, life = WorkerShape(threads=1, cpus=1, memory_bytes=1 << 30), lifetime_for(600)
    spec = ClusterSpec(
        id=folder.name, name="bench", backend="slurm", created_at=time.time(), folder=str(folder),
        python=sys.executable, workers=n, worker=shape, walltime_seconds=600, lifetime=life,
        idle_timeout_seconds=600, interval_seconds=1.0, worker_args=worker_args(folder, shape, life), pool={},
    )  # fmt: skip
    placement = Placement(queue="debug", cpus=1, memory_bytes=1 << 30, gpus=None, mig_profile=None)
    launcher.check(placement, 600)
    cluster_folder.build(folder, spec, lambda d: spec.pool.update(launcher.pool(spec, placement, d)))
    handle = asyncio.run(launcher.start(spec, placement, folder)).handle
    while not (folder / "scheduler.json").exists():
        time.sleep(0.05)
    with Client(scheduler_file=str(folder / "scheduler.json"), timeout=60) as client:
        client.wait_for_workers(n, timeout=120)
        took = time.perf_counter() - t0
    asyncio.run(launcher.stop(ClusterRef(spec.id, folder, handle)))
    return took


def jobqueue(tmp: Path, n: int) -> float:
    from dask_jobqueue import SLURMCluster

    t0 = time.perf_counter()
    with SLURMCluster(
        cores=1, processes=1, memory="1GiB", walltime="00:10:00", queue="debug", python=sys.executable,
        log_directory=str(tmp / "jq"), local_directory=str(tmp / "jq"),
    ) as cluster, Client(cluster) as client:  # fmt: skip
        cluster.scale(n)
        client.wait_for_workers(n, timeout=120)
        took = time.perf_counter() - t0
    return took


def main() -> list[str]:
    was_up = _cluster("status").returncode == 0
    started = _cluster("start")
    if started.returncode != 0:
        return [f"skipped: the local SLURM did not start: {started.stderr.strip()[-300:]}"]
    conf = started.stdout.strip().splitlines()[-1]
    os.environ["SLURM_CONF"] = conf  # for dask-jobqueue's sbatch
    lines = []
    try:
        with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as t:
            tmp = Path(t)
            for n in (2, 4):
                a, b = [], []
                for _ in range(ROUNDS):
                    a.append(ours(conf, tmp, n))
                    b.append(jobqueue(tmp, n))
                ma, mb = statistics.median(a), statistics.median(b)
                lines.append(
                    f"N={n}: ours {ma:.2f} s (p50 of {ROUNDS}), dask-jobqueue {mb:.2f} s; ratio {ma / mb:.2f}x"
                )
    finally:
        if not was_up:
            _cluster("stop")
    return lines


if __name__ == "__main__":
    print("\n".join(main()))
