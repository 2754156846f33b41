"""The pure parts of Dask on SLURM, without SLURM: the two batch scripts, squeue's lines as the keeper
and the launcher read them."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_gpu_env.backends.dask import ClusterRef, Placement
from jupyter_gpu_env.backends.slurm.dask import script
from jupyter_gpu_env.backends.slurm.dask.launcher import parse_rows, seen_from
from jupyter_gpu_env.backends.slurm.dask.pool import parse_listed, task_names
from jupyter_gpu_env.backends.slurm.parse import Standing
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
