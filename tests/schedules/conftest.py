"""Fixtures of the schedules' tests: a ScheduleService over the ``batch`` workspace's JobService."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from batch_fixtures import Env

from jupyter_gpu_env.jobs.service import JobService
from jupyter_gpu_env.schedules.service import ScheduleService

Scheduling = Callable[..., tuple[JobService, ScheduleService]]


@pytest.fixture
def scheduling(batch: Env, jp_asyncio_loop: asyncio.AbstractEventLoop) -> Iterator[Scheduling]:
    """Make a JobService over ``batch`` and a ScheduleService over it, as one server start builds them.

    Call it in the test (on its loop): ``svc, sched = scheduling()``; keyword arguments go to the
    ScheduleService, whose minimum period is 1 s unless given. Each JobService made is stopped after the
    test (its jobs keep running; the backends and the store are released).
    """
    made: list[JobService] = []

    def make(**kwargs: Any) -> tuple[JobService, ScheduleService]:
        kwargs.setdefault("minimum_period", 1)
        svc = batch.service()
        made.append(svc)
        return svc, ScheduleService(svc, **kwargs)

    yield make
    for svc in made:
        jp_asyncio_loop.run_until_complete(svc.stop())
