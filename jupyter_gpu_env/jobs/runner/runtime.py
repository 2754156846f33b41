"""What every job's process does on the node, whatever it runs: its job.json read and checked; the
kernel it names, or the environment's or packed image's kernelspec written into the job's folder; the
heartbeat; the GPU sampler. Shared by the runner (a notebook) and the kernel host (a batch kernel), so
both run the same thing for the same job.json and the server sees both alike."""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from pathlib import Path
from typing import Any

from ...contracts import jobfiles
from ...gpu.jobuse import GpuUseSampler, default_readers, gpu_units_of, sample_interval
from ...kernelspecs import JOB_KERNEL, write_job_kernelspec

log = logging.getLogger(__name__)

IMAGE_PREFIX_ENV = "JUPYTER_GPU_ENV_IMAGE_PREFIX"
HEARTBEAT_INTERVAL = 5.0


class RunnerError(Exception):
    """Why a job cannot run here, in words, with its reason code (status.json's ``reason``)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


def load_job(folder: Path) -> dict[str, Any]:
    """The folder's job.json, of the format this node's jupyter-gpu-env reads."""
    job = jobfiles.read_json(folder / jobfiles.JOB_JSON)
    if job is None:
        raise RunnerError("runner_error", f"{folder / jobfiles.JOB_JSON} is missing or not valid JSON.")
    if job.get("format") != jobfiles.JOB_FORMAT:
        raise RunnerError(
            "runner_error",
            f"job.json has format {job.get('format')!r}; this runner reads format {jobfiles.JOB_FORMAT}. "
            "The node's jupyter-gpu-env differs from the server's.",
        )
    return job


def kernel_for(folder: Path, job: dict[str, Any]) -> str:
    """The kernel the job runs in: the one it names, or its environment's or opened image's, whose
    kernelspec is written into ``folder`` (added to JUPYTER_PATH for this process and its children)."""
    kernel_name = str(job.get("kernel") or "")
    env = job.get("environment")
    if job.get("image"):
        # The backend's script mounted the image (squashfuse, or apptainer's bind) and says where.
        prefix = os.environ.get(IMAGE_PREFIX_ENV)
        if not prefix:
            raise RunnerError(
                "images_unsupported",
                "The job asks for a packed image, but the backend that started it did not open the image.",
            )
        if not os.path.exists(os.path.join(prefix, "bin", "python")):
            raise RunnerError("runner_error", f"The image opened at {prefix} has no bin/python.")
        env = {"name": job["image"].get("name") or "image", "prefix": prefix}
    if env:
        write_job_kernelspec(folder, env["prefix"], env_name=env.get("name") or JOB_KERNEL)
        os.environ["JUPYTER_PATH"] = os.pathsep.join(
            p for p in (str(folder), os.environ.get("JUPYTER_PATH", "")) if p
        )
        kernel_name = JOB_KERNEL
    return kernel_name


def beat(folder: Path, stop: threading.Event) -> None:
    """Keep the job's ``heartbeat`` fresh (its node and pid, then its time) until ``stop`` is set: a
    thread's target. The server reads a stale heartbeat as a job whose node was lost."""
    path = folder / jobfiles.HEARTBEAT
    try:
        path.write_text(f"{socket.gethostname()} {os.getpid()}\n")
    except OSError:
        return
    while not stop.wait(HEARTBEAT_INTERVAL):
        try:
            os.utime(path)
        except OSError:
            return


def start_gpu_sampler(folder: Path, job: dict[str, Any]) -> GpuUseSampler | None:
    """GPU use beside the job's code (see :mod:`jupyter_gpu_env.gpu.jobuse`), started; None when
    ``gpu_sample_interval`` is 0 or sampling cannot start (never a reason for the job not to run)."""
    if job.get("gpu_sample_interval") == 0:
        return None
    try:
        read, read_energy = default_readers()
        sampler = GpuUseSampler(
            folder,
            read,
            interval=sample_interval(job),
            gpu_units=gpu_units_of(job.get("resources") or {}),
            energy=read_energy,
        )
        sampler.start()
    except Exception as e:
        log.warning("GPU use will not be sampled: %s", e)
        return None
    return sampler


def write_status(
    folder: Path,
    outcome: tuple[str, str | None, str],
    code: int,
    started_at: float,
    gpu: dict[str, Any] | None,
    extra: dict[str, Any] | None = None,
) -> None:
    """Write the job's ``status.json``, its last word (logged first: once the status exists, readers
    take the log as complete). A folder deleted under the job (the job deleted) records nothing."""
    state, reason, message = outcome
    log.info("job %s%s: %s", state, f" ({reason})" if reason else "", message)
    status = {
        "state": state,
        "reason": reason,
        "message": message,
        "exit_code": code,
        "started_at": started_at,
        "finished_at": time.time(),
        **({"gpu": gpu} if gpu is not None else {}),
        **(extra or {}),
    }
    try:
        jobfiles.write_json_atomic(folder / jobfiles.STATUS, status, durable=True)
    except OSError as e:
        log.error("could not write the status: %s", e)
