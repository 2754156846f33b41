"""Seed a notebook's job history for the advice UI test: measured runs written into the running test
server's job store (its ``state_dir``, named in ``runs/port-<port>.state`` by jupyter_server_test_config.py),
as the runner would have recorded them. No test-only route: the records go where real ones go.

    python seed_runs.py NOTEBOOK_PATH TAG   -> prints the seeded job ids as JSON

Two runs of ``NOTEBOOK_PATH`` on a whole H100 that peaked at 2.6 and 3.1 GB and kept it 20-26 % busy,
its energy counter reading 6.0 and 6.7 Wh over their 59 s (about 370-410 W): the advisor's answer is a
1g.10gb slice where the local backend offers one, and a run likely to take 6.3 Wh (their median).
"""

import asyncio
import json
import os
import sys
import time
from pathlib import Path

from jupyter_gpu_env.jobs.store import JobStore
from jupyter_gpu_env.models.jobs import Job, JobGpuDevice, JobGpuUsage
from jupyter_gpu_env.models.resources import JobResources

GB = 10**9
H100 = "NVIDIA H100 80GB HBM3"
H100_BYTES = 85520809984  # as nvidia-smi reports it
# The runs ran a year ago: the advice reads them however old they are, and no usage figure that other
# tests check (the week's line, the weekly chart) counts them; the ledger keeps a deleted job's hours.
LONG_AGO = 365 * 24 * 3600


def state_dir() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    demo = Path(os.environ.get("UI_TEST_DEMO_DIR", Path(cache) / "jupyter-gpu-env" / "ui-tests-demo"))
    port = os.environ.get("UI_TEST_PORT", "27888")
    return Path((demo / "runs" / f"port-{port}.state").read_text().strip())


def run(
    notebook: str, tag: str, n: int, peak: int, mean: float, joules: float, ago: float, state: Path
) -> Job:
    now = time.time()
    job_id = f"{tag}{n:04d}"
    device = JobGpuDevice(name=H100, memory_total_bytes=H100_BYTES)
    return Job(
        id=job_id,
        name=f"advice-{tag}-{n}",
        backend="local",
        state="succeeded",
        notebook_path=notebook,
        job_dir=str(state / "seeded" / job_id),
        input_path="input.ipynb",
        output_path="output.ipynb",
        log_path="log.txt",
        created_at=now - ago,
        started_at=now - ago + 1,
        finished_at=now - ago + 60,
        resources=JobResources(gpus=1),
        gpu=JobGpuUsage(
            available=True,
            devices=[device],
            peak_memory_bytes=peak,
            memory_total_bytes=H100_BYTES,
            mean_utilization_percent=mean,
            peak_utilization_percent=mean + 10,
            energy_joules=joules,
            energy_source="counter",
        ),
    )


async def main(notebook: str, tag: str) -> None:
    state = state_dir()
    store = JobStore(state / "jobs.sqlite")
    jobs = [
        run(notebook, tag, 1, int(2.6 * GB), 20, 21600, LONG_AGO + 300, state),
        run(notebook, tag, 2, int(3.1 * GB), 26, 24000, LONG_AGO + 200, state),
    ]
    try:
        for job in jobs:
            await store.insert(job)
    finally:
        store.close()
    print(json.dumps([job.id for job in jobs]))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
