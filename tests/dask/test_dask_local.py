"""Dask clusters on the local backend: real schedulers, keepers and workers on this machine."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import stat
import sys
import time
from pathlib import Path

import psutil
import pytest
from dask_local import ENV, members
from distributed import Client, Security
from helpers import wait_until
from intruder import assert_all_refused, attempts_as_nobody

from jupyter_gpu_env.contracts.dask.keeper.pools import LocalPool
from jupyter_gpu_env.contracts.dask.spec import DIR_ENV
from jupyter_gpu_env.contracts.dask.state import read_state
from jupyter_gpu_env.dask import connect
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


def security(c: DaskCluster) -> Security:
    """What the owner's client presents: the files the API names."""
    assert c.tls is not None
    return Security(
        tls_ca_file=c.tls.ca_file,
        tls_client_cert=c.tls.cert_file,
        tls_client_key=c.tls.key_file,
        require_encryption=True,
    )


async def _sum(c: DaskCluster) -> int:
    async with Client(c.scheduler_address, security=security(c), asynchronous=True) as client:
        step = N // 10
        parts = client.map(sum, [range(i, i + step) for i in range(0, N, step)])
        return int(await client.submit(sum, parts))


async def test_a_cluster_computes_scales_and_shuts_down_leaving_nothing(dask_env):
    svc = dask_env.service()
    made = await svc.create(DaskClusterRequest(environment=ENV, workers=2, name="analysis"))
    assert made.state == "starting" and made.name == "analysis" and made.backend == "local"
    folder = Path((await svc.records.get(made.id)).folder)
    up = await _until(svc, made.id, _running(2), "two workers joining")
    assert up.scheduler_address and up.scheduler_address.startswith("tls://127.0.0.1:")
    assert up.dashboard == f"/base/gpu-env/dask/{made.id}/status"
    assert up.versions.distributed and up.lifetime_seconds < up.walltime_seconds
    assert await _sum(up) == N * (N - 1) // 2

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
    assert await _sum(replaced) == N * (N - 1) // 2
    assert (await again.stop(made.id)).state in ("stopping", "stopped")
    assert (await again.wait_stopped(made.id)).state == "stopped"
    assert members(folder) == []


async def test_the_cluster_is_the_owners_alone(dask_env):
    """Every port of the cluster (scheduler, workers, nannies, dashboards) is on loopback and refuses
    another user of this machine: no plain tcp://, no tls:// without the cluster's own certificate, no
    dashboard page without it either. The key is the owner's alone."""
    svc = dask_env.service()
    made = await svc.create(DaskClusterRequest(environment=ENV, workers=1))
    up = await _until(svc, made.id, _running(1), "one worker")
    folder = Path((await svc.records.get(made.id)).folder)
    state = read_state(folder)
    assert state is not None and state.dashboard_port
    said = await asyncio.to_thread(attempts_as_nobody, up.scheduler_address or "", state.dashboard_port)
    assert_all_refused(said, dashboard=True)

    assert up.tls is not None and stat.S_IMODE(os.stat(up.tls.key_file).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(folder / "tls").st_mode) == 0o700
    for p in members(folder):  # every listening socket of every process of the cluster
        for conn in p.net_connections(kind="inet"):
            if conn.status == psutil.CONN_LISTEN:
                assert conn.laddr.ip == "127.0.0.1", (p.cmdline(), conn)
    # the owner, with the files the API names, computes
    assert await _sum(up) == N * (N - 1) // 2
    await svc.stop(made.id)
    await svc.wait_stopped(made.id)


async def test_connect_finds_the_cluster_by_its_id_and_loads_its_certificate(dask_env, tmp_path, monkeypatch):
    """``jupyter_gpu_env.dask.connect(id)`` as a notebook calls it (its kernel's event loop running in
    this thread): through ``$JUPYTER_GPU_ENV_DASK_DIR``, which the server gives what it starts, and
    without it through the configuration files the server and the CLI read."""
    svc = dask_env.service()
    made = await svc.create(DaskClusterRequest(environment=ENV, workers=1))
    up = await _until(svc, made.id, _running(1), "one worker")
    # the venv has this package: the code the API offers is connect's
    assert up.client_code == (
        f"from jupyter_gpu_env.dask import connect\n\nclient = connect('{made.id}')"
        "  # over the cluster's mutual TLS\nclient"
    )
    config = tmp_path / "config"
    config.mkdir()
    batch = dask_env.batch
    (config / "jupyter_server_config.json").write_text(
        json.dumps(
            {
                "ServerApp": {"root_dir": str(batch.root)},
                "GpuEnvApp": {"job_store": str(batch.db), "job_dir": "jobs", "backends": ["local"]},
            }
        )
    )
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(config))
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(config))
    for where in (str(svc.root), None):
        if where is None:
            monkeypatch.delenv(DIR_ENV, raising=False)
        else:
            monkeypatch.setenv(DIR_ENV, where)
        client = connect(made.id, timeout=30)
        try:
            assert client.scheduler.address == up.scheduler_address
            assert client.submit(sum, range(100)).result(timeout=30) == 4950
        finally:
            client.close()
    monkeypatch.setenv(DIR_ENV, str(svc.root))
    with pytest.raises(LookupError, match="0123456789ab"):
        connect("0123456789ab")
    with pytest.raises(LookupError, match="not a Dask cluster id"):
        connect("../../etc")
    await svc.stop(made.id)
    await svc.wait_stopped(made.id)
    with pytest.raises(ConnectionError, match="is stopped"):
        connect(made.id)


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
    # an environment without distributed: the refusal says to add it (and bokeh) from where they are
    bare = tmp_path / "bare"
    (bare / "bin").mkdir(parents=True)
    (bare / "bin" / "python").touch()
    (bare / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    svc.environments = lambda name: str(bare) if name == "bare" else None

    async def source(spec: str) -> str:
        return "conda" if spec == "bokeh" else "pypi"

    svc.package_source = source
    with pytest.raises(Conflict) as e:
        await svc.create(DaskClusterRequest(environment="bare"))
    assert e.value.reason == "dask_not_installed"
    assert e.value.details == [
        {
            "environment": "bare",
            "prefix": str(bare),
            "packages": ["distributed", "bokeh"],
            "conda": ["bokeh"],
            "pip": ["distributed"],
        }
    ]
    assert not (dask_env.batch.job_dir / "dask").exists() or not any(
        (dask_env.batch.job_dir / "dask").iterdir()
    )


async def test_local_gpu_workers_each_get_their_own_gpus(tmp_path):
    """The local pool hands each worker its own GPUs (CUDA_VISIBLE_DEVICES), none twice, and a GPU freed
    by a worker that ended to the next. The worker here is a stand-in that records what it saw."""
    code = "import os, sys, time; open(sys.argv[-1] + '.seen', 'w').write(os.environ['CUDA_VISIBLE_DEVICES']); time.sleep(120)"
    spec = {
        "worker_args": ["-c", code],
        "pool": {"kind": "local", "gpu_ids": ["0", "1", "2"], "gpus_per_worker": 1},
    }
    pool = LocalPool(tmp_path, spec, sys.executable)
    started = await pool.submit(4)
    assert started == ["local-1", "local-2", "local-3"]  # three GPUs, one each: the fourth waits

    def seen() -> dict[str, str] | None:
        files = {p.stem: p.read_text() for p in tmp_path.glob("local-*.seen") if p.read_text()}
        return files if len(files) == 3 else None

    got = await wait_until(seen, within=30, what="the workers saying which GPU they see")
    assert sorted(got.values()) == ["0", "1", "2"]
    await pool.cancel(["local-2"])
    await wait_until(lambda: len(pool._alive()) == 2, within=30, what="local-2 ending")
    assert await pool.submit(1) == ["local-4"]
    assert pool.gpus["local-4"] == [got["local-2"]]
    await pool.cancel_all()
    await wait_until(lambda: pool._alive() == [], within=30, what="the workers ending")


@pytest.mark.parametrize(
    ("cmdline", "ours", "age", "believed"),
    [
        (["python", "-m", "x", "{marker}"], False, 3600.0, True),  # its command names the scheduler file
        ([], True, 0.5, True),  # our child inside execve: the kernel has not written its arguments yet
        (["python", "-m", "server"], True, 0.5, True),  # our child before its exec: the server's command
        ([], False, 0.5, False),  # someone else's process on the pid
        ([], True, 3600.0, False),  # our child long since, not the scheduler
        (["python", "other"], False, 3600.0, False),  # another program on a reused pid
    ],
)
def test_the_local_scheduler_is_believed_by_its_command_or_as_our_child_just_started(
    tmp_path, monkeypatch, cmdline, ours, age, believed
):
    """Right after a start, /proc/PID/cmdline can be empty (measured: 133 of 5,012 reads under load): a
    cluster seen then must not read as ended before it started (a CI run's failure)."""
    from jupyter_gpu_env.backends.dask import ClusterRef
    from jupyter_gpu_env.backends.local import dask as local_dask

    ref = ClusterRef(id="c1", folder=tmp_path, handle=str(os.getpid()))
    marker = str(tmp_path / local_dask.SCHEDULER_JSON)
    monkeypatch.setattr(psutil.Process, "cmdline", lambda self: [a.format(marker=marker) for a in cmdline])
    monkeypatch.setattr(psutil.Process, "ppid", lambda self: os.getpid() if ours else 1)
    monkeypatch.setattr(psutil.Process, "create_time", lambda self: time.time() - age)
    assert (local_dask._scheduler_of(ref) is not None) is believed
