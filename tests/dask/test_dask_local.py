"""Dask clusters on the local backend: real schedulers, keepers and workers on this machine."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import psutil
import pytest
from dask_local import ENV, members
from distributed import Client
from helpers import wait_until

from jupyter_gpu_env.dask.service import DaskService
from jupyter_gpu_env.errors import Conflict, NotFound
from jupyter_gpu_env.models.automation.dask import DaskCluster, DaskClusterRequest, DaskScaleRequest

N = 10**7


async def _until(svc: DaskService, cluster_id: str, ok, what: str, within: float = 60) -> DaskCluster:
    last: list[DaskCluster] = []

    async def check() -> DaskCluster | None:
        got = await svc.get(cluster_id)
        last[:] = [got]
        return got if ok(got) else None

    return await wait_until(
        check, within=within, what=lambda: f"{what}; last seen: {last[0].model_dump() if last else None}"
    )


def _running(n: int):
    return lambda c: c.state == "running" and c.workers.running == n and c.workers.pending == 0


async def _sum(address: str) -> int:
    async with Client(address, asynchronous=True) as client:
        step = N // 10
        parts = client.map(sum, [range(i, i + step) for i in range(0, N, step)])
        return int(await client.submit(sum, parts))


async def test_a_cluster_computes_scales_and_shuts_down_leaving_nothing(dask_env):
    svc = dask_env.service()
    made = await svc.create(DaskClusterRequest(environment=ENV, workers=2, name="analysis"))
    assert made.state == "starting" and made.name == "analysis" and made.backend == "local"
    folder = Path((await svc.records.get(made.id)).folder)
    up = await _until(svc, made.id, _running(2), "two workers joining")
    assert up.scheduler_address and up.scheduler_address.startswith("tcp://")
    assert up.dashboard == f"/base/gpu-env/dask/{made.id}/status"
    assert up.versions.distributed and up.lifetime_seconds < up.walltime_seconds
    assert await _sum(up.scheduler_address) == N * (N - 1) // 2

    await svc.scale(made.id, DaskScaleRequest(workers=3))
    assert (await _until(svc, made.id, _running(3), "a third worker")).workers.requested == 3
    await svc.scale(made.id, DaskScaleRequest(workers=1))
    down = await _until(svc, made.id, _running(1), "two workers retired")
    assert down.workers.started_total == 3

    stopping = await svc.stop(made.id)
    assert stopping.state in ("stopping", "stopped")
    stopped = await svc.wait_stopped(made.id)
    assert stopped.state == "stopped" and stopped.message == "Shut down."
    assert stopped.scheduler_address is None and stopped.dashboard is None
    assert members(folder) == []
    assert stopped.worker_hours > 0
    usage = await svc.jobs.store.usage(made.created_at - 1, time.time() + 1)
    assert usage.dask_clusters["analysis"].worker_hours == pytest.approx(stopped.worker_hours, rel=0.2)
    assert usage.backends["local"].cpu_hours > 0
    # stopping again answers it as it is; scaling it is refused
    assert (await svc.stop(made.id)).state == "stopped"
    with pytest.raises(Conflict) as e:
        await svc.scale(made.id, DaskScaleRequest(workers=2))
    assert e.value.reason == "cluster_ended"


async def test_a_restarted_server_finds_its_cluster_and_a_killed_worker_is_replaced(dask_env):
    first = dask_env.service()
    made = await first.create(DaskClusterRequest(kernel="python3", workers=2))
    up = await _until(first, made.id, _running(2), "two workers")
    await first.close()
    await first.jobs.stop()

    again = dask_env.service()  # a new server over the same store and folders
    found = await _until(again, made.id, _running(2), "the cluster found again")
    assert found.scheduler_address == up.scheduler_address
    assert [c.id for c in (await again.list()).items] == [made.id]

    folder = Path((await again.records.get(made.id)).folder)
    pool = json.loads((folder / "pool-local.json").read_text())["pids"]
    victim = psutil.Process(next(iter(pool.values())))
    victim.send_signal(signal.SIGKILL)  # the worker's nanny, and with it its worker
    replaced = await _until(
        again, made.id, lambda c: _running(2)(c) and c.workers.started_total == 3, "a replacement"
    )
    assert await _sum(replaced.scheduler_address or "") == N * (N - 1) // 2
    assert (await again.stop(made.id)).state in ("stopping", "stopped")
    assert (await again.wait_stopped(made.id)).state == "stopped"
    assert members(folder) == []


async def test_an_unused_cluster_shuts_itself_down(dask_env):
    svc = dask_env.service(idle_timeout_seconds=3)
    made = await svc.create(DaskClusterRequest(environment=ENV, adapt={"minimum": 1, "maximum": 2}))
    folder = Path((await svc.records.get(made.id)).folder)
    ended = await _until(svc, made.id, lambda c: c.state == "stopped", "the idle shutdown", within=60)
    assert ended.message == "Shut down after 3 s unused."
    await wait_until(lambda: members(folder) == [], within=30, what="its processes ending")


async def test_refusals_name_what_to_do(dask_env, tmp_path):
    svc = dask_env.service(max_workers=4)
    with pytest.raises(Conflict) as e:
        await svc.create(DaskClusterRequest(environment=ENV, workers=5))
    assert e.value.reason == "too_many_workers" and "c.DaskClusters.max_workers" in e.value.message
    with pytest.raises(NotFound):
        await svc.create(DaskClusterRequest(environment="nowhere"))
    with pytest.raises(NotFound) as e:
        await svc.create(DaskClusterRequest(environment=ENV, backend="htcondor"))
    assert e.value.reason == "unknown_backend"
    with pytest.raises(Conflict) as e:
        await svc.create(DaskClusterRequest(environment=ENV, resources={"mig_profile": "1g.10gb"}))
    assert e.value.reason == "resources_unavailable"
    with pytest.raises(NotFound):
        await svc.get("0123456789ab")
    assert not (dask_env.batch.job_dir / "dask").exists() or not any(
        (dask_env.batch.job_dir / "dask").iterdir()
    )
