"""GPU use and queue positions: the runner's sampler's cost per sample and bytes per hour; the queue-position
poll's cost to the SLURM controller with 100 pending jobs.

1. The sampler (`gpu/jobuse.py`) as a job's runner runs it, one sample at a time, reading an H100 in MIG
   slices and a whole H100 from the recorded captures in ../shared/fixtures/gpu (this machine has no GPU,
   so the driver's own NVML calls are not timed; skipped where the captures are absent). Its baseline is
   the reader alone: what any sampler pays to read the devices. CPU milliseconds per sample (process
   time), without and with the energy reads (a stand-in answering the GPU's counter and power draw as
   `NvmlReader.read_energy` does, so that the energy meter's own cost is what is added), and the bytes the
   series grows by per hour at the default interval (5 s).
2. Queue positions on the local SLURM (scripts/slurm-local.sh; root): 100 held jobs of ours; the backend's
   `standings()` (one `squeue` for every user's pending jobs) against one `squeue --start -j ID` per job.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from bench_slurm import held_jobs

from jupyter_gpu_env import proc
from jupyter_gpu_env.backends.slurm import SlurmBackend
from jupyter_gpu_env.gpu.jobuse import SERIES, GpuUseSampler
from jupyter_gpu_env.gpu.sources.reading import PowerReading
from jupyter_gpu_env.gpu.sources.recorded import RecordedSource

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "slurm-local.sh"
FIXTURES = REPO.parent / "shared" / "fixtures" / "gpu"
CAPTURES = {
    "H100, 4 MIG slices, 1 visible": ("nvgpuexp-capture-h100-mig-590.48.01.txt", "first-mig"),
    "H100 80GB, whole": ("nvgpuexp-capture-h100-80gb-hbm3-590.48.01.txt", None),
}
SAMPLES = 400
PENDING = 100


def _per_sample(fn, n: int) -> float:
    fn()  # warm: the first read parses the capture
    t0 = time.process_time()
    for _ in range(n):
        fn()
    return (time.process_time() - t0) / n * 1000


def sampler_cost() -> list[str]:
    if not FIXTURES.is_dir():
        return [f"sampler part skipped: the recorded GPU outputs are not at {FIXTURES}"]
    lines = [
        f"{'device':<32}{'reader ms':>11}{'sampler ms':>12}{'ratio':>8}{'+energy ms':>12}{'bytes/h @5s':>13}"
    ]
    for label, (name, which) in CAPTURES.items():
        env: dict[str, str] = {}
        reader = RecordedSource(FIXTURES / name, env=env)
        if which == "first-mig":
            first = next(m for g in reader.read().devices for m in g.mig_devices)
            env["CUDA_VISIBLE_DEVICES"] = first.uuid or ""
        with tempfile.TemporaryDirectory(prefix="bench-gpu-use-") as d:
            sampler = GpuUseSampler(Path(d), reader.read, interval=5.0, gpu_units=1, env=env)
            ours = _per_sample(sampler.sample, SAMPLES)
            base = _per_sample(reader.read, SAMPLES)
            lines_written = (Path(d) / SERIES).read_text().splitlines()[1:]
            per_line = statistics.mean(len(x) + 1 for x in lines_written)
        whole = reader.read().devices[0].uuid or ""
        counter = itertools.count(7_211_408_123, 3_000_000)  # 600 W for 5 s a sample

        def energy(whole: str = whole, counter: itertools.count[int] = counter) -> dict[str, PowerReading]:
            return {whole: PowerReading(next(counter), 600_000)}

        with tempfile.TemporaryDirectory(prefix="bench-gpu-use-") as d:
            sampler = GpuUseSampler(Path(d), reader.read, interval=5.0, gpu_units=1, env=env, energy=energy)
            metered = _per_sample(sampler.sample, SAMPLES)
            assert sampler.stop()["energy_joules"], "the energy reads were not counted"
        lines.append(
            f"{label:<32}{base:>11.3f}{ours:>12.3f}{ours / base:>8.2f}{metered:>12.3f}{per_line * 720:>13,.0f}"
        )
    return lines


def _cluster(action: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(SCRIPT), action], capture_output=True, text=True, check=False)


async def positions(conf: str) -> list[str]:
    env = {**os.environ, "SLURM_CONF": conf}
    ids = await held_jobs(conf, PENDING)
    backend = SlurmBackend(slurm_conf=conf)
    calls = 0
    run = backend.controller.run

    async def counted(argv: list[str], **kw: object) -> proc.Result:
        nonlocal calls
        calls += 1
        return await run(argv, **kw)  # type: ignore[arg-type]

    backend.controller.run = counted  # type: ignore[method-assign]
    try:
        ours, each = [], []
        for _ in range(10):
            t0 = time.perf_counter()
            found = await backend.controller.standings(set(ids), set())
            ours.append(time.perf_counter() - t0)
        assert sorted(s.position for s in found.values()) == list(range(1, PENDING + 1))
        ours_calls = calls // 10
        for _ in range(2):
            t0 = time.perf_counter()
            for sid in ids:
                await proc.run(["squeue", "--start", "-h", "-j", sid], env=env, timeout=30)
            each.append(time.perf_counter() - t0)
    finally:
        await proc.run(["scancel", *ids], env=env, timeout=60)
    o, e = statistics.median(ours), statistics.median(each)
    return [
        f"{'queue positions of 100 pending jobs':<40}{'seconds':>9}{'squeue calls':>14}",
        f"{'ours: one squeue for all':<40}{o:>9.3f}{ours_calls:>14}",
        f"{'one squeue --start per job':<40}{e:>9.3f}{PENDING:>14}",
        f"ratio ours/per-job: {o / e:.3f}x time, {ours_calls}/{PENDING} controller calls",
    ]


def main() -> list[str]:
    lines = sampler_cost()
    was_up = _cluster("status").returncode == 0
    started = _cluster("start")
    if started.returncode != 0:
        return [*lines, f"queue part skipped: the local SLURM did not start: {started.stderr.strip()[-300:]}"]
    try:
        lines += asyncio.run(positions(started.stdout.strip().splitlines()[-1]))
    finally:
        if not was_up:
            _cluster("stop")
    return lines
