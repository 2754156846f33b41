"""The pure parts of Dask on SLURM, without SLURM: the batch scripts (scheduler, workers, one allocation),
the choice of shape from sinfo's partitions, squeue's lines as the keeper and the launcher read them."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_gpu_env.backends.dask import ClusterRef, DaskSettings, Placement
from jupyter_gpu_env.backends.slurm.dask import script
from jupyter_gpu_env.backends.slurm.dask.launcher import SlurmLauncher, parse_rows, seen_from
from jupyter_gpu_env.backends.slurm.dask.pool import parse_listed, task_names
from jupyter_gpu_env.backends.slurm.parse import Partition, Standing
from jupyter_gpu_env.backends.slurm.script import SbatchOptions
from jupyter_gpu_env.contracts.dask.keeper.files import Listed
from jupyter_gpu_env.contracts.dask.spec import Network

from .conftest import make_spec

FOLDER = Path("/srv/dask/c1")
PY = "/envs/ml/bin/python"


def placement(**kw):
    return Placement(
        **{"queue": None, "cpus": 4, "memory_bytes": 6 << 30, "gpus": None, "mig_profile": None, **kw}
    )


def test_the_workers_script_is_one_task_per_worker_named_after_it():
    spec = make_spec(FOLDER, Network.on(None), workers=2, walltime=3600)
    opts = SbatchOptions(python=PY, partition="gpu", account="astro", extra=["--qos=short"])
    text = script.worker_script(spec, placement(gpus=2), opts)
    lines = text.splitlines()
    assert lines[0] == "#!/bin/bash"
    directives = [ln.removeprefix("#SBATCH ") for ln in lines if ln.startswith("#SBATCH ")]
    assert directives == [
        f"--job-name=gpuenv-dask-{spec.id}-w",
        f"--output={FOLDER}/workers/%A_%a.log",
        f"--error={FOLDER}/workers/%A_%a.log",
        f"--chdir={FOLDER}",
        "--nodes=1",
        "--ntasks=1",
        "--cpus-per-task=4",
        "--mem=6G",
        "--gres=gpu:2",
        "--time=60",
        "--partition=gpu",
        "--account=astro",
        "--export=ALL",
        "--qos=short",
    ]
    assert "export OMP_NUM_THREADS=1" in lines and "CUDA_VISIBLE_DEVICES" not in text
    # no connection without TLS, no page on a worker's own HTTP server
    assert "export DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION=True" in lines
    assert "export DASK_DISTRIBUTED__WORKER__HTTP__ROUTES='[]'" in lines
    last = lines[-1]
    assert last.startswith(
        f"exec {PY} -m distributed.cli.dask_worker --scheduler-file {FOLDER}/scheduler.json"
    )
    assert "--lifetime 3300s --lifetime-stagger 150s" in last
    assert (
        f"--protocol tls --tls-ca-file {FOLDER}/tls/ca.pem --tls-cert {FOLDER}/tls/cluster.pem "
        f"--tls-key {FOLDER}/tls/cluster.key --no-dashboard"
    ) in last
    assert last.endswith('--name "slurm-${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}"')


def test_gpus_as_the_backend_asks_them_and_none_hidden():
    spec = make_spec(FOLDER, Network.on(None), workers=1, walltime=600)
    mig = script.worker_script(
        spec, placement(mig_profile="1g.10gb"), SbatchOptions(python=PY, gpu_type="a100")
    )
    assert "#SBATCH --gres=gpu:1g.10gb:1" in mig
    typed = script.worker_script(spec, placement(gpus=1), SbatchOptions(python=PY, gpu_type="a100"))
    assert "#SBATCH --gres=gpu:a100:1" in typed
    none = script.worker_script(spec, placement(), SbatchOptions(python=PY))
    assert "--gres" not in none and "export CUDA_VISIBLE_DEVICES=''" in none
    # the worker's own memory limit is never above what SLURM enforces
    assert "#SBATCH --mem=1G" in script.worker_script(
        spec, placement(memory_bytes=None), SbatchOptions(python=PY)
    )


def test_the_scheduler_is_a_small_job_that_execs_the_scheduler_with_the_keeper():
    spec = make_spec(FOLDER, Network.on(None), workers=2, walltime=600, idle=1800)
    text = script.scheduler_script(
        spec, SbatchOptions(python=PY, partition="debug"), 7 * 86400, Network.on("ib0")
    )
    lines = text.splitlines()
    for d in (
        f"--job-name=gpuenv-dask-{spec.id}",
        f"--output={FOLDER}/scheduler.log",
        "--cpus-per-task=1",
        "--mem=2G",
        "--time=10080",
        "--partition=debug",
    ):
        assert f"#SBATCH {d}" in lines
    assert f"export PYTHONPATH={FOLDER}" in lines and f"export GPU_ENV_DASK_FOLDER={FOLDER}" in lines
    assert "export DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION=True" in lines
    # the keeper's entry point: the cluster's TLS on every port, the keeper preloaded
    assert lines[-1] == (
        f"exec {PY} -m gpuenv_dask.scheduler --scheduler-file {FOLDER}/scheduler.json --port 0 "
        "--dashboard-address :0 --idle-timeout 1800s --interface ib0"
    )
    single = script.scheduler_script(spec, SbatchOptions(python=PY), 600, Network.on("lo"))
    assert single.splitlines()[-1].endswith(
        "--dashboard-address 127.0.0.1:0 --idle-timeout 1800s --host 127.0.0.1"
    )


def test_one_allocation_runs_the_scheduler_in_the_batch_step_and_the_workers_as_one_srun_step():
    spec = make_spec(FOLDER, Network.on(None), workers=3, walltime=3600, idle=1800)
    spec.together = 3
    opts = SbatchOptions(python=PY, partition="gpu", account="astro", gpu_type="a100")
    text = script.allocation_script(
        spec, placement(gpus=1), opts, Network.on("ib0"), srun="/opt/slurm/bin/srun"
    )
    lines = text.splitlines()
    directives = [ln.removeprefix("#SBATCH ") for ln in lines if ln.startswith("#SBATCH ")]
    assert directives == [
        f"--job-name=gpuenv-dask-{spec.id}",  # the scheduler's name: squeue and stop find it as before
        f"--output={FOLDER}/scheduler.log",
        f"--error={FOLDER}/scheduler.log",
        "--open-mode=append",
        f"--chdir={FOLDER}",
        "--nodes=1",
        "--ntasks=3",
        "--cpus-per-task=4",
        "--mem=20G",  # three workers' 6 GiB and the scheduler's 2
        "--gpus-per-task=a100:1",
        "--time=60",  # the cluster's walltime: everything ends with the allocation
        "--partition=gpu",
        "--account=astro",
        "--export=ALL",
    ]
    scheduler = next(ln for ln in lines if "gpuenv_dask.scheduler" in ln)
    assert scheduler.startswith(
        f"PYTHONPATH={FOLDER} GPU_ENV_DASK_FOLDER={FOLDER} CUDA_VISIBLE_DEVICES='' {PY} -m"
    )
    assert scheduler.endswith("--idle-timeout 1800s --interface ib0 &")
    assert "export CUDA_VISIBLE_DEVICES=''" not in lines  # the workers' step gets its GPUs
    step = next(ln for ln in lines if "dask_worker" in ln)
    assert step.startswith(
        "/opt/slurm/bin/srun --ntasks=3 --cpus-per-task=4 --gpus-per-task=a100:1 --wait=0 --kill-on-bad-exit=0 "
        f"--output={FOLDER}/workers/%j-%t.log --error={FOLDER}/workers/%j-%t.log "
        """bash -c 'exec "$@" --name "slurm-${SLURM_JOB_ID}-${SLURM_PROCID}"' worker """
        f"{PY} -m distributed.cli.dask_worker --scheduler-file {FOLDER}/scheduler.json"
    )
    # one process per worker, and nothing retires early: the allocation's end is the cluster's
    assert "--no-nanny" in step and "--lifetime" not in step and "--tls-key" in step
    assert step.endswith(" &")
    # the shell outlives its scheduler only to end the workers' step
    assert lines[-5:] == [
        'wait "$scheduler"; status=$?',
        'while kill -0 "$scheduler" 2>/dev/null; do wait "$scheduler"; status=$?; done',
        'kill -TERM "$workers" 2>/dev/null  # srun passes it to each task still running',
        'wait "$workers"',
        'exit "$status"',
    ]
    cpu_only = script.allocation_script(
        spec, placement(memory_bytes=None), SbatchOptions(python=PY), Network()
    )
    assert "export CUDA_VISIBLE_DEVICES=''" in cpu_only and "--gpus-per-task" not in cpu_only
    assert "#SBATCH --mem=5G" in cpu_only  # the workers' own 1 GiB limits, and the scheduler's 2 GiB
    with pytest.raises(ValueError):
        script.allocation_script(
            spec, placement(), SbatchOptions(python=PY), Network(), srun="srun; rm -rf ~"
        )
    spec.together = 0
    with pytest.raises(ValueError):
        script.allocation_script(spec, placement(), SbatchOptions(python=PY), Network())


class _Controller:
    commands = {"sbatch": "sbatch"}

    def __init__(self, partitions: list[Partition]) -> None:
        self.partitions = partitions

    async def sinfo(self) -> list[Partition]:
        return self.partitions


class _Backend:
    """The launcher's view of its backend, with sinfo's answer given (the decision is pure on it)."""

    def __init__(self, partitions: list[Partition]) -> None:
        self.controller = _Controller(partitions)

    def site_options(self, python: str, partition: str | None) -> SbatchOptions:
        return SbatchOptions(python=python, partition=partition)


NODE = Partition(
    "debug", default=True, max_time_seconds=7200, max_cpus=16, max_memory_mb=64 << 10, max_gpus=4
)


@pytest.mark.parametrize(
    ("workers", "adapt", "placed", "settings", "expected"),
    [
        (3, None, {}, {}, 3),  # 12 CPUs, 18 + 2 GiB on a 16-CPU, 64 GiB node
        (4, None, {}, {}, 4),  # 16 CPUs: exactly the node
        (5, None, {}, {}, 0),  # 20 CPUs: more than a node, so jobs of their own
        (10, None, {"cpus": 1, "memory_bytes": 6 << 30}, {}, 10),  # 60 + 2 GiB of memory on 64 GiB
        (11, None, {"cpus": 1, "memory_bytes": 6 << 30}, {}, 0),  # 66 + 2 GiB: more memory than a node
        (2, None, {"gpus": 2}, {}, 2),
        (3, None, {"gpus": 2}, {}, 0),  # 6 GPUs on a 4-GPU node
        (2, None, {"mig_profile": "1g.10gb"}, {}, 0),  # a MIG slice each: jobs of their own
        (None, {"minimum": 1, "maximum": 4}, {}, {}, 0),  # adaptive
        (2, None, {}, {"one_allocation": False}, 0),  # the site said no
        (2, None, {"queue": "long"}, {}, 0),  # a queue sinfo does not list
    ],
)
async def test_a_fixed_cluster_that_fits_a_node_is_one_allocation(workers, adapt, placed, settings, expected):
    spec = make_spec(FOLDER, Network.on(None), workers=workers or 1, walltime=3600)
    spec.workers, spec.adapt = workers, adapt
    launch = SlurmLauncher(_Backend([NODE]), DaskSettings(**settings))  # type: ignore[arg-type]
    assert await launch.together(spec, placement(**placed)) == expected


async def test_a_walltime_beyond_the_queues_limit_or_a_dask_cuda_worker_keeps_separate_jobs():
    spec = make_spec(FOLDER, Network.on(None), workers=2, walltime=3 * 3600)
    launch = SlurmLauncher(_Backend([NODE]), DaskSettings())  # type: ignore[arg-type]
    assert await launch.together(spec, placement()) == 0
    spec = make_spec(FOLDER, Network.on(None), workers=2, walltime=3600)
    spec.worker.cuda = True
    assert await launch.together(spec, placement(gpus=1)) == 0


@pytest.mark.parametrize(
    ("field", "value"),
    [("partition", "gpu\n#SBATCH --x"), ("python", "/env/bin/python; rm -rf ~"), ("extra", ["--output=/x"])],
)
def test_nothing_unchecked_reaches_the_scripts(field, value):
    spec = make_spec(FOLDER, Network.on(None), workers=1, walltime=600)
    with pytest.raises(ValueError):
        script.worker_script(spec, placement(), SbatchOptions(**{"python": PY, field: value}))


def test_squeue_lines_as_the_keeper_reads_them():
    assert task_names("12_[0-2,5%4]") == ["slurm-12_0", "slurm-12_1", "slurm-12_2", "slurm-12_5"]
    assert task_names("12_7") == ["slurm-12_7"] and task_names("13") == []
    text = "12_[3-4]|PENDING|(null)|Resources\n12_1|RUNNING|node7|None\n12_2|COMPLETING|node7|None\n"
    assert parse_listed(text) == [
        Listed("slurm-12_3", "queued", reason="Resources"),
        Listed("slurm-12_4", "queued", reason="Resources"),
        Listed("slurm-12_1", "running", node="node7"),
    ]


def test_one_squeue_says_each_clusters_scheduler_and_waiting_workers():
    text = (
        "40|RUNNING|debug|node3|gpuenv-dask-aaa|None\n"
        "41_2|PENDING|gpu|(null)|gpuenv-dask-aaa-w|Priority\n"
        "50|PENDING|debug|(null)|gpuenv-dask-bbb|Resources\n"
        "60|TIMEOUT|debug|node1|gpuenv-dask-ccc|None\n"
    )
    refs = [ClusterRef(c, FOLDER, h) for c, h in (("aaa", "40"), ("bbb", "50"), ("ccc", "60"), ("ddd", "70"))]
    seen = seen_from(
        parse_rows(text), refs, {"41_2": Standing(3, "gpu", None), "50": Standing(1, "debug", None)}
    )
    assert seen["aaa"].state == "running" and seen["aaa"].host == "node3"
    assert [(w.name, w.place, w.reason) for w in seen["aaa"].workers] == [("slurm-41_2", 3, "Priority")]
    assert (
        seen["bbb"].state == "queued" and seen["bbb"].place == 1 and "Resources" in (seen["bbb"].reason or "")
    )
    assert seen["ccc"].state == "ended" and "time limit" in (seen["ccc"].reason or "")
    assert seen["ddd"].state == "gone"
