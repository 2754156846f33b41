"""Helpers of the local Dask tests (the ``dask_env`` fixture is in conftest.py): clusters over a real local backend: the venv running the tests is the environment (it has
``distributed``), so scheduler and workers are real processes on this machine."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Any

import psutil

from jupyter_gpu_env.backends.dask import DaskSettings
from jupyter_gpu_env.contracts.dask.spec import SCHEDULER_JSON
from jupyter_gpu_env.dask.service import DaskService

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
