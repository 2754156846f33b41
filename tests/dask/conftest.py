"""The ``dask_env`` fixture: Dask clusters over a real local backend (see dask_local.py)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import psutil
import pytest
from dask_local import DaskEnv, members


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
