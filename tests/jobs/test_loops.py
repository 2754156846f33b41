"""The service's background loops: the job poller is one, and a feature's timer is added beside it."""

from __future__ import annotations

import asyncio

import pytest
from helpers import wait_until

from jupyter_gpu_env.backends.local import LocalBackend
from jupyter_gpu_env.jobs.service import JobService
from jupyter_gpu_env.jobs.store import JobStore
from jupyter_gpu_env.loops import Loops


async def test_a_loop_ticks_until_stopped_and_outlives_a_failing_round():
    loops = Loops()
    ticks: list[int] = []

    async def tick() -> None:
        ticks.append(len(ticks))
        if len(ticks) == 2:
            raise RuntimeError("one bad round")

    loops.add("timer", 0.01, tick)
    assert ticks == []  # nothing runs before start()
    loops.start()
    await wait_until(lambda: len(ticks) >= 4, within=5)
    await loops.stop()
    stopped_at = len(ticks)
    await asyncio.sleep(0.05)
    assert len(ticks) == stopped_at


async def test_a_loop_added_while_running_starts_at_once_and_names_are_unique():
    loops = Loops()
    loops.start()
    ran = asyncio.Event()

    async def tick() -> None:
        ran.set()

    loops.add("late", 0.01, tick)
    await asyncio.wait_for(ran.wait(), 5)
    with pytest.raises(ValueError, match="late"):
        loops.add("late", 1.0, tick)
    await loops.stop()


async def test_the_job_service_runs_the_poller_and_a_features_loop_between_start_and_stop(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    svc = JobService(
        JobStore(tmp_path / "jobs.sqlite"),
        {"local": LocalBackend()},
        root,
        "jobs",
        kernel_names=lambda: ["python3"],
        refresh_interval=0.05,
    )
    assert svc.loops.names == ["jobs"]
    fired: list[float] = []

    async def schedule() -> None:
        fired.append(asyncio.get_running_loop().time())

    svc.loops.add("schedules", 0.01, schedule)
    await svc.start()
    try:
        await wait_until(lambda: len(fired) >= 2, within=5)
    finally:
        await svc.stop()
    count = len(fired)
    await asyncio.sleep(0.05)
    assert len(fired) == count  # stopped with the service


async def test_a_server_runs_the_features_timers_beside_the_job_poller_not_on_it(api, jp_serverapp):
    """Schedules, pipelines, Dask clusters, batch kernels and the metrics' reading keep their own timers (the server's, started once the jobs
    are reconciled); the job service runs only its poller, as it does under the CLI."""
    await api("jobs")  # the services have started
    services = jp_serverapp.web_app.settings["gpu_env_services"]
    assert services.jobs.loops.names == ["jobs"]
    features = ["schedules", "pipelines", "dask", "batch-kernels", "metrics"]
    assert services.timers.names == features
    assert services.timers.running == features  # started with the services
