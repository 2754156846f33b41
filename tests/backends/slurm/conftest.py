"""A real single-node SLURM for the session (scripts/slurm-local.sh), and helpers for the SLURM tests.

The cluster starts only when a test asks for it (the parser and script tests need none). It is skipped,
saying why, where it cannot start: not root and not already running, no slurm-wlm to be had, or
slurmctld failing. A cluster that was already up before the session is used and left running.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import ended, stopped_after, wait_for_job, write_notebook
from jupyter_client.kernelspec import KernelSpecManager

from jupyter_gpu_env import proc
from jupyter_gpu_env.backends.slurm import SlurmBackend
from jupyter_gpu_env.jobs.service import JobService
from jupyter_gpu_env.jobs.store import JobStore
from jupyter_gpu_env.models.jobs import Job

REPO = Path(__file__).resolve().parents[3]
SCRIPT = REPO / "scripts" / "slurm-local.sh"
DATA = Path(__file__).parent / "data"


def _script(action: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SCRIPT), action], capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.fixture(scope="session")
def slurm_conf() -> Iterator[str]:
    """The slurm.conf of a running local cluster (started for the session unless it already ran)."""
    if sys.platform != "linux":
        pytest.skip("the local SLURM cluster needs Linux")
    was_up = _script("status", 30).returncode == 0
    if not was_up and os.geteuid() != 0:
        pytest.skip("the local SLURM cluster needs root to start (munged, slurmd); run as root")
    started = _script("start", 300)
    if started.returncode != 0:
        tail = "\n".join((started.stdout + started.stderr).strip().splitlines()[-8:])
        pytest.skip(f"slurmctld could not start (scripts/slurm-local.sh start):\n{tail}")
    conf = started.stdout.strip().splitlines()[-1]
    yield conf
    if not was_up:
        _script("stop", 60)


class Slurm:
    """One test's SLURM batch state: a root with notebooks, a job dir, a store, a service over the cluster."""

    def __init__(self, tmp_path: Path, conf: str) -> None:
        self.conf = conf
        self.root = tmp_path / "root"
        self.root.mkdir()
        self.db = tmp_path / "state" / "jobs.sqlite"
        self.commands: list[list[str]] = []  # every SLURM command the backends ran

    def backend(self, **kwargs: Any) -> SlurmBackend:
        kwargs.setdefault("slurm_conf", self.conf)
        kwargs.setdefault("status_grace", 5.0)
        kwargs.setdefault("command_timeout", 20.0)
        backend = SlurmBackend("slurm", **kwargs)
        run = backend.controller.run

        async def counted(argv: list[str], **kw: Any) -> proc.Result:
            self.commands.append(list(argv))
            return await run(argv, **kw)

        backend.controller.run = counted  # type: ignore[method-assign]
        return backend

    def service(self, backend: SlurmBackend | None = None, **kwargs: Any) -> JobService:
        return JobService(
            JobStore(self.db),
            {"slurm": backend or self.backend()},
            self.root,
            "jobs",
            kernel_names=lambda: set(KernelSpecManager().find_kernel_specs()),
            refresh_interval=0.2,
            **kwargs,
        )

    def notebook(self, name: str, cells: list[str], *, parameters: str | None = None) -> str:
        """Write a notebook under the root; ``parameters`` becomes a cell tagged `parameters`."""
        return write_notebook(self.root, name, cells, parameters=parameters)

    def env(self) -> dict[str, str]:
        return {**os.environ, "SLURM_CONF": self.conf}

    async def sh(self, *argv: str) -> proc.Result:
        """A SLURM command run by the test itself (not counted)."""
        return await proc.run(list(argv), env=self.env(), timeout=30)

    @staticmethod
    async def wait_for(
        svc: JobService, job_id: str, done: Callable[[Job], bool], within: float = 60.0
    ) -> Job:
        """Refresh until ``done(job)``; fail with the job's last state after ``within`` seconds."""
        return await wait_for_job(svc, job_id, done, within=within)

    ended = staticmethod(ended)


@pytest.fixture
def slurm(tmp_path: Path, slurm_conf: str) -> Slurm:
    return Slurm(tmp_path, slurm_conf)


@pytest.fixture
def slurm_service(
    slurm: Slurm, jp_asyncio_loop: asyncio.AbstractEventLoop
) -> Iterator[Callable[..., JobService]]:
    """Make a JobService over ``slurm`` (``slurm_service(backend, **kwargs)`` takes what ``slurm.service``
    takes), in the test, on its loop; each one made is stopped after the test."""
    yield from stopped_after(slurm.service, jp_asyncio_loop)


@pytest.fixture
def gate(slurm: Slurm) -> Iterator[Path]:
    """A file for notebooks to wait for (the test makes it when they may go on); made after the test
    whatever happened, so that no job is left waiting in SLURM."""
    path = slurm.root / "go"
    yield path
    path.touch()
