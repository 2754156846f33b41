"""A Dask cluster as one allocation on the real single-node SLURM (scripts/slurm-local.sh): the scheduler
in the batch step and its workers as one srun step, one job in squeue; workers beyond it as jobs of their
own; an allocation's worker that leaves replaced by a job; nothing left after shutdown."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from distributed import Client
from helpers import wait_until_sync

from jupyter_gpu_env.backends.slurm.dask import script

from .conftest import Cluster, launcher, run
from .test_cluster import names, running, squeue, stopped_leaving_nothing

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::ResourceWarning")


@pytest.fixture(scope="module")
def cluster(slurm_conf: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    c = Cluster(
        launcher(slurm_conf),
        tmp_path_factory.mktemp("dask") / "one",
        workers=2,
        walltime=600,
        one_allocation=True,
    )
    yield c
    run(c.launcher.stop(c.ref))


@pytest.fixture(scope="module")
def client(cluster: Cluster) -> Iterator[Client]:
    with cluster.client() as c:
        yield c


def workers(client: Client) -> list[str]:
    return sorted(str(w["name"]) for w in client.scheduler_info()["workers"].values())


def test_one_job_holds_the_scheduler_and_its_workers(cluster, client, slurm_conf):
    assert cluster.spec.together == 2  # two 1-CPU, 1-GiB workers fit the node: the launcher chose it
    client.wait_for_workers(2, timeout=90)
    assert client.submit(sum, range(1000)).result(timeout=30) == 499500
    # the workers are the tasks of the scheduler's own job: squeue lists that job alone
    assert workers(client) == [f"slurm-{cluster.handle}-0", f"slurm-{cluster.handle}-1"]
    assert squeue(slurm_conf, *names(cluster)) == [f"{cluster.handle} RUNNING {names(cluster)[0]}"]
    text = (cluster.folder / script.SCHEDULER_SCRIPT).read_text()
    assert "#SBATCH --ntasks=2" in text and "#SBATCH --time=10" in text and "--no-nanny" in text
    running(cluster, 2)
    state = cluster.state()
    assert state.in_allocation == 2 and state.started_total == 2 and state.address == client.scheduler.address
    seen = run(cluster.launcher.observe([cluster.ref]))[cluster.spec.id]
    assert seen.state == "running" and not seen.workers


def test_another_user_is_refused_at_the_scheduler_and_its_dashboard(cluster, client):
    """The allocation's scheduler keeps the cluster's mutual TLS on both its ports."""
    running(cluster, 2)
    cluster.assert_refused_to_others()


def test_scaling_beyond_the_allocation_adds_a_worker_job_and_back(cluster, client, slurm_conf):
    running(cluster, 2)
    cluster.scale(1, 3)
    client.wait_for_workers(3, timeout=90)
    running(cluster, 3)
    extra = squeue(slurm_conf, names(cluster)[1])
    assert len(extra) == 1 and extra[0].endswith(f"RUNNING {names(cluster)[1]}")  # one array task
    assert cluster.state().in_allocation == 2

    cluster.scale(2, 2)
    running(cluster, 2)
    assert len(workers(client)) == 2
    assert client.submit(lambda x: x + 1, 41).result(timeout=30) == 42


def test_an_allocation_worker_that_leaves_is_replaced_by_a_job(cluster, client, slurm_conf):
    running(cluster, 2)
    mine = [w for w in workers(client) if w.startswith(f"slurm-{cluster.handle}-")]
    before = cluster.state().in_allocation
    assert mine and before == len(mine)
    client.retire_workers(names=[mine[0]], close_workers=True)

    def replaced() -> bool:
        s = cluster.state()
        return s is not None and s.running == 2 and s.pending_count == 0 and s.in_allocation == before - 1

    wait_until_sync(replaced, within=90, every=0.5, what=lambda: f"a replacement: {cluster.state()!r}")
    now = workers(client)
    assert mine[0] not in now and any("_" in w for w in now)  # the replacement is an array task
    assert client.submit(sum, [1, 2]).result(timeout=30) == 3


def test_gpu_workers_of_one_allocation_each_get_a_gpu_of_their_own(slurm_conf, tmp_path_factory):
    """--gpus-per-task on this SLURM's two declared GPUs (no devices behind them): SLURM gives each task
    of the workers' step its own, in CUDA_VISIBLE_DEVICES; the scheduler, in the batch step, none."""
    c = Cluster(
        launcher(slurm_conf), tmp_path_factory.mktemp("dask") / "gpus", workers=2, walltime=600,
        one_allocation=True, gpus=1,
    )  # fmt: skip
    try:
        assert c.spec.together == 2
        assert "#SBATCH --gpus-per-task=1" in (c.folder / script.SCHEDULER_SCRIPT).read_text()
        with c.client() as client:
            client.wait_for_workers(2, timeout=90)
            seen = client.run(lambda: __import__("os").environ.get("CUDA_VISIBLE_DEVICES"))
            assert sorted(seen.values()) == ["0", "1"], seen
            on_scheduler = client.run_on_scheduler(
                lambda: __import__("os").environ.get("CUDA_VISIBLE_DEVICES")
            )
            assert on_scheduler == ""
    finally:
        run(c.launcher.stop(c.ref))
    assert squeue(slurm_conf, *names(c)) == []


def test_shutdown_of_the_allocation_leaves_nothing_in_squeue(cluster, client, slurm_conf):
    """Last: the shared cluster stopped by the launcher, as DELETE does."""
    stopped_leaving_nothing(cluster, slurm_conf)
    state = cluster.state()
    assert state.state == "stopped" and state.ended == "stopped" and state.running == 0
