"""Start a real Jupyter server for a benchmark and time HTTP requests against it."""

from __future__ import annotations

import asyncio
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tornado.httpclient import AsyncHTTPClient, HTTPClientError

# Tornado shares one client per event loop and ignores a later max_clients: set it before any use, so
# that "50 together" really has 50 requests in flight.
AsyncHTTPClient.configure(None, max_clients=64)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def peer_venv(venv: Path, packages: tuple[str, ...], probe: str, module: str) -> tuple[Path | None, str]:
    """The Python of a peer's own environment (``venv``), made and filled with ``packages`` the first
    time; ``probe`` is code that imports ``module`` and prints its version. Else None and why."""
    python = venv / "bin" / "python"
    check = [str(python), "-c", probe]
    if not python.exists():
        print(f"(creating {venv} with {' '.join(packages)}; once)", flush=True)
        venv.parent.mkdir(parents=True, exist_ok=True)
        made = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True)
        if made.returncode != 0:
            return None, f"python -m venv failed: {made.stderr.strip()[-500:]}"
    if subprocess.run(check, capture_output=True).returncode != 0:
        got = subprocess.run(
            [str(python), "-m", "pip", "install", "-q", *packages], capture_output=True, text=True
        )
        if got.returncode != 0:
            return None, f"pip install {' '.join(packages)} failed: {got.stderr.strip()[-500:]}"
    found = subprocess.run(check, capture_output=True, text=True)
    if found.returncode != 0:
        return None, f"{module} does not import: {found.stderr.strip()[-500:]}"
    return python, found.stdout.strip()


def server_argv(
    program: list[str], port: int, token: str, root: str | Path, extra: tuple[str, ...]
) -> list[str]:
    """``program`` (a ``jupyter server`` command) on ``port`` with ``token``, serving ``root``."""
    return [
        *program,
        f"--port={port}",
        "--ip=127.0.0.1",
        "--no-browser",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--allow-root",
        *extra,
    ]


async def status_of(url: str, headers: dict[str, str]) -> int:
    """The HTTP status ``url`` answers with, 0 when nothing answers (a server still starting)."""
    try:
        resp = await AsyncHTTPClient().fetch(url, headers=headers, request_timeout=5)
        return resp.code
    except HTTPClientError as e:
        return e.code
    except OSError:
        return 0


@dataclass
class Server:
    url: str
    token: str
    pid: int

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"token {self.token}"}


@contextmanager
def jupyter_server(
    *extra: str, root: str | None = None, program: list[str] | None = None
) -> Iterator[Server]:
    """A server on a free port with a fresh token; its log is ``server.log`` in a temporary folder.

    ``program`` replaces ``python -m jupyter server`` (a wrapper that records something of the server).
    """
    port, token = free_port(), secrets.token_hex(8)
    scratch = tempfile.mkdtemp(prefix="gpu-env-bench-")
    root = root or scratch
    argv = server_argv(program or [sys.executable, "-m", "jupyter", "server"], port, token, root, extra)
    env = {**os.environ, "JUPYTER_DATA_DIR": os.path.join(scratch, ".data")}
    log_path = os.path.join(scratch, "server.log")
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=log, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                if proc.poll() is not None or time.time() > deadline:
                    with open(log_path, encoding="utf-8", errors="replace") as f:
                        raise RuntimeError(f"the server did not start:\n{f.read()[-3000:]}") from None
                time.sleep(0.2)
        yield Server(url, token, proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    k = max(0, min(len(values) - 1, round(q / 100 * (len(values) - 1))))
    return values[k]


async def latencies(server: Server, path: str, n: int, concurrency: int = 1) -> list[float]:
    """Time ``n`` GETs of ``path``, ``concurrency`` at a time; milliseconds each."""
    client = AsyncHTTPClient()
    out: list[float] = []
    sem = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with sem:
            t = time.perf_counter()
            resp = await client.fetch(server.url + path, headers=server.headers())
            out.append((time.perf_counter() - t) * 1000)
            assert resp.code == 200

    await asyncio.gather(*(one() for _ in range(n)))
    return out


def summary(ms: list[float]) -> dict[str, float]:
    return {"p50": percentile(ms, 50), "p99": percentile(ms, 99), "mean": statistics.fmean(ms)}
