"""`GET jobs` polled by 50 clients while a 1,000-run sweep is in flight, against the same 50 without it.

One real `jupyter server` (this environment, the local backend running one job at a time, so the sweep's
runs mostly wait queued and the job poller settles 1,000 active records every round) over a job store
seeded with 1,000 finished jobs, and a one-cell notebook. First the same 50 clients poll Jupyter's own
`GET api/status` (the floor: what any request costs here), then `GET gpu-env/api/jobs` (its first page of
50, newest first) back to back for SECONDS: the baseline. Then a sweep of 1,000 runs
of that notebook is submitted (`max_concurrent` 1) and the same 50 clients poll for SECONDS while it is in
flight; its first page is then 50 of the sweep's active runs. Then again for SECONDS with the machine
busy: one CPU burner per core, at the server's priority, beside the sweep. p50 and p99 of each, and their
ratios to the baseline. The sweep is cancelled at the end and whatever the server started is ended with
it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
from _scheduler import jupyter_server, seed_ours, wait_ready, write_notebook
from _server import Server, percentile
from tornado.httpclient import AsyncHTTPClient

CLIENTS = 50
SECONDS = 15.0
RUNS = 1000
SEEDED = 1000
NOTEBOOK = "bench.ipynb"
JOBS = "/gpu-env/api/jobs?limit=50"
STATUS = "/api/status"


def _client() -> AsyncHTTPClient:
    return AsyncHTTPClient(force_instance=True, max_clients=CLIENTS + 8)


async def _call(server: Server, method: str, path: str, body: Any = None) -> Any:
    resp = await _client().fetch(
        server.url + path,
        method=method,
        headers={**server.headers(), "Content-Type": "application/json"},
        body=json.dumps(body) if body is not None else ("{}" if method == "POST" else None),
        request_timeout=120,
    )
    return json.loads(resp.body) if resp.body else None


def server_cpu(server: Server) -> float:
    """Seconds of CPU the server process has used (its threads; not the runners it started)."""
    times = psutil.Process(server.pid).cpu_times()
    return float(times.user + times.system)


async def poll(server: Server, seconds: float, path: str = JOBS) -> tuple[list[float], int, float]:
    """Milliseconds of every `GET jobs` (or ``path``) that CLIENTS clients make back to back for
    ``seconds``, each answer read as JSON; the number of active jobs on the last page seen; and the
    server's CPU milliseconds per request meanwhile (its background work included)."""
    client = _client()
    out: list[float] = []
    active = 0
    deadline = time.perf_counter() + seconds

    async def one() -> None:
        nonlocal active
        while time.perf_counter() < deadline:
            t = time.perf_counter()
            resp = await client.fetch(server.url + path, headers=server.headers(), request_timeout=300)
            out.append((time.perf_counter() - t) * 1000)
            page = json.loads(resp.body)
            active = sum(1 for j in page.get("items", ()) if j["state"] in ("queued", "running"))

    cpu = server_cpu(server)
    await asyncio.gather(*(one() for _ in range(CLIENTS)))
    return out, active, (server_cpu(server) - cpu) * 1000 / max(len(out), 1)


@contextlib.contextmanager
def busy_machine() -> Iterator[int]:
    """One process spinning on each core, at this process's priority, while in the block."""
    burners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 1)
    ]
    try:
        yield len(burners)
    finally:
        for p in burners:
            p.kill()
            p.wait()


async def measure(server: Server) -> dict[str, Any]:
    r: dict[str, Any] = {}
    await poll(server, 2.0)  # warm-up: imports, caches, the first refresh
    r["status"], _, r["status_cpu"] = await poll(
        server, SECONDS, STATUS
    )  # Jupyter's own cheapest request: the floor
    r["idle"], r["idle_active"], r["idle_cpu"] = await poll(server, SECONDS)
    t = time.perf_counter()
    sweep = await _call(
        server,
        "POST",
        "/gpu-env/api/jobs",
        {"notebook_path": NOTEBOOK, "sweep": {"x": list(range(RUNS))}, "max_concurrent": 1},
    )
    r["submit_s"] = time.perf_counter() - t
    r["sweep"], r["sweep_active"], r["sweep_cpu"] = await poll(server, SECONDS)
    with busy_machine() as r["burners"]:
        r["busy"], r["busy_active"], r["busy_cpu"] = await poll(server, SECONDS)
    group = await _call(server, "GET", f"/gpu-env/api/jobs/groups/{sweep['id']}")
    r["counts"] = {k: v for k, v in group["counts"].items() if v}
    await _call(server, "POST", f"/gpu-env/api/jobs/groups/{sweep['id']}/cancel")
    return r


def main() -> list[str]:
    work = Path(tempfile.mkdtemp(prefix="gpu-env-bench-load-"))
    try:
        (work / ".data").mkdir()
        write_notebook(work / NOTEBOOK)
        store = work / ".data" / "jobs.sqlite"
        seed_ours(store, SEEDED)
        with jupyter_server(
            sys.executable,
            work,
            f"--GpuEnvApp.job_store={store}",
            f"--GpuEnvApp.max_sweep_runs={RUNS}",
            "--LocalBackend.max_concurrent=1",
            log_path=work / "server.log",
        ) as server:
            wait_ready(server, "/gpu-env/api/jobs?limit=1")
            r = asyncio.run(measure(server))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    idle, swept, busy = r["idle"], r["sweep"], r["busy"]
    lines = [
        f"{CLIENTS} clients polling `GET jobs` (first page of 50) back to back, {SECONDS:g} s each; "
        f"{SEEDED:,} finished jobs recorded",
        f"{'case':<44}{'requests':>9}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}{'server CPU ms/req':>19}",
    ]
    cases = (
        ("`GET api/status` (Jupyter's own), no sweep", r["status"], r["status_cpu"]),
        ("no sweep", idle, r["idle_cpu"]),
        (f"a {RUNS:,}-run sweep in flight", swept, r["sweep_cpu"]),
        (f"the sweep, {r['burners']} CPU burners beside", busy, r["busy_cpu"]),
    )
    for label, ms, cpu in cases:
        lines.append(
            f"{label:<44}{len(ms):>9}{percentile(ms, 50):>9.1f}{percentile(ms, 99):>9.1f}{max(ms):>9.1f}"
            f"{cpu:>19.2f}"
        )
    lines.append(
        f"ratio no sweep/api/status: p50 {percentile(idle, 50) / percentile(r['status'], 50):.2f}x, p99 "
        f"{percentile(idle, 99) / percentile(r['status'], 99):.2f}x; sweep/no sweep: p50 {percentile(swept, 50) / percentile(idle, 50):.2f}x, "
        f"p99 {percentile(swept, 99) / percentile(idle, 99):.2f}x; busy/no sweep: p50 "
        f"{percentile(busy, 50) / percentile(idle, 50):.2f}x, p99 {percentile(busy, 99) / percentile(idle, 99):.2f}x; "
        f"sweep accepted in {r['submit_s']:.2f} s; its runs when measured: {r['counts']}; active jobs on "
        f"the last page: {r['sweep_active']}, {r['busy_active']}; load average {os.getloadavg()[0]:.1f}"
    )
    return lines


if __name__ == "__main__":
    print("\n".join(main()))
