"""GPU/memory sampling against jupyter-resource-usage's `/api/metrics/v1`, side by side: one sample, latency, server CPU for 50 tabs.

jupyter-resource-usage (the closest peer) lives in its own environment (RESOURCE_USAGE_VENV, created
and filled with `pip install jupyter-resource-usage ipykernel` the first time); ours runs from this
project's. Each server is a real `jupyter server` on 127.0.0.1 with two kernels started through its API.

1. Cost of one sample, in-process, with two stand-in kernels (sleeping Python processes) in the tree:
   ours is `Sampler.sample_once()` (cgroup memory and CPU, the kernels' process trees, the GPU reader,
   the serialized snapshot); theirs is the body of their `GET api/metrics/v1` handler (`ApiHandler.get`,
   called without tornado around it, default settings: psutil `memory_full_info` of the server's whole
   process tree). Wall and CPU milliseconds per sample.
2. `GET gpu-env/api/gpu` against `GET api/metrics/v1`: 400 requests sequentially, then 400 with 50 in
   flight at once; p50/p99. Ours serves the snapshot sampled in the background; theirs samples per request.
3. Server CPU (psutil: the server process's user+system seconds, and its waited children's) over a fixed
   20 s window with 50 simulated tabs, each polling on its own schedule (seeded random phase): ours every
   2 s (our panel's default), theirs every 2 s (the same load) and every 5 s (their top bar's default
   `refreshRate`). Also 10 s with no tab open (their Prometheus callback samples every second; ours
   samples every 2 s).

Our server reads the recorded H100 MIG capture (../shared/fixtures/gpu) where present, so the snapshot
has the size it has on a MIG machine (an H100 in four MIG slices); this machine has no GPU, so the NVML calls
themselves are not timed (the in-process cost is shown for both the recorded source and this machine's
live reader, which finds no NVIDIA driver).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import psutil
from _conda import CACHE
from _server import Server, free_port, latencies, peer_venv, status_of, summary
from tornado.httpclient import AsyncHTTPClient

RESOURCE_USAGE_VENV = CACHE / "resource-usage-venv"
RESOURCE_USAGE_PACKAGES = ("jupyter-resource-usage", "ipykernel")
CAPTURE = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "fixtures"
    / "gpu"
    / "nvgpuexp-capture-h100-mig-590.48.01.txt"
)
KERNELS = 2
N_SAMPLES = 300
N_REQUESTS = 400
TABS = 50
WINDOW = 20.0
IDLE_WINDOW = 10.0
OURS, THEIRS = "/gpu-env/api/gpu", "/api/metrics/v1"

_SLEEPER = "import time, ipykernel.ipkernel; time.sleep(900)"  # a kernel stand-in: its libraries mapped

_THEIR_SAMPLE = """
import asyncio, json, subprocess, sys, time, types
from jupyter_resource_usage.api import ApiHandler
from jupyter_resource_usage.config import ResourceUseDisplay
n, k, sleeper = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
kids = [subprocess.Popen([sys.executable, "-c", sleeper]) for _ in range(k)]
time.sleep(1.0)
out = []
handler = types.SimpleNamespace(
    settings={"jupyter_resource_usage_display_config": ResourceUseDisplay()}, write=out.append
)
get = ApiHandler.get.__wrapped__  # the handler's body, without tornado's authentication wrapper
async def main():
    for _ in range(20):
        await get(handler)
    c, t = time.process_time(), time.perf_counter()
    for _ in range(n):
        await get(handler)
    return time.perf_counter() - t, time.process_time() - c
wall, cpu = asyncio.run(main())
for p in kids:
    p.kill()
print(json.dumps({"wall_ms": wall * 1000 / n, "cpu_ms": cpu * 1000 / n, "bytes": len(out[-1])}))
"""


def resource_usage_python() -> tuple[Path | None, str]:
    """The Python of jupyter-resource-usage's environment, installing it the first time; else None and why."""
    probe = "import jupyter_resource_usage as j, ipykernel, jupyter_server as s; print(j.__version__, s.__version__)"
    return peer_venv(RESOURCE_USAGE_VENV, RESOURCE_USAGE_PACKAGES, probe, "jupyter_resource_usage")


@contextmanager
def jupyter_server(
    python: Path | str, root: Path, *extra: str, ready_path: str, log_path: Path
) -> Iterator[Server]:
    """A real `jupyter server` on 127.0.0.1 run by ``python``, once ``ready_path`` answers 200.

    Its own data, runtime and config folders under ``root``. On exit the server is stopped, then the
    processes it started (kernels) that still live are ended by their pid.
    """
    port, token = free_port(), secrets.token_hex(8)
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env.update(
        PATH=os.pathsep.join([str(Path(python).parent), env.get("PATH", os.defpath)]),
        JUPYTER_DATA_DIR=str(root / ".data"),
        JUPYTER_RUNTIME_DIR=str(root / ".runtime"),
        JUPYTER_CONFIG_DIR=str(root / ".config"),
    )
    argv = [str(python), "-m", "jupyter", "server", f"--port={port}", "--ip=127.0.0.1", "--no-browser"]
    argv += [f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}", "--allow-root", *extra]
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=root)
    server = Server(f"http://127.0.0.1:{port}", token, proc.pid)
    kids: list[psutil.Process] = []
    try:
        _wait_ready(server, proc, ready_path, log_path)
        yield server
    finally:
        try:
            kids = psutil.Process(proc.pid).children(recursive=True)
        except psutil.Error:
            pass
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        for p in kids:
            try:
                p.kill()
            except psutil.Error:
                pass
        psutil.wait_procs(kids, timeout=5)


def _wait_ready(server: Server, proc: subprocess.Popen[bytes], path: str, log_path: Path) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}; see {log_path}")
        if asyncio.run(status_of(server.url + path, server.headers())) == 200:
            return
        time.sleep(0.25)
    raise RuntimeError(f"the server did not answer {path} within 120 s; see {log_path}")


# ----- 1. one sample, in-process -----


def our_sample_cost(recorded: str) -> dict[str, float]:
    from jupyter_gpu_env.gpu.kernel_processes import RunningKernel
    from jupyter_gpu_env.gpu.sampler import Sampler
    from jupyter_gpu_env.gpu.sources import GpuReaders

    kids = [subprocess.Popen([sys.executable, "-c", _SLEEPER]) for _ in range(KERNELS)]
    time.sleep(1.0)
    kernels = [RunningKernel(f"kernel-{i}", "python3", p.pid) for i, p in enumerate(kids)]

    async def kernel_source() -> list[RunningKernel]:
        return kernels

    readers = GpuReaders(recorded)
    sampler = Sampler(readers.read, kernel_source=kernel_source)

    async def run() -> tuple[float, float]:
        for _ in range(20):
            await sampler.sample_once()
        c, t = time.process_time(), time.perf_counter()
        for _ in range(N_SAMPLES):
            await sampler.sample_once()
        return time.perf_counter() - t, time.process_time() - c

    try:
        wall, cpu = asyncio.run(run())
    finally:
        readers.close()
        for p in kids:
            p.kill()
            p.wait()
    return {
        "wall_ms": wall * 1000 / N_SAMPLES,
        "cpu_ms": cpu * 1000 / N_SAMPLES,
        "bytes": len(sampler._latest_json),
    }


def their_sample_cost(python: Path) -> dict[str, float]:
    argv = [str(python), "-c", _THEIR_SAMPLE, str(N_SAMPLES), str(KERNELS), _SLEEPER]
    return json.loads(subprocess.run(argv, check=True, capture_output=True, text=True).stdout)


# ----- 2 and 3. servers -----


async def _call(server: Server, method: str, path: str, body: dict | None = None) -> dict:
    client = AsyncHTTPClient()
    resp = await client.fetch(
        server.url + path,
        method=method,
        headers=server.headers(),
        body=None if body is None else json.dumps(body),
        request_timeout=60,
    )
    return json.loads(resp.body) if resp.body else {}


async def start_kernels(server: Server) -> None:
    for _ in range(KERNELS):
        await _call(server, "POST", "/api/kernels", {"name": "python3"})


def _cpu_seconds(pid: int) -> float:
    t = psutil.Process(pid).cpu_times()
    return t.user + t.system + t.children_user + t.children_system


async def tabs(server: Server, path: str, seconds: float, period: float, n_tabs: int) -> tuple[float, int]:
    """``n_tabs`` clients each GETting ``path`` every ``period`` s for ``seconds``; (server CPU s, requests)."""
    client = AsyncHTTPClient(force_instance=True, max_clients=max(n_tabs, 1))
    rng = random.Random(7)
    loop = asyncio.get_running_loop()
    done = 0

    async def tab(offset: float, start: float) -> None:
        nonlocal done
        due = start + offset
        while due < start + seconds:
            await asyncio.sleep(max(due - loop.time(), 0))
            await client.fetch(server.url + path, headers=server.headers())
            done += 1
            due += period

    before = _cpu_seconds(server.pid)
    start = loop.time()
    await asyncio.gather(*(tab(rng.uniform(0, period), start) for _ in range(n_tabs)))
    await asyncio.sleep(max(start + seconds - loop.time(), 0))
    used = _cpu_seconds(server.pid) - before
    client.close()
    return used, done


async def measure_servers(ours: Server, theirs: Server) -> dict[str, object]:
    AsyncHTTPClient(max_clients=64)  # the loop's shared client, made first: 50 requests really in flight
    await start_kernels(ours)
    await start_kernels(theirs)
    await asyncio.sleep(3)  # kernels start up
    for s, p in ((ours, OURS), (theirs, THEIRS)):
        await latencies(s, p, 20)  # warm-up
    lat = {
        "ours sequential": summary(await latencies(ours, OURS, N_REQUESTS)),
        "theirs sequential": summary(await latencies(theirs, THEIRS, N_REQUESTS)),
        "ours 50 together": summary(await latencies(ours, OURS, N_REQUESTS, concurrency=50)),
        "theirs 50 together": summary(await latencies(theirs, THEIRS, N_REQUESTS, concurrency=50)),
    }
    idle_ours, idle_theirs = await asyncio.gather(
        tabs(ours, OURS, IDLE_WINDOW, 1.0, 0), tabs(theirs, THEIRS, IDLE_WINDOW, 1.0, 0)
    )
    cpu = {
        "ours, no tab": (idle_ours[0] / IDLE_WINDOW, 0),
        "theirs, no tab": (idle_theirs[0] / IDLE_WINDOW, 0),
    }
    for label, server, path, period in (
        ("ours, 50 tabs every 2 s", ours, OURS, 2.0),
        ("theirs, 50 tabs every 2 s", theirs, THEIRS, 2.0),
        ("theirs, 50 tabs every 5 s", theirs, THEIRS, 5.0),
    ):
        used, n = await tabs(server, path, WINDOW, period, TABS)
        cpu[label] = (used / WINDOW, n)
    return {"latency": lat, "cpu": cpu}


def main() -> list[str]:
    python, version = resource_usage_python()
    recorded = str(CAPTURE) if CAPTURE.is_file() else ""
    lines = []
    if python is None:
        lines.append(f"jupyter-resource-usage unavailable ({version}); ours alone")
    else:
        jru, js = version.split()
        lines.append(f"jupyter-resource-usage {jru} on jupyter_server {js}, in {RESOURCE_USAGE_VENV}")
    lines.append(f"our GPU source: {'recorded ' + CAPTURE.name if recorded else 'this machine (live)'}")

    cost = {"ours, recorded H100 MIG": our_sample_cost(recorded)} if recorded else {}
    cost["ours, live (no GPU here)"] = our_sample_cost("")
    if python is not None:
        cost["theirs, api/metrics/v1 body"] = their_sample_cost(python)
    lines.append(f"{'one sample, in-process':<30}{'wall ms':>9}{'CPU ms':>9}{'bytes':>8}")
    lines += [f"{k:<30}{v['wall_ms']:>9.3f}{v['cpu_ms']:>9.3f}{v['bytes']:>8.0f}" for k, v in cost.items()]

    root = Path(tempfile.mkdtemp(prefix="gpu-env-bench-sampler-"))
    with ExitStack() as stack:
        extra = [f"--GpuEnvApp.gpu_recorded_source={recorded}"] if recorded else []
        (root / "ours").mkdir()
        ours = stack.enter_context(
            jupyter_server(sys.executable, root / "ours", *extra, ready_path=OURS, log_path=root / "ours.log")
        )
        if python is None:
            lines += _ours_alone(ours)
        else:
            (root / "theirs").mkdir()
            theirs = stack.enter_context(
                jupyter_server(python, root / "theirs", ready_path=THEIRS, log_path=root / "theirs.log")
            )
            r = asyncio.run(measure_servers(ours, theirs))  # kernels are ended with their servers
    shutil.rmtree(root, ignore_errors=True)  # kept, with the servers' logs, when something failed
    if python is None:
        return lines
    lat, cpu = r["latency"], r["cpu"]
    lines.append(f"{'latency':<30}{'p50 ms':>9}{'p99 ms':>9}")
    lines += [f"{k:<30}{v['p50']:>9.2f}{v['p99']:>9.2f}" for k, v in lat.items()]
    lines.append(f"{'server CPU':<30}{'% core':>9}{'requests':>9}")
    lines += [f"{k:<30}{v[0] * 100:>9.2f}{v[1]:>9}" for k, v in cpu.items()]
    ours_cost = cost.get("ours, recorded H100 MIG") or cost["ours, live (no GPU here)"]
    their_cost = cost["theirs, api/metrics/v1 body"]
    lines.append(
        f"ratio ours/theirs, one sample: wall {ours_cost['wall_ms'] / their_cost['wall_ms']:.2f}x, "
        f"CPU {ours_cost['cpu_ms'] / their_cost['cpu_ms']:.2f}x"
    )
    for mode in ("sequential", "50 together"):
        o, t = lat[f"ours {mode}"], lat[f"theirs {mode}"]
        lines.append(
            f"ratio ours/theirs, latency {mode}: p50 {o['p50'] / t['p50']:.2f}x, p99 {o['p99'] / t['p99']:.2f}x"
        )
    o = cpu["ours, 50 tabs every 2 s"][0]
    lines.append(
        f"ratio ours/theirs, server CPU with 50 tabs: {o / cpu['theirs, 50 tabs every 2 s'][0]:.2f}x (both every 2 s), "
        f"{o / cpu['theirs, 50 tabs every 5 s'][0]:.2f}x (theirs every 5 s); "
        f"no tab {cpu['ours, no tab'][0] / max(cpu['theirs, no tab'][0], 1e-9):.2f}x"
    )
    return lines


def _ours_alone(ours: Server) -> list[str]:
    async def run() -> tuple[dict, dict, tuple[float, int]]:
        AsyncHTTPClient(max_clients=64)
        await start_kernels(ours)
        await latencies(ours, OURS, 20)
        seq = summary(await latencies(ours, OURS, N_REQUESTS))
        together = summary(await latencies(ours, OURS, N_REQUESTS, concurrency=50))
        return seq, together, await tabs(ours, OURS, WINDOW, 2.0, TABS)

    seq, together, (used, n) = asyncio.run(run())
    return [
        f"ours sequential p50 {seq['p50']:.2f} ms, p99 {seq['p99']:.2f} ms",
        f"ours 50 together p50 {together['p50']:.2f} ms, p99 {together['p99']:.2f} ms",
        f"ours server CPU, 50 tabs every 2 s: {used / WINDOW * 100:.2f}% of a core ({n} requests)",
    ]


if __name__ == "__main__":
    print("\n".join(main()))
