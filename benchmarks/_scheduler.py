"""Helpers for bench_jobs: jupyter-scheduler's own virtual environment, two real Jupyter servers (ours and
theirs) on loopback, seeding both job stores before start, HTTP calls, and ending the processes we started.

jupyter-scheduler lives in its own environment (never in the project's): SCHEDULER_VENV, created and
filled with `pip install jupyter-scheduler jupyterlab` the first time.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import signal
import subprocess
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil
from _server import Server, free_port, peer_venv, server_argv, status_of
from tornado.httpclient import AsyncHTTPClient

SCHEDULER_VENV = Path.home() / ".cache" / "jupyter-gpu-env-bench" / "scheduler-venv"
SCHEDULER_PACKAGES = ("jupyter-scheduler", "jupyterlab")


def notebook(parameter: int = 1) -> dict[str, Any]:
    """A one-cell notebook whose cell is tagged `parameters` (papermill's and jupyter-scheduler's convention)."""
    return {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": None,
                "id": "params",
                "metadata": {"tags": ["parameters"]},
                "outputs": [],
                "source": f"x = {parameter}",
            }
        ],
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def write_notebook(path: Path) -> None:
    path.write_text(json.dumps(notebook()), encoding="utf-8")


# ----- jupyter-scheduler's environment -----


def scheduler_python() -> tuple[Path | None, str]:
    """The Python of jupyter-scheduler's environment, installing it the first time; else None and why."""
    probe = "import jupyter_scheduler, jupyterlab; print(jupyter_scheduler.__version__)"
    return peer_venv(SCHEDULER_VENV, SCHEDULER_PACKAGES, probe, "jupyter_scheduler")


# ----- seeding the stores before the servers start -----


def seed_ours(store_path: Path, n: int) -> None:
    """``n`` finished jobs through our own JobStore, one a minute apart, newest now."""
    from jupyter_gpu_env.jobs.store import JobStore
    from jupyter_gpu_env.models.jobs import Job, JobProgress

    now = time.time()
    jobs = []
    for i in range(n):
        jid = uuid.uuid4().hex[:12]
        folder = f"gpu-env-jobs/seed-{jid}"
        created = now - (n - i) * 60.0
        jobs.append(
            Job(
                id=jid,
                name=f"seed-{i}",
                backend="local",
                state="succeeded",
                message="All cells ran.",
                notebook_path="seed.ipynb",
                job_dir=folder,
                input_path=f"{folder}/input.ipynb",
                output_path=f"{folder}/output.ipynb",
                log_path=f"{folder}/log.txt",
                parameters={"x": i},
                kernel="python3",
                created_at=created,
                started_at=created + 1.0,
                finished_at=created + 5.0,
                progress=JobProgress(cells_done=2, cells_total=2),
                backend_job_id=str(10000 + i),
                exit_code=0,
            )
        )

    async def put() -> None:
        store = JobStore(store_path)
        try:
            await store.insert_many(jobs)
        finally:
            await asyncio.to_thread(store.close)

    asyncio.run(put())


_SEED_THEIRS = """
import sys
from jupyter_scheduler.orm import Job, create_session, create_tables
from jupyter_scheduler.utils import get_utc_timestamp
db_url, n = sys.argv[1], int(sys.argv[2])
create_tables(db_url)
now = get_utc_timestamp()
Session = create_session(db_url)
with Session() as session:
    for i in range(n):
        created = now - (n - i) * 60_000
        session.add(Job(
            runtime_environment_name="python3", input_filename="seed.ipynb", output_formats=["ipynb"],
            name=f"seed-{i}", parameters={"x": str(i)}, status="COMPLETED", create_time=created,
            update_time=created + 5000, start_time=created + 1000, end_time=created + 5000,
        ))
    session.commit()
"""


def seed_theirs(python: Path, db_url: str, n: int) -> subprocess.Popen[bytes]:
    """Start inserting ``n`` completed jobs through jupyter-scheduler's own ORM models, in its own
    environment; ``wait()`` on the process returned (it runs beside ``seed_ours``)."""
    return subprocess.Popen([str(python), "-c", _SEED_THEIRS, db_url, str(n)], stderr=subprocess.PIPE)


# ----- servers -----


@contextmanager
def jupyter_server(
    python: Path | str,
    root: Path,
    *extra: str,
    log_path: Path,
    env: Mapping[str, str] | None = None,
) -> Iterator[Server]:
    """A real `jupyter server` on 127.0.0.1 run by ``python``, started, not yet ready: see wait_ready.

    On exit: the server is stopped, then every process it started that still lives (job runners,
    kernels) is ended by its pid.
    """
    port, token = free_port(), secrets.token_hex(8)
    bindir = str(Path(python).parent)
    full_env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    full_env.update(
        PATH=os.pathsep.join([bindir, full_env.get("PATH", os.defpath)]),
        JUPYTER_DATA_DIR=str(root / ".data"),
        JUPYTER_RUNTIME_DIR=str(root / ".runtime"),
        JUPYTER_CONFIG_DIR=str(root / ".config"),
        **(env or {}),
    )
    argv = server_argv([str(python), "-m", "jupyter", "server"], port, token, root, tuple(extra))
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=full_env, cwd=root)
    server = Server(f"http://127.0.0.1:{port}", token, proc.pid)
    try:
        yield server
    finally:
        descendants = children_of(proc.pid)  # found before the server goes: then they are orphans
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        end_processes(descendants.values())


def wait_ready(server: Server, path: str) -> None:
    """Until ``path`` answers 200 (the extension loaded and started); at most 120 s."""

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if not _lives_pid(server.pid):
            raise RuntimeError(f"the server at {server.url} exited during its start")
        if asyncio.run(status_of(server.url + path, server.headers())) == 200:
            return
        time.sleep(0.25)
    raise RuntimeError(f"the server at {server.url} did not answer {path} within 120 s")


def settle(pids: Iterable[int], timeout: float = 15.0) -> None:
    """Until the servers ``pids`` have no live process under them but multiprocessing's resource tracker:
    the previous job (its runner, its kernel) has fully ended before the next measurement."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        busy = False
        for pid in pids:
            for p in children_of(pid).values():
                try:
                    if _lives(p) and not any("resource_tracker" in part for part in p.cmdline()):
                        busy = True
                except psutil.Error:
                    pass
        if not busy:
            return
        time.sleep(0.05)


def children_of(pid: int) -> dict[int, psutil.Process]:
    try:
        return {p.pid: p for p in psutil.Process(pid).children(recursive=True)}
    except psutil.Error:
        return {}


def end_processes(procs: Iterable[psutil.Process]) -> None:
    """SIGKILL each given process (by its pid; psutil checks it is still the same process) and wait until
    each is gone or a zombie: another process's child stays one until its parent reaps it."""
    procs = list(procs)
    for p in procs:
        try:
            p.kill()
        except psutil.Error:
            pass
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(_lives(p) for p in procs):
        time.sleep(0.01)


def _lives_pid(pid: int) -> bool:
    try:
        return _lives(psutil.Process(pid))
    except psutil.Error:
        return False


def _lives(p: psutil.Process) -> bool:
    try:
        return p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


# ----- HTTP -----


class Api:
    """Timed JSON requests to one server."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self._client: AsyncHTTPClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def client(self) -> AsyncHTTPClient:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:  # one client per event loop
            self._client, self._loop = AsyncHTTPClient(force_instance=True, max_clients=20), loop
        return self._client

    async def call(self, method: str, path: str, body: Any = None) -> tuple[float, Any]:
        """(milliseconds, parsed JSON body or None); raises on a status >= 400."""
        t = time.perf_counter()
        resp = await self.client.fetch(
            self.server.url + path,
            method=method,
            headers={**self.server.headers(), "Content-Type": "application/json"},
            body=None if body is None else json.dumps(body),
            allow_nonstandard_methods=True,
            request_timeout=120,
        )
        ms = (time.perf_counter() - t) * 1000
        return ms, (json.loads(resp.body) if resp.body else None)
