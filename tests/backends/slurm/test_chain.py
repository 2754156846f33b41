"""The SLURM chain's pure parts: the waiting job's script, its begin time, the options' round trip."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_gpu_env.backends.slurm import chain, script


def _options(**kw) -> script.SbatchOptions:
    return script.SbatchOptions(python="/opt/env/bin/python", partition="gpu", account="proj", **kw)


def test_the_waiting_job_is_small_named_for_its_schedule_and_runs_the_tick():
    text = chain.tick_script(
        Path("/shared/jobs/schedules/daily-0123456789ab"),
        "0123456789ab",
        4,
        1795000000.0,
        _options(prologue=("module load python",)),
    )
    lines = text.splitlines()
    assert "#SBATCH --job-name=gpuenv-schedule-0123456789ab" in lines
    assert {"#SBATCH --cpus-per-task=1", "#SBATCH --mem=256M", "#SBATCH --time=5"} <= set(lines)
    assert "#SBATCH --partition=gpu" in lines and "#SBATCH --account=proj" in lines
    assert lines.index("module load python") < len(lines) - 1
    assert lines[-1] == (
        "exec /opt/env/bin/python -m jupyter_gpu_env.backends.slurm.tick --due 1795000000.0 --generation 4 "
        "/shared/jobs/schedules/daily-0123456789ab"
    )


@pytest.mark.parametrize(
    ("folder", "partition"),
    [("/shared/jobs/x y", "gpu"), ("/shared/$(reboot)", "gpu"), ("/shared/jobs/ok", "gpu\n#SBATCH --uid=0")],
)
def test_what_could_become_a_directive_or_a_command_is_refused(folder, partition):
    with pytest.raises(ValueError):
        chain.tick_script(
            Path(folder),
            "0123456789ab",
            0,
            1795000000.0,
            script.SbatchOptions(python="/p", partition=partition),
        )


def test_the_begin_time_is_relative_and_never_in_the_past():
    assert chain.begin_option(1000.4, 990.0) == "--begin=now+11"
    assert chain.begin_option(900.0, 990.0) == "--begin=now+0"


def test_options_survive_schedule_json():
    image = script.ImagePlan(tool="apptainer", image="/img/a.sif", mount="/opt/env", container="/c.sif")
    options = _options(extra=("--qos=low",), environment={"A": "1"}, prologue=("ml cuda",), image=image)
    assert chain.options_from_json(chain.options_to_json(options)) == options
    assert chain.options_from_json({"python": "/p", "unknown": 1}) == script.SbatchOptions(python="/p")
