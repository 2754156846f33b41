"""Dask clusters over a real local backend: the venv running the tests is the environment (it has
``distributed``), so scheduler and workers are real processes on this machine."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from jupyter_gpu_env.dask.launchers import DaskSettings
from jupyter_gpu_env.dask.service import DaskService
from jupyter_gpu_env.dask.spec import SCHEDULER_JSON

ENV = "venv"  # the environment name the tests use: this interpreter's prefix


def members(folder: Path) -> list[psutil.Process]:
    """This user's processes of one cluster: every command naming its scheduler file."""
    marker = str(folder / SCHEDULER_JSON)
    found = []
    for p in psutil.process_iter(["uids", "cmdline", "status"]):
        with contextlib.suppress(psutil.Error):
            if (
                p.info["uids"].real == os.getuid()
                and p.info["status"] != psutil.STATUS_ZOMBIE
                and marker in (p.info["cmdline"] or [])
            ):
                found.append(p)
    return found


class DaskEnv:
    def __init__(self, batch: Any) -> None:
        self.batch = batch
        self.services: list[DaskService] = []

    def service(self, **settings: Any) -> DaskService:
        settings.setdefault("connect_timeout_seconds", 60)
        jobs = self.batch.service()
        svc = DaskService(
            jobs,
            self.batch.job_dir / "dask",
            DaskSettings(**settings),
            environments=lambda name: sys.prefix if name == ENV else None,
            kernel_python=lambda name: sys.executable if name == "python3" else None,
            images=lambda name: None,
            base_url="/base/",
        )
        self.services.append(svc)
        return svc


@pytest.fixture
def dask_env(batch: Any) -> Iterator[DaskEnv]:
    env = DaskEnv(batch)
    try:
        yield env
    finally:
        for svc in env.services:
            with contextlib.suppress(RuntimeError):  # one the test stopped itself, as a server stops
                svc.jobs.store.close()
        # whatever a failing test left running is ended, so that no test sees another's processes
        root = batch.job_dir / "dask"
        for folder in root.iterdir() if root.exists() else []:
            for p in members(folder):
                with contextlib.suppress(psutil.Error):
                    p.kill()
