"""The runner's side of resuming: a real runner and python3 kernel, stopped as a scheduler stops an
opportunistic job (SIGTERM, or SLURM's SIGUSR1), then started again in the same folder."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import nbformat
from helpers import printed, wait_until_sync, write_notebook

from jupyter_gpu_env.contracts import jobfiles
from jupyter_gpu_env.jobs.runner.attempts import Attempt, record_attempt
from jupyter_gpu_env.jobs.runner.runner import EXIT_CODES, EXIT_PREEMPTED

CELLS = [
    "import os, pathlib\n"
    "print('resumed:', resumed, os.environ['GPU_ENV_RESUMED'], 'attempt', os.environ['GPU_ENV_ATTEMPT'])\n"
    "state = pathlib.Path(checkpoint_dir) / 'state.txt'\n"
    "step = int(state.read_text()) if state.exists() else 0\n"
    "print('from step', step)",
    "import time\n"
    "state.write_text(str(step + 1))\n"
    "pathlib.Path(os.environ['GPU_ENV_CHECKPOINT_DIR'], 'started').touch()\n"
    "while not pathlib.Path('go').exists():\n"
    "    time.sleep(0.05)",
    "print('finished at step', int(state.read_text()))",
]


def _folder(tmp_path: Path, priority: str) -> Path:
    folder = tmp_path / "job"
    folder.mkdir()
    write_notebook(folder, jobfiles.INPUT, CELLS, parameters="checkpoint_dir = None\nresumed = False")
    spec = {
        "format": jobfiles.JOB_FORMAT,
        "id": "abc",
        "name": "train",
        "kernel": "python3",
        "parameters": {},
        "cwd": str(folder),
        "priority": priority,
        "resume_parameters": ["checkpoint_dir", "resumed"],
        "gpu_sample_interval": 0,
    }
    (folder / jobfiles.JOB_JSON).write_text(json.dumps(spec))
    return folder


def _start(folder: Path) -> subprocess.Popen[bytes]:
    (folder / jobfiles.CHECKPOINT / "started").unlink(missing_ok=True)
    return subprocess.Popen([sys.executable, "-m", "jupyter_gpu_env.runner", str(folder)], cwd=folder)


def _stop_when_started(folder: Path, runner: subprocess.Popen[bytes], signum: int) -> int:
    wait_until_sync(lambda: (folder / jobfiles.CHECKPOINT / "started").exists(), within=60, what="cell 2")
    runner.send_signal(signum)
    return runner.wait(timeout=30)


def test_a_preempted_opportunistic_job_records_its_attempt_and_resumes_from_its_checkpoint(tmp_path):
    folder = _folder(tmp_path, "opportunistic")
    assert _stop_when_started(folder, _start(folder), signal.SIGTERM) == EXIT_PREEMPTED
    assert not (folder / jobfiles.STATUS).exists()  # not an end: the job goes on
    (first,) = jobfiles.read_attempts(folder)
    assert (first.number, first.reason, first.cells_done) == (1, "preempted", 3)
    assert first.started_at and first.ended_at and first.ended_at >= first.started_at
    assert "resumed: False 0 attempt 1" in printed(folder / jobfiles.OUTPUT)

    # SLURM's signal ahead of a preemption stops the second attempt the same way
    assert _stop_when_started(folder, _start(folder), signal.SIGUSR1) == EXIT_PREEMPTED
    assert [a.number for a in jobfiles.read_attempts(folder)] == [1, 2]

    (folder / "go").touch()
    assert _start(folder).wait(timeout=60) == EXIT_CODES["succeeded"]
    assert jobfiles.read_status(folder)["state"] == "succeeded"
    out = printed(folder / jobfiles.OUTPUT)
    assert "resumed: True 1 attempt 3" in out and "from step 2" in out and "finished at step 3" in out
    # each stopped attempt's executed notebook is kept beside the final one
    kept = nbformat.read(folder / "output.attempt-1.ipynb", as_version=4)
    assert "resumed: False" in printed(folder / "output.attempt-1.ipynb") and kept.cells
    assert "attempt 2" in printed(folder / "output.attempt-2.ipynb")


def test_a_cancel_is_never_taken_for_a_preemption(tmp_path):
    folder = _folder(tmp_path, "opportunistic")
    runner = _start(folder)
    jobfiles.mark_cancel(folder)  # what the server leaves before it asks the backend to stop the job
    assert _stop_when_started(folder, runner, signal.SIGTERM) == EXIT_CODES["cancelled"]
    assert jobfiles.read_status(folder)["state"] == "cancelled"
    assert jobfiles.read_attempts(folder) == []


def test_a_normal_job_is_cancelled_by_sigterm_and_still_gets_its_checkpoint_folder(tmp_path):
    folder = _folder(tmp_path, "normal")
    assert _stop_when_started(folder, _start(folder), signal.SIGTERM) == EXIT_CODES["cancelled"]
    assert jobfiles.read_status(folder)["state"] == "cancelled"
    assert not (folder / jobfiles.ATTEMPTS).exists()
    assert "resumed: False 0 attempt 1" in printed(folder / jobfiles.OUTPUT)


def test_an_attempt_keeps_its_gpu_hours_and_energy(tmp_path):
    """What the stopped attempt's sampler measured goes with it into attempts.json, for the sum."""
    attempt = Attempt(tmp_path, 1, 1_000_000.0, True, tmp_path / "checkpoint")
    gpu = {"gpu_hours_allocated": 0.25, "energy_joules": 1234.5, "energy_source": "counter"}
    record_attempt(tmp_path, attempt, "preempted", "Preempted.", 3, gpu)
    [kept] = jobfiles.read_attempts(tmp_path)
    assert (kept.gpu_hours_allocated, kept.energy_joules, kept.energy_source) == (0.25, 1234.5, "counter")
    attempt.number = 2
    record_attempt(tmp_path, attempt, "preempted", "Again.", 3, {"energy_joules": "a lot"})
    assert [a.energy_joules for a in jobfiles.read_attempts(tmp_path)] == [1234.5, None]
