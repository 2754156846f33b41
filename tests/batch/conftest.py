"""Fixtures for the batch tests: real notebooks, a real store, the real local backend and runner.

Fixtures are synchronous (pytest-jupyter runs the async tests). Test modules reach the helpers
through the ``batch`` fixture, since two conftest.py files cannot both be imported by name.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat
import psutil
import pytest
from jupyter_client.kernelspec import KernelSpecManager

from jupyter_gpu_env.batch.local import LocalBackend
from jupyter_gpu_env.batch.service import JobService
from jupyter_gpu_env.batch.store import JobStore
from jupyter_gpu_env.models.jobs import Job


def installed_kernels() -> set[str]:
    return set(KernelSpecManager().find_kernel_specs())


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
        """Write a notebook under the root; ``parameters`` becomes a cell tagged `parameters`. Returns its path."""
        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = {"name": kernel, "display_name": kernel, "language": "python"}
        nb.cells.append(nbformat.v4.new_markdown_cell("# A batch test"))
        if parameters is not None:
            cell = nbformat.v4.new_code_cell(parameters)
            cell.metadata["tags"] = ["parameters"]
            nb.cells.append(cell)
        nb.cells.extend(nbformat.v4.new_code_cell(src) for src in cells)
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, path)
        return name

    @staticmethod
    async def wait_for(
        svc: JobService, job_id: str, done: Callable[[Job], bool], within: float = 60.0
    ) -> Job:
        """Refresh until ``done(job)``; fail with the job's last state after ``within`` seconds."""
        deadline = time.monotonic() + within
        while True:
            await svc.refresh()
            job = await svc.get(job_id)
            if done(job):
                return job
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting; job is {job.state}: {job.message}")
            await asyncio.sleep(0.2)

    @staticmethod
    async def wait_gone(pid: int, within: float) -> float:
        """Wait until process ``pid`` has ended (a zombie has ended); return how long it took."""
        t0 = time.monotonic()
        while psutil.pid_exists(pid):
            try:
                if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                    break
            except psutil.NoSuchProcess:
                break
            if time.monotonic() - t0 > within:
                raise AssertionError(f"process {pid} still runs after {within} s")
            await asyncio.sleep(0.05)
        return time.monotonic() - t0

    @staticmethod
    def ended(job: Job) -> bool:
        return job.state in ("succeeded", "failed", "cancelled")

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
