"""Fixtures of the schedules' tests: a ScheduleService over the ``batch`` workspace's JobService."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from jupyter_gpu_env.jobs.service import JobService
from jupyter_gpu_env.schedules.service import ScheduleService

Scheduling = Callable[..., tuple[JobService, ScheduleService]]


@pytest.fixture
def scheduling(job_service: Callable[..., JobService]) -> Scheduling:
    """Make a JobService over ``batch`` and a ScheduleService over it, as one server start builds them.

    Call it in the test (on its loop): ``svc, sched = scheduling()``; keyword arguments go to the
    ScheduleService, whose minimum period is 1 s unless given. Each JobService made is stopped after the
    test (``job_service``).
    """

    def make(**kwargs: Any) -> tuple[JobService, ScheduleService]:
        kwargs.setdefault("minimum_period", 1)
        svc = job_service()
        return svc, ScheduleService(svc, **kwargs)

    return make
