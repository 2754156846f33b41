"""Dask section's polling: `GET dask/clusters` with 3 clusters of 100 workers, against the Jobs section's poll of as many running jobs.

What the section costs the server per poll, in process (no HTTP, which is the same for both). Ours:
`DaskService.list()` over 3 running clusters whose keepers report 100 workers each (70 running, 30
pending with their queue places, 100 worker spans each: the state.json a 100-worker cluster writes),
their schedulers observed through the local launcher (one process lookup each), the spans written to
the usage ledger as the loop does. The baseline is what the Jobs section's poll costs for the same 300
batch workers shown as 300 running jobs: `JobService.list(limit=300)` over a store holding them. Both
measured alternately in the same run, median of 30 after 3 warm-ups; with the answers' JSON sizes and
what polling every 10 s (the section's interval while nothing starts or stops) costs a core.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from jupyter_gpu_env.backends.dask import DaskSettings
from jupyter_gpu_env.backends.local import LocalBackend
from jupyter_gpu_env.dask.records import ClusterRecord
from jupyter_gpu_env.dask.service import DaskService
from jupyter_gpu_env.jobs.service import JobService
from jupyter_gpu_env.jobs.store import JobStore
from jupyter_gpu_env.models.jobs import Job
from jupyter_gpu_env.models.resources import JobResources

CLUSTERS, WORKERS, RUNS, WARM = 3, 100, 30, 3
INTERVAL = 10.0  # DASK_REFRESH_INTERVAL of labextension/src/dask/model.ts


def _state(now: float) -> dict[str, object]:
    running, pending = 70, WORKERS - 70
    return {
        "format": 1,
        "updated": now,
        "started": now - 3600,
        "host": "node1",
        "pid": os.getpid(),
        "address": "tcp://10.0.0.5:40000",
        "dashboard_port": 8787,
        "state": "running",
        "requested": WORKERS,
        "running": running,
        "pending": [{"name": f"900_{i}", "state": "queued", "reason": "Priority"} for i in range(pending)],
        "pending_count": pending,
        "started_total": WORKERS,
        "spans": [[f"900_{i}", now - 3000 + i, None] for i in range(running)]
        + [[f"800_{i}", now - 3500, now - 3100] for i in range(WORKERS - running)],
        "worker_seconds": 250_000.0,
        "versions": {"python": "3.11.7", "distributed": "2026.8.0"},
        "problems": [],
    }


async def _measure(call) -> tuple[float, int]:  # type: ignore[no-untyped-def]
    t = time.process_time()
    answer = await call()
    return time.process_time() - t, len(answer.model_dump_json())


async def _run(tmp: Path) -> list[str]:
    store = JobStore(tmp / "jobs.sqlite")
    jobs = JobService(store, {"local": LocalBackend()}, tmp, "jobs", kernel_names=lambda: {"python3"})
    now = time.time()
    await store.insert_many(
        Job(
            id=f"{i:012x}",
            name=f"worker-{i}",
            backend="local",
            state="running",
            notebook_path="a.ipynb",
            job_dir=f"jobs/a-{i}",
            input_path=f"jobs/a-{i}/input.ipynb",
            output_path=f"jobs/a-{i}/a.ipynb",
            log_path=f"jobs/a-{i}/log.txt",
            resources=JobResources(cpus=2),
            created_at=now - 3600,
            started_at=now - 3500,
            backend_job_id=str(os.getpid()),  # a live pid: the records look running, as they would
        )
        for i in range(CLUSTERS * WORKERS)
    )
    dask = DaskService(
        jobs,
        tmp / "dask",
        DaskSettings(),
        environments=lambda n: None,
        kernel_python=lambda n: None,
        images=lambda n: None,
    )
    sleepers = []
    for c in range(CLUSTERS):
        folder = tmp / "dask" / f"c{c}"
        folder.mkdir(parents=True)
        (folder / "state.json").write_text(json.dumps(_state(now)))
        # a live process whose command names the cluster's scheduler file: what the launcher looks for
        sleepers.append(
            subprocess.Popen(  # noqa: ASYNC220 - set-up, not measured
                [sys.executable, "-c", "import time; time.sleep(3600)", str(folder / "scheduler.json")]
            )
        )
        await dask.records.insert(
            ClusterRecord(
                id=f"{c:012x}",
                name=f"cluster-{c}",
                backend="local",
                folder=str(folder),
                handle=str(sleepers[c].pid),
                created_at=now - 3600,
                state="running",
                resources=JobResources(cpus=2),
                threads_per_worker=2,
                walltime_seconds=7200,
                lifetime_seconds=6900,
                idle_timeout_seconds=3600,
                workers=WORKERS,
            )
        )
    ours, theirs = [], []
    size_ours = size_theirs = 0
    for i in range(WARM + RUNS):
        a, size_ours = await _measure(dask.list)
        b, size_theirs = await _measure(lambda: jobs.list(limit=CLUSTERS * WORKERS))
        if i >= WARM:
            ours.append(a)
            theirs.append(b)
    await jobs.stop()
    for sleeper in sleepers:
        sleeper.kill()
        sleeper.wait()
    o, t = statistics.median(ours), statistics.median(theirs)
    return [
        f"{CLUSTERS} clusters x {WORKERS} workers: {o * 1000:.2f} ms CPU per poll, {size_ours / 1024:.0f} KiB; "
        f"{o / INTERVAL * 100:.3f}% of a core polled every {INTERVAL:.0f} s",
        f"baseline, {CLUSTERS * WORKERS} running jobs listed: {t * 1000:.2f} ms CPU, {size_theirs / 1024:.0f} KiB",
        f"ratio ours/baseline: CPU {o / t:.2f}x, bytes {size_ours / size_theirs:.2f}x",
    ]


def main() -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        return asyncio.run(_run(Path(tmp)))


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    print("\n".join(main()))
