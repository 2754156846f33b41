"""Batch jobs against jupyter-scheduler, side by side: submission, time to finish, 10,000-job listing, runner.

Two real `jupyter server` processes on loopback, running at the same time: ours (this project's
environment) and jupyter-scheduler (its own environment, see _scheduler.SCHEDULER_VENV), each with a
temporary root, data directory and job store seeded with 10,000 finished jobs before it starts. The
cases alternate between the two servers, so background noise falls on both alike.

1. Submission latency: POST a one-cell parameterised notebook, timed to the response. Each job is
   then removed (ours: DELETE, which cancels the runner; theirs: its spawned process ended by pid,
   then DELETE), so 2 x N_SUBMIT notebooks do not run at once on a small machine.
2. Submission to a finished job: POST, then GET the job every 0.1 s until it has ended, as a UI would.
   Also the job's own record: finished minus created, what a client polling nothing would learn.
3. Listing the first page (50) of 10,000+ jobs, and `GET api/status` (the cheapest request) while five
   clients list at once.
4. Our runner (`python -m jupyter_gpu_env.runner JOB_FOLDER`) against `papermill in.ipynb out.ipynb
   -p x 2` on the same notebook, both in this environment.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import psutil
from _scheduler import (
    Api,
    children_of,
    end_processes,
    jupyter_server,
    scheduler_python,
    seed_ours,
    seed_theirs,
    settle,
    wait_ready,
    write_notebook,
)
from _server import percentile

N_SUBMIT = 30
N_FINISH = 5
N_SEED = 10_000
N_LIST = 100
LISTERS = 5
N_STATUS = 60
N_RUNNER = 5
POLL = 0.1
PHASES: dict[str, float] = {}  # seconds each part of the run took, printed at the end
NOTEBOOK = "bench.ipynb"

OUR_TERMINAL = {"succeeded", "failed", "cancelled"}
THEIR_TERMINAL = {"COMPLETED", "FAILED", "STOPPED"}


class Ours:
    name = "ours"
    status_path = "/api/status"

    def __init__(self, api: Api) -> None:
        self.api = api

    async def submit(self) -> tuple[float, str]:
        body = {"notebook_path": NOTEBOOK, "kernel": "python3", "parameters": {"x": 2}}
        ms, job = await self.api.call("POST", "/gpu-env/api/jobs", body)
        return ms, job["id"]

    async def discard(self, job_id: str) -> None:
        await self.api.call("DELETE", f"/gpu-env/api/jobs/{job_id}")

    async def state(self, job_id: str) -> tuple[bool, float]:
        """(ended, its record's finished - created in seconds); an end other than success raises."""
        _, job = await self.api.call("GET", f"/gpu-env/api/jobs/{job_id}")
        ended = job["state"] in OUR_TERMINAL
        if ended and job["state"] != "succeeded":
            raise RuntimeError(f"our job {job_id} ended {job['state']}: {job['message']}")
        return ended, (job["finished_at"] - job["created_at"]) if ended else 0.0

    async def list_page(self) -> float:
        ms, page = await self.api.call("GET", "/gpu-env/api/jobs?limit=50")
        assert len(page["items"]) == 50 and page["total"] >= N_SEED, page["total"]
        return ms


class Theirs:
    name = "jupyter-scheduler"
    status_path = "/api/status"

    def __init__(self, api: Api, env_name: str) -> None:
        self.api = api
        self.env_name = env_name

    async def submit(self) -> tuple[float, str]:
        body = {
            "input_uri": NOTEBOOK,
            "name": "bench",
            "output_formats": ["ipynb"],
            "runtime_environment_name": self.env_name,
            "parameters": {"x": "2"},
        }
        ms, resp = await self.api.call("POST", "/scheduler/jobs", body)
        return ms, resp["job_id"]

    async def discard(self, job_id: str) -> None:
        # Its job process is a child of the server (multiprocessing, spawn); its DELETE kills it only once
        # the job has reached IN_PROGRESS, so end it here first, by pid, with whatever it started.
        doomed = []
        for p in children_of(self.api.server.pid).values():
            try:
                if any("spawn_main" in part for part in p.cmdline()):
                    doomed += [p, *p.children(recursive=True)]
            except psutil.Error:
                pass
        end_processes(doomed)
        await self.api.call("DELETE", f"/scheduler/jobs/{job_id}")

    async def state(self, job_id: str) -> tuple[bool, float]:
        _, job = await self.api.call("GET", f"/scheduler/jobs/{job_id}")
        # A new record reads STOPPED (the column's default) until its process marks it IN_PROGRESS.
        ended = job["status"] in THEIR_TERMINAL and job.get("start_time") is not None
        if ended and job["status"] != "COMPLETED":
            raise RuntimeError(f"their job {job_id} ended {job['status']}: {job.get('status_message')}")
        return ended, (job["end_time"] - job["create_time"]) / 1000 if ended else 0.0

    async def list_page(self) -> float:
        ms, page = await self.api.call("GET", "/scheduler/jobs?max_items=50")
        assert len(page["jobs"]) == 50 and page["total_count"] >= N_SEED, page["total_count"]
        return ms


# ----- the cases -----


async def submissions(side: Any, n: int) -> list[float]:
    out = []
    for _ in range(n):
        ms, job_id = await side.submit()
        out.append(ms)
        await side.discard(job_id)
    return out


async def to_finished(side: Any) -> tuple[float, float]:
    """Seconds from POST to a GET that shows the job ended; and the record's finished - created."""
    t = time.perf_counter()
    _, job_id = await side.submit()
    deadline = t + 120
    while time.perf_counter() < deadline:
        await asyncio.sleep(POLL)
        ended, took = await side.state(job_id)
        if ended:
            return time.perf_counter() - t, took
    raise RuntimeError(f"{side.name}: job {job_id} did not end within 120 s")


async def status_while_listing(side: Any) -> tuple[list[float], float]:
    """`GET api/status` latencies while LISTERS clients list back to back; and lists per second."""
    stop = asyncio.Event()
    lists = 0

    async def lister() -> None:
        nonlocal lists
        while not stop.is_set():
            await side.list_page()
            lists += 1

    tasks = [asyncio.create_task(lister()) for _ in range(LISTERS)]
    await asyncio.sleep(0.2)
    out = []
    t, done = time.perf_counter(), lists
    for _ in range(N_STATUS):
        ms, _ = await side.api.call("GET", side.status_path)
        out.append(ms)
    rate = (lists - done) / (time.perf_counter() - t)
    stop.set()
    await asyncio.gather(*tasks)
    return out, rate


async def measure(sides: list[Any]) -> dict[str, dict[str, Any]]:
    r: dict[str, dict[str, Any]] = {s.name: {} for s in sides}
    t = time.perf_counter()
    for s in sides:  # warm-up: first submission imports nbformat and papermill (ours) or starts the tracker
        await submissions(s, 3)
    for s in sides:
        r[s.name]["submit"] = []
    for _ in range(N_SUBMIT // 5):  # alternate in blocks, so noise falls on both
        for s in sides:
            r[s.name]["submit"] += await submissions(s, 5)

    PHASES["submissions"], t = time.perf_counter() - t, time.perf_counter()
    for s in sides:
        r[s.name]["finish"], r[s.name]["recorded"], r[s.name]["lag"] = [], [], []
    pids = [s.api.server.pid for s in sides]
    for _ in range(N_FINISH):
        for s in sides:
            await asyncio.to_thread(settle, pids)  # the previous job, its runner and kernel, all gone
            seen, recorded = await to_finished(s)
            r[s.name]["finish"].append(seen)
            r[s.name]["recorded"].append(recorded)
            r[s.name]["lag"].append(seen - recorded)

    PHASES["to finished"], t = time.perf_counter() - t, time.perf_counter()
    for s in sides:
        for _ in range(5):
            await s.list_page()
        r[s.name]["list"] = []
    for _ in range(N_LIST // 10):
        for s in sides:
            r[s.name]["list"] += [await s.list_page() for _ in range(10)]

    await asyncio.to_thread(settle, pids)
    for s in sides:
        r[s.name]["status idle"] = []
    for _ in range(N_STATUS // 10):
        for s in sides:
            r[s.name]["status idle"] += [(await s.api.call("GET", s.status_path))[0] for _ in range(10)]
    for s in sides:
        r[s.name]["status busy"], r[s.name]["lists/s"] = await status_while_listing(s)
    PHASES["listing"] = time.perf_counter() - t
    return r


# ----- runner against papermill -----


def runner_overhead(work: Path) -> dict[str, list[float]]:
    """Seconds per run: our runner on a prepared job folder, and papermill's CLI on the same notebook."""
    bindir = Path(sys.executable).parent
    template = work / "template"
    template.mkdir(parents=True)
    write_notebook(template / "input.ipynb")
    spec = {
        "format": 1,
        "id": "bench",
        "name": "bench",
        "notebook_path": NOTEBOOK,
        "parameters": {"x": 2},
        "kernel": "python3",
        "environment": None,
        "image": None,
        "cwd": None,
        "time_limit_seconds": None,
        "resources": {},
    }
    (template / "job.json").write_text(json.dumps(spec))

    def ours(i: int) -> float:
        folder = work / f"job-{i}"
        shutil.copytree(template, folder)
        t = time.perf_counter()
        with open(folder / "log.txt", "wb") as log:
            rc = subprocess.run(
                [sys.executable, "-m", "jupyter_gpu_env.runner", str(folder)],
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=folder,
            ).returncode
        took = time.perf_counter() - t
        status = json.loads((folder / "status.json").read_text())
        if rc != 0 or status["state"] != "succeeded":
            raise RuntimeError(f"our runner failed ({rc}): {(folder / 'log.txt').read_text()[-800:]}")
        return took

    def papermill(i: int) -> float:
        folder = work / f"pm-{i}"
        folder.mkdir()
        write_notebook(folder / "in.ipynb")
        t = time.perf_counter()
        with open(folder / "log.txt", "wb") as log:
            rc = subprocess.run(
                [str(bindir / "papermill"), "in.ipynb", "out.ipynb", "-p", "x", "2"],
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=folder,
            ).returncode
        took = time.perf_counter() - t
        if rc != 0:
            raise RuntimeError(f"papermill failed ({rc}): {(folder / 'log.txt').read_text()[-800:]}")
        return took

    out: dict[str, list[float]] = {"ours": [], "papermill": []}
    for i in range(N_RUNNER):
        out["ours"].append(ours(i))
        out["papermill"].append(papermill(i))
    return out


# ----- the run -----


def main() -> list[str]:
    lines: list[str] = []
    python, version = scheduler_python()
    if python is None:
        lines.append(f"jupyter-scheduler unavailable, measuring ours alone: {version}")
    else:
        lines.append(f"jupyter-scheduler {version} from {python.parent.parent}")
    work = Path(tempfile.mkdtemp(prefix="gpu-env-bench-jobs-"))
    try:
        t = time.perf_counter()
        our_root, their_root = work / "ours", work / "theirs"
        for root in (our_root, their_root):
            (root / ".data").mkdir(parents=True)
            write_notebook(root / NOTEBOOK)
        store = our_root / ".data" / "jobs.sqlite"
        db_url = f"sqlite:///{their_root / '.data' / 'scheduler.sqlite'}"
        seeding = seed_theirs(python, db_url, N_SEED) if python is not None else None
        seed_ours(store, N_SEED)
        if seeding is not None and seeding.wait() != 0:
            raise RuntimeError(f"seeding jupyter-scheduler's store failed: {seeding.stderr.read().decode()}")
        PHASES["seeding"], t = time.perf_counter() - t, time.perf_counter()

        with ExitStack() as stack:  # both start at once; each is stopped, with what it started, on exit
            ours = stack.enter_context(
                jupyter_server(
                    sys.executable, our_root, f"--GpuEnvApp.job_store={store}", log_path=work / "ours.log"
                )
            )
            if python is not None:
                theirs = stack.enter_context(
                    jupyter_server(
                        python, their_root, f"--SchedulerApp.db_url={db_url}", log_path=work / "theirs.log"
                    )
                )
            wait_ready(ours, "/gpu-env/api/jobs?limit=1")
            sides: list[Any] = [Ours(Api(ours))]
            if python is not None:
                wait_ready(theirs, "/scheduler/jobs?max_items=1")
                env_name = asyncio.run(_first_environment(Api(theirs)))
                sides.append(Theirs(Api(theirs), env_name))
            PHASES["servers up"] = time.perf_counter() - t
            r = asyncio.run(measure(sides))
        t = time.perf_counter()
        runs = runner_overhead(work / "runner")
        PHASES["runner vs papermill"] = time.perf_counter() - t
    finally:
        shutil.rmtree(work, ignore_errors=True)
    phases = ", ".join(f"{k} {v:.1f} s" for k, v in PHASES.items())
    return [*lines, *_table(r, runs), f"(time: {phases})"]


async def _first_environment(api: Api) -> str:
    _, envs = await api.call("GET", "/scheduler/runtime_environments")
    return envs[0]["name"]


def _table(r: dict[str, dict[str, Any]], runs: dict[str, list[float]]) -> list[str]:
    ours, theirs = r["ours"], r.get("jupyter-scheduler")
    med = statistics.median

    def p(q: float) -> Callable[[list[float]], float]:
        return lambda v: percentile(v, q)

    rows = [
        (f"submit p50 ms (n={N_SUBMIT})", "submit", p(50)),
        ("submit p99 ms", "submit", p(99)),
        (f"to finished, seen by GET, median s (n={N_FINISH})", "finish", med),
        ("to finished, in the record, median s", "recorded", med),
        ("  lag: seen by GET minus the record, median s", "lag", med),
        (f"list 50 of {N_SEED:,}+ p50 ms (n={N_LIST})", "list", p(50)),
        ("list p99 ms", "list", p(99)),
        (f"api/status idle p50 ms (n={N_STATUS})", "status idle", p(50)),
        (f"api/status during {LISTERS} lists p50 ms", "status busy", p(50)),
        (f"api/status during {LISTERS} lists p99 ms", "status busy", p(99)),
    ]
    lines = [f"{'case':<46}{'ours':>10}{'theirs':>10}{'ours/theirs':>13}"]
    for label, key, f in rows:
        a = f(ours[key])
        b = f(theirs[key]) if theirs else None
        lines.append(
            f"{label:<46}{a:>10.2f}" + (f"{b:>10.2f}{a / b:>12.2f}x" if b else f"{'-':>10}{'-':>13}")
        )
    a = ours["lists/s"]
    b = theirs["lists/s"] if theirs else None
    lines.append(
        f"{f'lists/s served meanwhile ({LISTERS} clients)':<46}{a:>10.1f}"
        + (f"{b:>10.1f}{a / b:>12.2f}x (higher is better)" if b else f"{'-':>10}{'-':>13}")
    )
    a, b = med(runs["ours"]), med(runs["papermill"])
    lines.append("")
    lines.append(
        f"{'runner, median s (n=' + str(N_RUNNER) + ')':<46}{'ours':>10}{'papermill':>10}{'ratio':>13}"
    )
    lines.append(f"{'one-cell notebook, x=2 injected':<46}{a:>10.2f}{b:>10.2f}{a / b:>12.2f}x")
    return lines


if __name__ == "__main__":
    print("\n".join(main()))
