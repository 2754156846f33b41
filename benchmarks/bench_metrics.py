"""`GET /metrics` with 10,000 job records against none, and against Jupyter Server's own /metrics.

Jupyter Server renders /metrics on its event loop from prometheus_client's registry, into which the
extension puts its collector; the collector serves the last reading of the job records, which a timer
takes on the database's thread. So the page should cost the same with 10,000 records as with none, and
little more than Jupyter Server's own series. Three real `jupyter server` processes on loopback, one
after the other, each asked 300 times in sequence after a warm-up:

1. the extension with 10,000 records (an H100's MIG slices from the recorded capture where
   ../shared has it, so the live GPU series are there too);
2. the same store read every 0.25 s instead of every 30 s, with a job running on a GPU, so every round
   reads all of it while pages are served;
3. the extension with an empty store;
4. the extension with `c.GpuEnvApp.metrics_interval = 0` (no collector): Jupyter Server's own page.

Then, in-process, the reading itself at 10,000 records (`MetricsRecords.read`, on the metrics' own
connection and thread): a full one (a round while a job runs on a GPU, or after a write), and one that
finds nothing changed (an idle server). Target: the page under 50 ms.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from _server import jupyter_server, latencies, summary

N_RECORDS = 10_000
N = 300
CAPTURE = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "fixtures"
    / "gpu"
    / "nvgpuexp-capture-h100-mig-590.48.01.txt"
)


def records(n: int) -> list:
    """``n`` ended jobs of two backends over the last 60 days, half on a GPU with its runner's summary,
    a few on a MIG slice, one in ten deleted afterwards (returned apart)."""
    from jupyter_gpu_env.models.jobs import Job
    from jupyter_gpu_env.models.resources import JobResources

    rng = random.Random(40)
    now = time.time()
    jobs = []
    for i in range(n):
        jid = uuid.UUID(int=rng.getrandbits(128)).hex[:12]
        created = now - 60 * 86400 + i * (60 * 86400 / n)
        started = created + rng.expovariate(1 / 300)
        ran = rng.uniform(60, 4 * 3600)
        gpu = None
        resources = JobResources(cpus=4)
        if i % 2 == 0:
            resources = (
                JobResources(cpus=4, gpus=1) if i % 10 else JobResources(cpus=2, mig_profile="1g.10gb")
            )
            mean = rng.uniform(0, 100)
            gpu = {
                "available": True,
                "samples": int(ran / 5),
                "interval_seconds": 5.0,
                "mean_utilization_percent": None if i % 10 == 0 else round(mean, 1),
                "idle_fraction": round(rng.random(), 3),
                "gpu_hours_allocated": round(ran / 3600, 6),
                "gpu_hours_used": round(ran / 3600 * mean / 100, 6),
                "peak_memory_bytes": rng.randrange(1 << 30, 80 << 30),
                "updated_at": started + ran,
            }
        folder = f"gpu-env-jobs/seed-{jid}"
        jobs.append(
            Job(
                id=jid,
                name=f"seed-{i}",
                backend="local" if i % 3 else "slurm",
                state=rng.choice(["succeeded"] * 8 + ["failed", "cancelled"]),
                notebook_path=f"project/train-{i % 50}.ipynb",
                job_dir=folder,
                input_path=f"{folder}/input.ipynb",
                output_path=f"{folder}/output.ipynb",
                log_path=f"{folder}/log.txt",
                parameters={"lr": rng.random(), "epochs": i % 20},
                kernel="python3",
                created_at=created,
                started_at=started,
                finished_at=started + ran,
                resources=resources,
                gpu=gpu,
            )
        )
    return jobs


def seed(store_path: Path, n: int) -> None:
    from jupyter_gpu_env.jobs.store import JobStore

    async def put() -> None:
        store = JobStore(store_path)
        try:
            jobs = records(n)
            await store.insert_many(jobs)
            for job in jobs[::10]:
                await store.delete(job.id)
        finally:
            await asyncio.to_thread(store.close)

    asyncio.run(put())


def with_a_running_job(store_path: Path, copy: Path) -> None:
    """A copy of the store with one job running on a GPU (on a backend the server does not poll)."""
    import shutil

    from jupyter_gpu_env.jobs.store import JobStore
    from jupyter_gpu_env.models.jobs import Job
    from jupyter_gpu_env.models.resources import JobResources

    shutil.copy(store_path, copy)
    now = time.time()
    job = Job(
        id="running0001",
        name="running",
        backend="slurm",
        state="running",
        notebook_path="project/train.ipynb",
        job_dir="gpu-env-jobs/running",
        input_path="gpu-env-jobs/running/input.ipynb",
        output_path="gpu-env-jobs/running/output.ipynb",
        log_path="gpu-env-jobs/running/log.txt",
        created_at=now - 700,
        started_at=now - 600,
        resources=JobResources(gpus=1),
    )

    async def put() -> None:
        store = JobStore(copy)
        try:
            await store.insert(job)
        finally:
            await asyncio.to_thread(store.close)

    asyncio.run(put())


def reading_ms(store_path: Path, rounds: int = 20) -> tuple[list[float], list[float]]:
    """Milliseconds of a full reading, and of a round that finds nothing changed (an idle server)."""
    from jupyter_gpu_env.metrics.records import MetricsRecords

    async def timed(records: MetricsRecords, earlier: object) -> float:
        t = time.perf_counter()
        await records.read(earlier)  # type: ignore[arg-type]
        return (time.perf_counter() - t) * 1000

    async def run() -> tuple[list[float], list[float]]:
        records = MetricsRecords(store_path)
        try:
            totals = await records.read()  # warm: the connection, the page cache
            full = [await timed(records, None) for _ in range(rounds)]
            idle = [await timed(records, totals) for _ in range(rounds)]
            return full, idle
        finally:
            await asyncio.to_thread(records.close)

    return asyncio.run(run())


def render_ms(store_path: Path, rounds: int = 300) -> float:
    """Median milliseconds of rendering the extension's series alone (prometheus_client's
    ``generate_latest`` over a registry holding only its collector), with the reading of ``store_path``
    and a sample of the recorded MIG capture where there is one: what the extension adds to each GET."""
    from prometheus_client import CollectorRegistry, generate_latest

    from jupyter_gpu_env.gpu.sampler import Sampler
    from jupyter_gpu_env.gpu.sources import GpuReaders
    from jupyter_gpu_env.metrics.collector import GpuEnvCollector
    from jupyter_gpu_env.metrics.records import MetricsRecords

    async def prepare() -> GpuEnvCollector:
        records = MetricsRecords(store_path)
        readers = GpuReaders(str(CAPTURE) if CAPTURE.is_file() else "")
        try:
            snap = await Sampler(readers.read).sample_once()
            collector = GpuEnvCollector(lambda: snap, user="ada")
            collector.totals = await records.read()
            return collector
        finally:
            readers.close()
            await asyncio.to_thread(records.close)

    registry = CollectorRegistry()
    registry.register(asyncio.run(prepare()))
    out = []
    for _ in range(rounds):
        t = time.perf_counter()
        generate_latest(registry)
        out.append((time.perf_counter() - t) * 1000)
    return statistics.median(out)


def page(store: Path, *extra: str, ours: bool = True) -> tuple[dict[str, float], int]:
    """Timed GETs of /metrics, once the page carries the extension's series (``ours``: the first
    reading done, which the server's start does not wait for)."""
    args = [f"--GpuEnvApp.job_store={store}", "--GpuEnvApp.gpu_sample_interval=2", *extra]
    if CAPTURE.is_file():
        args.append(f"--GpuEnvApp.gpu_recorded_source={CAPTURE}")
    with jupyter_server(*args) as server:

        async def measure() -> tuple[dict[str, float], int]:
            from tornado.httpclient import AsyncHTTPClient

            deadline = time.monotonic() + 60
            while True:
                body = (await AsyncHTTPClient().fetch(server.url + "/metrics", headers=server.headers())).body
                if not ours or b"jupyter_gpu_env_ledger_read_timestamp_seconds" in body:
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError("the extension's series never appeared on /metrics")
                await asyncio.sleep(0.1)
            await latencies(server, "/metrics", 30)  # warm-up
            return summary(await latencies(server, "/metrics", N)), len(body)

        return asyncio.run(measure())


def main() -> list[str]:
    scratch = Path(tempfile.mkdtemp(prefix="gpu-env-bench-metrics-"))
    full, empty, running = scratch / "full.sqlite", scratch / "empty.sqlite", scratch / "running.sqlite"
    seed(full, N_RECORDS)
    with_a_running_job(full, running)
    cases = {
        f"{N_RECORDS:,} records": page(full),
        f"{N_RECORDS:,}, read every 0.25 s": page(running, "--GpuEnvApp.metrics_interval=0.25"),
        "no records": page(empty),
        "Jupyter's own (no collector)": page(empty, "--GpuEnvApp.metrics_interval=0", ours=False),
    }
    lines = [f"{'GET /metrics':<34}{'p50 ms':>9}{'p99 ms':>9}{'bytes':>8}"]
    lines += [f"{k:<34}{v['p50']:>9.2f}{v['p99']:>9.2f}{size:>8}" for k, (v, size) in cases.items()]
    own = cases["Jupyter's own (no collector)"][0]["p50"]
    for k in list(cases)[:3]:
        lines.append(f"ratio {k} / Jupyter's own: p50 {cases[k][0]['p50'] / own:.2f}x")
    lines.append(
        f"ratio {N_RECORDS:,} records / no records: p50 "
        f"{cases[f'{N_RECORDS:,} records'][0]['p50'] / cases['no records'][0]['p50']:.2f}x"
    )
    full_ms, idle_ms = reading_ms(full)
    for what, ms in (("a full reading", full_ms), ("a round with nothing changed", idle_ms)):
        lines.append(
            f"{what} of {N_RECORDS:,} records (the metrics' own thread): median {statistics.median(ms):.1f} ms, "
            f"max {max(ms):.1f} ms"
        )
    lines.append(f"rendering the extension's series alone, in-process: median {render_ms(full):.2f} ms")
    target = cases[f"{N_RECORDS:,} records"][0]["p50"]
    lines.append(
        f"target: the page under 50 ms with {N_RECORDS:,} records: {'met' if target < 50 else 'MISSED'}"
    )
    return lines


if __name__ == "__main__":
    print("\n".join(main()))
