"""The ``batch`` fixture: real notebooks, a real store, the real local backend and runner.

A plugin module registered by the root conftest (``pytest_plugins``), for the batch tests and the
CLI's job commands (tests/cli), and ``job_service``, JobServices over it stopped after the test. Fixtures
are synchronous (pytest-jupyter runs the async tests). Test modules reach the helpers through the
``batch`` fixture.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from helpers import ended, stopped_after, wait_for_job, wait_until, write_notebook
from jupyter_client.kernelspec import KernelSpecManager

from jupyter_gpu_env.backends.local import LocalBackend
from jupyter_gpu_env.contracts import jobfiles
from jupyter_gpu_env.jobs.service import JobService
from jupyter_gpu_env.jobs.store import JobStore
from jupyter_gpu_env.models.jobs import Job


def installed_kernels() -> set[str]:
    return set(KernelSpecManager().find_kernel_specs())


def running(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie has ended)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


class Env:
    """One server's worth of batch state under tmp_path: root, job dir, store file."""

    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path / "root"
        self.root.mkdir()
        self.job_dir = self.root / "jobs"
        self.db = tmp_path / "state" / "jobs.sqlite"

    def service(self, *, max_concurrent: int = 2, **kwargs: Any) -> JobService:
        """A JobService over this env's store and job dir: what one server start builds."""
        kwargs.setdefault("kernel_names", installed_kernels)
        kwargs.setdefault("refresh_interval", 0.2)
        backend = LocalBackend(max_concurrent=max_concurrent, kill_grace=3.0)
        return JobService(JobStore(self.db), {"local": backend}, self.root, "jobs", **kwargs)

    def job_folders(self) -> list[Path]:
        return sorted(self.job_dir.iterdir()) if self.job_dir.exists() else []

    def notebook(
        self, name: str, cells: list[str], *, parameters: str | None = None, kernel: str = "python3"
    ) -> str:
        """Write a notebook under the root (after a markdown heading cell); ``parameters`` becomes a cell
        tagged `parameters`. Returns its path."""
        return write_notebook(
            self.root, name, cells, parameters=parameters, kernel=kernel, heading="# A batch test"
        )

    @staticmethod
    async def wait_for(
        svc: JobService, job_id: str, done: Callable[[Job], bool], within: float = 60.0
    ) -> Job:
        """Refresh until ``done(job)``; fail with the job's last state after ``within`` seconds."""
        return await wait_for_job(svc, job_id, done, within=within)

    async def wait_status(self, job: Job, within: float = 60.0) -> None:
        """Wait until ``job``'s runner has written its status.json: the job has ended, whatever its record
        (not refreshed meanwhile) says."""
        await wait_until(
            lambda: jobfiles.read_status(self.root / job.job_dir) is not None,
            within=within,
            what=f"the runner's status.json of job {job.id}",
        )

    @staticmethod
    async def wait_gone(pid: int, within: float) -> float:
        """Wait until process ``pid`` has ended (a zombie has ended); return how long it took."""
        t0 = time.monotonic()
        await wait_until(lambda: not running(pid), within=within, what=f"process {pid} ending")
        return time.monotonic() - t0

    ended = staticmethod(ended)

    @staticmethod
    async def read_whole_log(svc: JobService, job_id: str, chunk: int = 64) -> str:
        """Follow the log in small chunks, as the UI does, and join them."""
        text, offset = [], 0
        while True:
            part = await svc.log(job_id, offset, chunk)
            text.append(part.text)
            if part.next_offset == offset:
                return "".join(text)
            offset = part.next_offset


@pytest.fixture
def batch(tmp_path: Path) -> Env:
    return Env(tmp_path)


@pytest.fixture
def job_service(
    batch: Env, jp_asyncio_loop: asyncio.AbstractEventLoop
) -> Iterator[Callable[..., JobService]]:
    """Make a JobService over ``batch`` (``job_service(**kwargs)`` takes what ``batch.service`` takes), in
    the test, on its loop; each one made is stopped after the test (its jobs keep running; the backends and
    the store are released). A test that stops one itself, to start another over the same store as a
    restarted server does, makes it with ``batch.service`` instead."""
    yield from stopped_after(batch.service, jp_asyncio_loop)
