"""Dask on SLURM: from the request to N workers ready, ours against dask-jobqueue's SLURMCluster and SLURMRunner.

Needs the single-node SLURM of scripts/slurm-local.sh (root). Started here with 24 declared CPUs when it is
not up (and stopped again), since 16 workers, a scheduler and SLURMRunner's client each take a CPU; when
it is already up with fewer, the counts that do not fit are reported as skipped. Every process binds
127.0.0.1.

- ours: as ``DaskService.create`` starts a cluster, through its launcher: the folder built (the cluster's
  TLS authority and certificate included), ``SlurmLauncher.together`` choosing the shape (one allocation
  by default: every count here fits the node), the batch job submitted. Ready: the keeper's
  ``state.json`` says N workers joined, which is what the server reads (it is written when they join).
- ours, separate jobs (``c.DaskClusters.one_allocation = False``, the shape before): the scheduler's job
  and the first workers' job array submitted together, the workers waiting for the scheduler's address.
- SLURMCluster: as a notebook starts one: ``SLURMCluster(...)`` (the scheduler in the notebook's process),
  ``cluster.scale(N)`` (one sbatch per worker), ``client.wait_for_workers(N)``. Plain TCP, no TLS.
- SLURMRunner: its documented shape, one allocation: ``sbatch`` of ``srun -n N+2 python runner.py``, rank
  0 the scheduler, rank 1 the client, the rest workers; ready is when the client (in the job) sees N
  workers, timed by the wall clock it writes. Plain TCP, no TLS.

1 CPU and 1 GiB per worker, one thread each. The four alternate within each round; the median of
ROUNDS (env BENCH_ROUNDS, default 3) rounds; each cluster is gone from squeue before the next starts.
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

from jupyter_gpu_env.backends.dask import ClusterRef, DaskSettings, Placement
from jupyter_gpu_env.backends.slurm import SlurmBackend
from jupyter_gpu_env.backends.slurm.dask.launcher import SlurmLauncher
from jupyter_gpu_env.contracts.dask import folder as cluster_folder
from jupyter_gpu_env.contracts.dask.spec import ClusterSpec, WorkerShape, lifetime_for, worker_args
from jupyter_gpu_env.contracts.dask.state import read_state

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "slurm-local.sh"
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
COUNTS = (2, 4, 16)
CPUS = 24
MEMORY = 1 << 30
TIMEOUT = 180.0
POLL = 0.02  # how often the bench looks for "ready": the same for all three

RUNNER_TEMPLATE = """
import sys, time
from pathlib import Path
from dask_jobqueue.slurm import SLURMRunner
from distributed import Client

n, out, sfile = int(sys.argv[1]), sys.argv[2], sys.argv[3]
with SLURMRunner(
    scheduler_file=sfile,
    scheduler_options={"host": "127.0.0.1", "dashboard_address": "127.0.0.1:0"},
    worker_options={"host": "127.0.0.1", "nthreads": 1, "memory_limit": MEMORY},
) as runner:
    with Client(runner) as client:
        client.wait_for_workers(n, timeout=TIMEOUT)
        Path(out).write_text(repr(time.time()))
"""
RUNNER = RUNNER_TEMPLATE.replace("MEMORY", str(MEMORY)).replace("TIMEOUT", str(int(TIMEOUT)))


def _cluster(action: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SCRIPT), action], capture_output=True, text=True, check=False, env={**os.environ, **env}
    )


def _squeue_empty(within: float = 120.0) -> None:
    deadline = time.monotonic() + within
    while subprocess.run(["squeue", "-h"], capture_output=True, text=True).stdout.strip():
        if time.monotonic() > deadline:
            left = subprocess.run(["squeue"], capture_output=True, text=True).stdout
            raise RuntimeError(f"jobs still in squeue: {left}")
        time.sleep(0.2)


def _wait(check, what: str) -> float:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + TIMEOUT
    while True:
        if (value := check()) is not None:
            return float(value)
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(POLL)


def ours(conf: str, tmp: Path, n: int, *, one_allocation: bool = True) -> tuple[float, str]:
    settings = DaskSettings(interface="lo", one_allocation=one_allocation)
    launcher = SlurmLauncher(SlurmBackend("slurm", slurm_conf=conf), settings)
    folder = tmp / uuid.uuid4().hex[:8]
    t0 = time.time()
    shape, life = WorkerShape(threads=1, cpus=1, memory_bytes=MEMORY), lifetime_for(600)
    spec = ClusterSpec(
        id=folder.name, name="bench", backend="slurm", created_at=time.time(), folder=str(folder),
        python=sys.executable, workers=n, worker=shape, walltime_seconds=600, lifetime=life,
        idle_timeout_seconds=600, interval_seconds=2.0,
        worker_args=worker_args(folder, shape, life, launcher.network), pool={},
    )  # fmt: skip
    placement = Placement(queue="debug", cpus=1, memory_bytes=MEMORY, gpus=None, mig_profile=None)
    launcher.check(placement, 600)
    spec.together = asyncio.run(launcher.together(spec, placement))
    cluster_folder.build(folder, spec, lambda d: spec.pool.update(launcher.pool(spec, placement, d)))
    handle = asyncio.run(launcher.start(spec, placement, folder)).handle

    def ready() -> float | None:
        try:
            state = read_state(folder)
        except Exception:  # being replaced: read again
            return None
        return time.time() if state is not None and state.running >= n else None

    took = _wait(ready, f"{n} workers of ours") - t0
    asyncio.run(launcher.stop(ClusterRef(spec.id, folder, handle)))
    return took, "one allocation" if spec.together else "scheduler + worker jobs"


def cluster(tmp: Path, n: int) -> float:
    from dask_jobqueue import SLURMCluster
    from distributed import Client

    t0 = time.time()
    with SLURMCluster(
        cores=1, processes=1, memory="1GiB", walltime="00:10:00", queue="debug", python=sys.executable,
        log_directory=str(tmp / "jq"), local_directory=str(tmp / "jq"),
        scheduler_options={"host": "127.0.0.1", "dashboard_address": "127.0.0.1:0"},
        worker_extra_args=["--host", "127.0.0.1"],
    ) as c, Client(c) as client:  # fmt: skip
        c.scale(n)
        client.wait_for_workers(n, timeout=TIMEOUT)
        took = time.time() - t0
    _squeue_empty()
    return took


def runner(tmp: Path, n: int) -> float:
    where = tmp / f"runner-{uuid.uuid4().hex[:8]}"
    where.mkdir()
    (where / "runner.py").write_text(RUNNER)
    out, sfile = where / "ready", where / "scheduler.json"
    wrap = f"srun python {where / 'runner.py'} {n} {out} {sfile}"
    argv = [
        "sbatch", "--parsable", f"--ntasks={n + 2}", "--cpus-per-task=1", f"--mem={n + 2}G",
        "--partition=debug", "--time=10", f"--output={where}/%j.log", f"--chdir={where}",
        f"--export=ALL,PATH={Path(sys.executable).parent}:{os.environ['PATH']}", f"--wrap={wrap}",
    ]  # fmt: skip
    t0 = time.time()
    subprocess.run(argv, check=True, capture_output=True, text=True)

    def ready() -> float | None:
        try:
            return float(out.read_text())
        except (FileNotFoundError, ValueError):
            return None

    took = _wait(ready, f"{n} SLURMRunner workers") - t0
    _squeue_empty()
    return took


def main() -> list[str]:
    was_up = _cluster("status").returncode == 0
    started = _cluster("start", SLURM_LOCAL_CPUS=str(CPUS))
    if started.returncode != 0:
        return [f"skipped: the local SLURM did not start: {started.stderr.strip()[-300:]}"]
    conf = started.stdout.strip().splitlines()[-1]
    os.environ["SLURM_CONF"] = conf  # for dask-jobqueue's sbatch and ours
    node = subprocess.run(["sinfo", "-h", "-o", "%c"], capture_output=True, text=True).stdout.split()
    cpus = max((int(c.rstrip("+")) for c in node if c.rstrip("+").isdigit()), default=0)
    lines = [
        "| N | ours (shape) | ours, separate jobs | SLURMCluster | SLURMRunner | ours / SLURMCluster "
        "| ours / SLURMRunner |",
        "| --- | --- | --- | --- | --- | ---: | ---: |",
    ]
    try:
        with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as t:
            tmp = Path(t)
            for n in COUNTS:
                if n + 2 > cpus:
                    lines.append(
                        f"| {n} | skipped: the running SLURM declares {cpus} CPUs, {n + 2} needed |||||| "
                    )
                    continue
                a: list[float] = []
                d: list[float] = []
                b: list[float] = []
                c: list[float] = []
                shape = ""
                for _ in range(ROUNDS):
                    took, shape = ours(conf, tmp, n)
                    a.append(took)
                    d.append(ours(conf, tmp, n, one_allocation=False)[0])
                    b.append(cluster(tmp, n))
                    c.append(runner(tmp, n))
                ma, md, mb, mc = (statistics.median(x) for x in (a, d, b, c))
                lines.append(
                    f"| {n} | {ma:.2f} s ({shape}) | {md:.2f} s | {mb:.2f} s | {mc:.2f} s | {ma / mb:.2f}x "
                    f"| {ma / mc:.2f}x |"
                )
                rounds = {"ours": a, "separate": d, "SLURMCluster": b, "SLURMRunner": c}
                lines.append(
                    f"<!-- N={n} rounds: "
                    + ", ".join(f"{k} {[round(x, 2) for x in v]}" for k, v in rounds.items())
                    + " -->"
                )
    finally:
        if not was_up:
            _cluster("stop")
    return lines


if __name__ == "__main__":
    print("\n".join(main()))
