"""The job pod's entry point, run here with /bin/sh as a container runtime would run it: the real
runner on a real job folder, SIGTERM passed on for a graceful cancel, and clear failures when the
folder is not mounted or no fifo can be made. (A successful run, with the pod log equal to log.txt,
is in test_service.py.)"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
from helpers import notebook, wait_until

from jupyter_gpu_env.backends.kubernetes.entrypoint import ENTRYPOINT
from jupyter_gpu_env.contracts import jobfiles
from jupyter_gpu_env.jobs.submission import build_folder


def job_folder(tmp_path: Path, cells: list[str]) -> Path:
    folder = tmp_path / "jobs" / "nb-entry-0123456789ab"
    spec = {
        "format": jobfiles.JOB_FORMAT,
        "id": "0123456789ab",
        "name": "entry",
        "notebook_path": "entry.ipynb",
        "parameters": {},
        "kernel": "python3",
        "environment": None,
        "image": None,
        "cwd": str(tmp_path),
        "time_limit_seconds": None,
        "resources": {},
    }
    build_folder(folder, nbformat.writes(notebook(cells)).encode(), spec)
    return folder


def argv(folder: Path | str) -> list[str]:
    return ["/bin/sh", "-c", ENTRYPOINT, "gpu-env-runner", str(folder), sys.executable]


def env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONUNBUFFERED": "1", **extra}


async def test_sigterm_to_the_shell_cancels_the_runner_gracefully(tmp_path):
    folder = job_folder(
        tmp_path, ["print('started', flush=True)", "import time; time.sleep(120)", "print('never')"]
    )
    proc = await asyncio.create_subprocess_exec(
        *argv(folder), env=env(), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )

    def cells_done() -> int:
        progress = jobfiles.read_progress(folder)
        return progress.cells_done if progress is not None else 0

    await wait_until(lambda: cells_done() >= 1, within=60, every=0.1, what="the sleeping cell running")
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)  # what the kubelet does to PID 1 when the Job is deleted
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    took = time.monotonic() - t0
    assert proc.returncode == 143, err.decode()
    assert took < 10, f"the cancel took {took:.1f} s"
    status = jobfiles.read_status(folder)
    assert (status["state"], status["reason"]) == ("cancelled", "cancelled")
    assert b"never" not in out and out == (folder / jobfiles.LOG).read_bytes()


def test_a_folder_not_mounted_fails_at_once_saying_why(tmp_path):
    done = subprocess.run(argv(tmp_path / "not-mounted"), capture_output=True, env=env(), timeout=30)
    assert done.returncode == 2
    assert b"is not mounted in this pod" in done.stderr and b"c.KubernetesBackend.volumes" in done.stderr


def test_without_a_fifo_the_log_still_reaches_the_folder(tmp_path):
    folder = job_folder(tmp_path, ["print('before')", "1 / 0"])
    done = subprocess.run(
        argv(folder), capture_output=True, env=env(TMPDIR=str(tmp_path / "missing")), timeout=120
    )
    assert done.returncode == 1
    assert b"no fifo" in done.stderr
    assert jobfiles.read_status(folder)["reason"] == "cell_error"
    log = (folder / jobfiles.LOG).read_text()
    assert "before" in log and "ZeroDivisionError" in log
