"""`GET jobs` polled by 50 clients while a 1,000-run sweep is in flight, against the same 50 without it.

One real `jupyter server` (this environment, the local backend running one job at a time, so the sweep's
runs mostly wait queued and the job poller settles 1,000 active records every round) over a job store
seeded with 1,000 finished jobs, and a one-cell notebook. First 50 clients poll `GET gpu-env/api/jobs`
(its first page of 50, newest first) back to back for SECONDS: the baseline. Then a sweep of 1,000 runs
of that notebook is submitted (`max_concurrent` 1) and the same 50 clients poll for SECONDS while it is in
flight; its first page is then 50 of the sweep's active runs. p50 and p99 of each, and their ratio. The
sweep is cancelled at the end and whatever the server started is ended with it.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _scheduler import jupyter_server, seed_ours, wait_ready, write_notebook
from _server import Server, percentile
from tornado.httpclient import AsyncHTTPClient

CLIENTS = 50
SECONDS = 15.0
RUNS = 1000
SEEDED = 1000
NOTEBOOK = "bench.ipynb"
JOBS = "/gpu-env/api/jobs?limit=50"


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


async def poll(server: Server, seconds: float) -> tuple[list[float], int]:
    """Milliseconds of every `GET jobs` that CLIENTS clients make back to back for ``seconds``; and the
    number of active jobs on the last page seen."""
    client = _client()
    out: list[float] = []
    active = 0
    deadline = time.perf_counter() + seconds

    async def one() -> None:
        nonlocal active
        while time.perf_counter() < deadline:
            t = time.perf_counter()
            resp = await client.fetch(server.url + JOBS, headers=server.headers(), request_timeout=300)
            out.append((time.perf_counter() - t) * 1000)
            page = json.loads(resp.body)
            active = sum(1 for j in page["items"] if j["state"] in ("queued", "running"))

    await asyncio.gather(*(one() for _ in range(CLIENTS)))
    return out, active


async def measure(server: Server) -> dict[str, Any]:
    r: dict[str, Any] = {}
    await poll(server, 2.0)  # warm-up: imports, caches, the first refresh
    r["idle"], r["idle_active"] = await poll(server, SECONDS)
    t = time.perf_counter()
    sweep = await _call(
        server,
        "POST",
        "/gpu-env/api/jobs",
        {"notebook_path": NOTEBOOK, "sweep": {"x": list(range(RUNS))}, "max_concurrent": 1},
    )
    r["submit_s"] = time.perf_counter() - t
    r["sweep"], r["sweep_active"] = await poll(server, SECONDS)
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
    idle, swept = r["idle"], r["sweep"]
    lines = [
        f"{CLIENTS} clients polling `GET jobs` (first page of 50) back to back, {SECONDS:g} s each; "
        f"{SEEDED:,} finished jobs recorded",
        f"{'case':<44}{'requests':>9}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}",
    ]
    for label, ms in (("no sweep", idle), (f"a {RUNS:,}-run sweep in flight", swept)):
        lines.append(
            f"{label:<44}{len(ms):>9}{percentile(ms, 50):>9.1f}{percentile(ms, 99):>9.1f}{max(ms):>9.1f}"
        )
    lines.append(
        f"ratio sweep/no sweep: p50 {percentile(swept, 50) / percentile(idle, 50):.2f}x, "
        f"p99 {percentile(swept, 99) / percentile(idle, 99):.2f}x; sweep accepted in {r['submit_s']:.2f} s; "
        f"its runs when measured: {r['counts']}; active jobs on the last page: {r['sweep_active']}"
    )
    return lines


if __name__ == "__main__":
    print("\n".join(main()))
