"""Dask clusters on a real single-node SLURM 22.05 (scripts/slurm-local.sh): the scheduler a batch job,
its workers job-array tasks the keeper submits, scaled, replaced at their lifetime, and shut down so that
squeue lists nothing of them. One cluster is shared by the tests of a module (starting one costs
seconds on a 2-core machine)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
from distributed import Client, Security
from helpers import wait_until, wait_until_sync

from jupyter_gpu_env.backends.dask import DaskSettings
from jupyter_gpu_env.backends.slurm.dask import script
from jupyter_gpu_env.dask.service import DaskService
from jupyter_gpu_env.models.automation.dask import DaskCluster, DaskClusterRequest

from .conftest import Cluster, launcher, run

N = 10**7
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::ResourceWarning")


def squeue(conf: str, *names: str) -> list[str]:
    """This cluster's jobs SLURM still lists (any state but ended), one line per array task."""
    out = subprocess.run(
        ["squeue", "-h", "--array", f"--name={','.join(names)}", "-o", "%i %T %j"],
        env={**os.environ, "SLURM_CONF": conf},
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    return out.stdout.split("\n")[:-1]


def names(c: Cluster) -> tuple[str, str]:
    return script.scheduler_job_name(c.spec.id), script.workers_job_name(c.spec.id)


def running(c: Cluster, n: int, within: float = 90) -> None:
    def check() -> bool:
        s = c.state()
        return s is not None and s.running == n and s.pending_count == 0

    wait_until_sync(check, within=within, every=0.5, what=lambda: f"{n} workers running: {c.state()!r}")


@pytest.fixture(scope="module")
def cluster(slurm_conf: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    c = Cluster(launcher(slurm_conf), tmp_path_factory.mktemp("dask") / "two", workers=2, walltime=600)
    yield c
    run(c.launcher.stop(c.ref))


@pytest.fixture(scope="module")
def client(cluster: Cluster) -> Iterator[Client]:
    with cluster.client() as c:
        yield c


def test_two_array_tasks_compute_a_sum_through_the_client(cluster, client, slurm_conf):
    client.wait_for_workers(2, timeout=90)
    chunks = [(i, min(i + N // 20, N)) for i in range(0, N, N // 20)]
    parts = client.map(lambda r: sum(range(*r)), chunks)
    assert client.submit(sum, parts).result(timeout=60) == N * (N - 1) // 2

    # The workers are the tasks of one job array, named after their task; the scheduler is a job of its own.
    workers = sorted(str(w["name"]) for w in client.scheduler_info()["workers"].values())
    array = workers[0].removeprefix("slurm-").split("_")[0]
    assert workers == [f"slurm-{array}_0", f"slurm-{array}_1"]
    listed = squeue(slurm_conf, *names(cluster))
    assert sorted(listed) == sorted(
        [f"{cluster.handle} RUNNING {names(cluster)[0]}"]
        + [f"{w.removeprefix('slurm-')} RUNNING {names(cluster)[1]}" for w in workers]
    )
    text = (cluster.folder / script.WORKER_SCRIPT).read_text()
    assert "#SBATCH --cpus-per-task=1" in text and "#SBATCH --mem=1G" in text and "#SBATCH --time=10" in text

    seen = run(cluster.launcher.observe([cluster.ref]))[cluster.spec.id]
    assert seen.state == "running" and seen.host == "localhost" and not seen.workers
    running(cluster, 2)
    assert cluster.state().address == client.scheduler.address


def test_another_user_is_refused_at_the_scheduler_and_its_dashboard(cluster, client):
    """Another user of the scheduler's node reaches its ports (here loopback, ``c.DaskClusters.interface
    = "lo"``; on a real cluster, the node's interfaces): each refuses them without the cluster's
    certificate."""
    running(cluster, 2)
    cluster.assert_refused_to_others()


def test_scale_to_three_and_back_to_two(cluster, client, slurm_conf):
    running(cluster, 2)
    cluster.scale(1, 3)
    client.wait_for_workers(3, timeout=90)
    running(cluster, 3)
    assert len(squeue(slurm_conf, names(cluster)[1])) == 3
    before = {str(w["name"]) for w in client.scheduler_info()["workers"].values()}

    cluster.scale(2, 2)
    running(cluster, 2)
    wait_until_sync(
        lambda: len(squeue(slurm_conf, names(cluster)[1])) == 2, within=30, every=0.5, what="one task ended"
    )
    after = {str(w["name"]) for w in client.scheduler_info()["workers"].values()}
    assert len(after) == 2 and after < before  # one retired, none started in its place
    assert client.submit(lambda x: x + 1, 41).result(timeout=30) == 42
    assert cluster.state().requested == 2 and cluster.state().generation == 2


def test_a_worker_retiring_at_its_lifetime_is_replaced_and_the_computation_finishes(
    slurm_conf, tmp_path_factory
):
    """Walltime 1 minute: each worker retires 30-50 s after it started (--lifetime 40 s ± 10 s), the
    keeper submits its replacement, and a computation running across it ends with the right answer."""
    c = Cluster(launcher(slurm_conf), tmp_path_factory.mktemp("dask") / "short", workers=2, walltime=60)
    try:
        assert c.spec.lifetime.lifetime == 40 and c.spec.lifetime.stagger == 10
        with c.client() as client:
            client.wait_for_workers(2, timeout=90)
            first = {str(w["name"]) for w in client.scheduler_info()["workers"].values()}

            def slow(i: int) -> int:
                time.sleep(0.5)
                return i * i

            # 480 half-second tasks: at least 70 s on two to four one-thread workers (replacements join
            # about 20 s in), past the first workers' latest retirement (50 s), gathered at the end: a
            # worker that retires hands its results to one that stays
            futures = client.map(slow, range(480))
            assert sum(client.gather(futures)) == sum(i * i for i in range(480))

            state = c.state()
            left = [name for name, _, end in state.spans if end is not None]
            assert set(left) & first, f"no first worker retired during the computation: {state.spans}"
            assert state.started_total >= 3 and state.requested == 2
            # with a 1-minute walltime workers come and go all the time, each replacement joining before
            # the worker it replaces leaves: never fewer than the two asked for once they have joined
            wait_until_sync(
                lambda: (s := c.state()) is not None and s.running >= 2,
                within=60,
                every=0.5,
                what=lambda: f"at least 2 workers running: {c.state()!r}",
            )
            now = {str(w["name"]) for w in client.scheduler_info()["workers"].values()}
            assert now - first  # a replacement joined
    finally:
        run(c.launcher.stop(c.ref))
    assert squeue(slurm_conf, *names(c)) == []


def stopped_leaving_nothing(cluster: Cluster, slurm_conf: str) -> None:
    """The cluster stopped by the launcher, as DELETE does: squeue lists none of its jobs after."""
    assert squeue(slurm_conf, *names(cluster))
    started = time.monotonic()
    run(cluster.launcher.stop(cluster.ref))
    assert squeue(slurm_conf, *names(cluster)) == []
    assert time.monotonic() - started < 30  # the keeper retired its workers: no grace spent waiting


def test_shutdown_leaves_nothing_in_squeue(cluster, client, slurm_conf):
    """Last: the shared cluster stopped by the launcher, as DELETE does."""
    stopped_leaving_nothing(cluster, slurm_conf)
    state = cluster.state()
    assert state.state == "stopped" and state.ended == "stopped" and state.running == 0
    seen = run(cluster.launcher.observe([cluster.ref]))[cluster.spec.id]
    assert seen.state in ("ended", "gone")


def _service(slurm, jobs) -> DaskService:
    """A server's DaskService over the SLURM backend's jobs (a second one is a restarted server)."""
    return DaskService(
        jobs,
        slurm.root / "dask",
        DaskSettings(connect_timeout_seconds=60, interface="lo"),
        environments=lambda name: sys.prefix if name == "venv" else None,
        kernel_python=lambda name: None,
        images=lambda name: None,
    )


async def test_through_the_service_a_cluster_on_slurm_computes_and_stops(slurm, slurm_conf):
    """DaskService with the SLURM backend, as POST/GET/DELETE dask/clusters drive it: the default shape
    (one allocation), found again by a restarted server, stopped with nothing left."""
    jobs = slurm.service()
    svc = _service(slurm, jobs)
    try:
        made = await svc.create(
            DaskClusterRequest(
                environment="venv",
                backend="slurm",
                workers=1,
                name="svc",
                resources={"cpus": 1, "memory": "1G"},
            )
        )

        async def up() -> DaskCluster | None:
            c = await svc.get(made.id)
            return c if c.state == "running" and c.workers.running == 1 else None

        cluster = await wait_until(up, within=90, every=0.5, what="one worker on SLURM")
        # one worker of one CPU fits the node: scheduler and worker are one job, as the row says
        assert cluster.layout == "one_allocation" and cluster.workers.in_allocation == 1
        assert squeue(slurm_conf, script.workers_job_name(made.id)) == []
        assert cluster.scheduler_address and cluster.scheduler_address.startswith("tls://")
        assert cluster.tls is not None
        security = Security(
            tls_ca_file=cluster.tls.ca_file,
            tls_client_cert=cluster.tls.cert_file,
            tls_client_key=cluster.tls.key_file,
            require_encryption=True,
        )
        async with Client(cluster.scheduler_address, security=security, asynchronous=True) as client:
            assert await client.submit(sum, range(1000)) == 499500
        # a restarted server (a new service over the same records and folders) finds it running
        again = _service(slurm, jobs)
        found = await again.get(made.id)
        await again.close()
        assert found.state == "running" and found.workers.running == 1 and found.layout == "one_allocation"
        assert found.scheduler_address == cluster.scheduler_address
        await svc.stop(made.id)
        stopped = await svc.wait_stopped(made.id)
        assert stopped.state == "stopped", stopped.model_dump()
        assert squeue(slurm_conf, script.scheduler_job_name(made.id), script.workers_job_name(made.id)) == []
    finally:
        await svc.close()
        await jobs.stop()
