"""A sweep on the real single-node SLURM: one `sbatch --array` for all its runs, each task running its
own parameters, polled with one squeue per round; and the array script built alone."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import run_record, wait_until, write_notebook

from jupyter_gpu_env.backends.slurm import script
from jupyter_gpu_env.models.jobs import Job
from jupyter_gpu_env.models.resources import JobResources


def test_array_spec_compresses_indexes_and_limits_them():
    assert script.array_spec([0, 1, 2, 3], 4) == "0-3"
    assert script.array_spec([0, 1, 2, 3], 2) == "0-3%2"
    assert script.array_spec([7, 1, 2, 5, 3], 10) == "1-3,5,7"
    with pytest.raises(ValueError):
        script.array_spec([], 1)


def _run(i: int) -> Job:
    return run_record(i, backend="slurm", resources=JobResources(cpus=2, gpus=0))


def test_the_array_script_finds_each_tasks_run_and_logs_there(tmp_path):
    options = script.SbatchOptions(python="/usr/bin/python3", partition="debug")
    text = script.sbatch_array_script(
        _run(0), Path("/srv/jobs/s"), Path("/srv/jobs/s/runs-x.txt"), [0, 1, 2], 2, options
    )
    assert "#SBATCH --array=0-2%2" in text and "#SBATCH --job-name=train-abcdef012345" in text
    assert "#SBATCH --output=/srv/jobs/s/slurm-%A_%a.out" in text and "#SBATCH --cpus-per-task=2" in text
    assert 'exec >>"$run/log.txt" 2>&1' in text
    assert text.rstrip().endswith('exec /usr/bin/python3 -m jupyter_gpu_env.runner "$run"')
    table = script.runs_file(
        [(0, "00000000000a", Path("/srv/jobs/s/0000-a")), (2, "00000000000b", Path("/srv/jobs/s/0002-b"))]
    )
    assert table == "0 00000000000a /srv/jobs/s/0000-a\n2 00000000000b /srv/jobs/s/0002-b\n"
    with pytest.raises(ValueError, match="cannot go into a batch script"):
        script.runs_file([(0, "00000000000a", Path("/srv/with space"))])


def _notebook(root: Path) -> str:
    task = "import os\n{'cube': alpha ** 3, 'task': os.environ.get('SLURM_ARRAY_TASK_ID')}"
    return write_notebook(root, "cube.ipynb", [], parameters="alpha = 1", results=task)


async def test_a_sweep_is_one_job_array(slurm):
    svc = slurm.service()
    try:
        group = await svc.submit(
            {
                "notebook_path": _notebook(slurm.root),
                "backend": "slurm",
                "sweep": {"alpha": [1, 2, 3]},
                "max_concurrent": 2,
            }
        )
        sbatches = [c for c in slurm.commands if c[0].endswith("sbatch")]
        assert len(sbatches) == 1  # three runs, one submission
        assert group.backend_job_id and re.fullmatch(r"\d+", group.backend_job_id)
        runs = (await svc.list(sweep=group.id)).items
        assert [r.backend_job_id for r in runs] == [f"{group.backend_job_id}_{i}" for i in range(3)]

        slurm.commands.clear()
        await svc.refresh()
        squeues = [c for c in slurm.commands if c[0].endswith("squeue")]
        # every task of the array in one call; one more for where the pending ones stand
        assert len(squeues) == 2 and "--states=all" in squeues[0] and "--states=PENDING" in squeues[1]

        async def ended():
            await svc.refresh()
            g = await svc.sweeps.get(group.id)
            return g if g.state not in ("queued", "running") else None

        group = await wait_until(ended, within=180, every=0.5, what="the sweep ending on SLURM")
        assert group.state == "succeeded", [
            (r.state, r.message) for r in (await svc.list(sweep=group.id)).items
        ]
        table = await svc.sweeps.results(group.id)
        assert [(r.parameters["alpha"], r.values) for r in table.rows] == [
            (a, {"cube": a**3, "task": str(a - 1)}) for a in (1, 2, 3)
        ]  # each task ran its own run's parameters
    finally:
        await svc.stop()
