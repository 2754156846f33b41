"""SLURM backend on a real local cluster: submit-to-running latency, and the status poll with 100 active jobs.

Needs the single-node SLURM of scripts/slurm-local.sh (started here when it is not up, and stopped again;
root). Latency: a notebook submitted through JobService with the SLURM backend, against a bare
`sbatch --wrap` of the same kind of job polled with squeue (what SLURM itself costs). Polling: 100 held
jobs observed by the backend's one `squeue` for all of them, against one `squeue -j ID` per job.
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from jupyter_client.kernelspec import KernelSpecManager

from jupyter_gpu_env import proc
from jupyter_gpu_env.backends.slurm import SlurmBackend
from jupyter_gpu_env.contracts import jobfiles
from jupyter_gpu_env.jobs.service import JobService
from jupyter_gpu_env.jobs.store import JobStore
from jupyter_gpu_env.models.jobs import Job

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "slurm-local.sh"
SUBMITS = 12
ACTIVE = 100
POLLS = 20
_JITTER = random.Random(6)


def _cluster(action: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(SCRIPT), action], capture_output=True, text=True, check=False)


def _p50(xs: list[float]) -> float:
    return statistics.median(xs)


async def _wait(cond, within: float = 120.0, step: float = 0.05) -> None:
    deadline = time.monotonic() + within
    while not await cond():
        if time.monotonic() > deadline:
            raise TimeoutError("the benchmark's job did not get there in time")
        await asyncio.sleep(step)


async def latency(conf: str, tmp: Path) -> dict[str, list[float]]:
    env = {**os.environ, "SLURM_CONF": conf}
    root = tmp / "root"
    root.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells.append(nbformat.v4.new_code_cell("import time; time.sleep(60)"))
    nbformat.write(nb, root / "sleep.ipynb")
    backend = SlurmBackend(slurm_conf=conf)
    svc = JobService(
        JobStore(tmp / "jobs.sqlite"),
        {"slurm": backend},
        root,
        "jobs",
        kernel_names=lambda: set(KernelSpecManager().find_kernel_specs()),
    )
    out: dict[str, list[float]] = {
        "ours: submit returns": [],
        "ours: SLURM says RUNNING": [],
        "ours: record running": [],
        "ours: runner up": [],
        "sbatch --wrap: RUNNING": [],
    }
    try:
        for _ in range(SUBMITS):
            # Each starts on an idle node: SLURM defers scheduling while a cancelled job is completing.
            await _settled(env)
            t0 = time.perf_counter()
            job = await svc.submit({"notebook_path": "sleep.ipynb", "backend": "slurm"})
            out["ours: submit returns"].append(time.perf_counter() - t0)

            sid = job.backend_job_id or ""
            marks: dict[str, float] = {}

            async def running(job_id: str = job.id, sid: str = sid, marks: dict = marks) -> bool:
                # SLURM's own view (a direct squeue) and our record's, side by side.
                if "slurm" not in marks and await _slurm_running(env, sid):
                    marks["slurm"] = time.perf_counter()
                await svc.refresh()
                if "ours" not in marks and (await svc.get(job_id)).state == "running":
                    marks["ours"] = time.perf_counter()
                return len(marks) == 2

            await _wait(running, step=0.02)
            out["ours: SLURM says RUNNING"].append(marks["slurm"] - t0)
            out["ours: record running"].append(marks["ours"] - t0)
            folder = svc.folder_of(job)

            async def runner_up(folder: Path = folder) -> bool:
                return (folder / jobfiles.HEARTBEAT).exists()

            await _wait(runner_up)
            out["ours: runner up"].append(time.perf_counter() - t0)
            await svc.cancel(job.id)

            # The baseline: the same wait for a bare job that SLURM runs without us.
            await _settled(env)
            t0 = time.perf_counter()
            res = await proc.run(
                ["sbatch", "--parsable", "--output=/dev/null", "--wrap=sleep 60"], env=env, timeout=30
            )
            sid = res.stdout.strip()

            await _wait(lambda sid=sid: _slurm_running(env, sid), step=0.02)
            out["sbatch --wrap: RUNNING"].append(time.perf_counter() - t0)
            await proc.run(["scancel", sid], env=env, timeout=30)
    finally:
        await svc.stop()
    return out


async def _slurm_running(env: dict[str, str], sid: str) -> bool:
    r = await proc.run(["squeue", "-h", "-j", sid, "-o", "%T"], env=env, timeout=30)
    return r.stdout.strip() == "RUNNING"


async def _settled(env: dict[str, str]) -> None:
    """No job running or completing, then a random pause: slurmctld starts a job either at once or on a
    tick about a second later, so a fixed rhythm would put ours and the baseline on different sides of it."""
    await _wait(_node_free(env), step=0.1)
    await asyncio.sleep(_JITTER.uniform(0.5, 2.0))


def _node_free(env: dict[str, str]):
    async def free() -> bool:
        r = await proc.run(["squeue", "-h", "-t", "R,CG", "-o", "%i"], env=env, timeout=30)
        return not r.stdout.strip()

    return free


async def held_jobs(conf: str, count: int) -> list[str]:
    """``count`` held SLURM jobs (none runs), by their ids."""
    env = {**os.environ, "SLURM_CONF": conf}
    ids = []
    for _ in range(count):
        r = await proc.run(
            ["sbatch", "--parsable", "--hold", "--output=/dev/null", "--wrap=true"], env=env, timeout=30
        )
        ids.append(r.stdout.strip())
    return ids


async def polling(conf: str, tmp: Path) -> dict[str, list[float]]:
    env = {**os.environ, "SLURM_CONF": conf}
    ids = await held_jobs(conf, ACTIVE)
    backend = SlurmBackend(slurm_conf=conf)
    backend.job_folder = lambda j: Path(j.job_dir)
    jobs = []
    for sid in ids:
        folder = tmp / f"held-{sid}"
        folder.mkdir()
        jobs.append(
            Job(
                id=f"j{sid}",
                name="held",
                backend="slurm",
                state="queued",
                notebook_path="x.ipynb",
                job_dir=str(folder),
                input_path="",
                output_path="",
                log_path="",
                created_at=time.time(),
                backend_job_id=sid,
            )
        )
    out: dict[str, list[float]] = {"ours: one squeue, 100 jobs": [], "one squeue per job, 100 jobs": []}
    try:
        for _ in range(3):  # warm-up
            await backend.poll(jobs)
        for _ in range(POLLS):
            t0 = time.perf_counter()
            seen = await backend.poll(jobs)
            out["ours: one squeue, 100 jobs"].append(time.perf_counter() - t0)
            assert len(seen) == ACTIVE and all(o.state == "queued" for o in seen.values())
        for _ in range(3):
            t0 = time.perf_counter()
            for sid in ids:
                await proc.run(
                    ["squeue", "--noheader", "--states=all", f"--jobs={sid}", "--format=%i|%T|%r"],
                    env=backend.controller.command_env(),
                    timeout=30,
                )
            out["one squeue per job, 100 jobs"].append(time.perf_counter() - t0)
    finally:
        await proc.run(["scancel", *ids], env=env, timeout=60)
    return out


def main() -> list[str]:
    was_up = _cluster("status").returncode == 0
    started = _cluster("start")
    if started.returncode != 0:
        return [f"skipped: the local SLURM did not start: {started.stderr.strip()[-300:]}"]
    conf = started.stdout.strip().splitlines()[-1]
    try:
        with tempfile.TemporaryDirectory(prefix="bench-slurm-") as d:
            tmp = Path(d)
            (tmp / "lat").mkdir()
            (tmp / "poll").mkdir()
            lat = asyncio.run(latency(conf, tmp / "lat"))
            poll = asyncio.run(polling(conf, tmp / "poll"))
    finally:
        if not was_up:
            _cluster("stop")
    lines = [f"{'case':<34}{'p50 s':>9}{'min s':>9}{'max s':>9}{'n':>4}"]
    for k, v in {**lat, **poll}.items():
        lines.append(f"{k:<34}{_p50(v):>9.3f}{min(v):>9.3f}{max(v):>9.3f}{len(v):>4}")
    ours, bare = _p50(lat["ours: record running"]), _p50(lat["sbatch --wrap: RUNNING"])
    lag = [o - s for o, s in zip(lat["ours: record running"], lat["ours: SLURM says RUNNING"], strict=True)]
    lines.append(f"ratio submit-to-running ours/bare sbatch: {ours / bare:.2f}x (p50)")
    lines.append(
        f"our record behind SLURM's RUNNING: p50 {_p50(lag) * 1000:.0f} ms, max {max(lag) * 1000:.0f} ms"
    )
    one, each = _p50(poll["ours: one squeue, 100 jobs"]), _p50(poll["one squeue per job, 100 jobs"])
    lines.append(f"ratio poll of 100 jobs, one-squeue-per-job/ours: {each / one:.1f}x (p50)")
    return lines


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    print("\n".join(main()))
