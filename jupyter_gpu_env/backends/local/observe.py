"""What the local backend sees of a job: its runner's process first, then the files it left."""

from __future__ import annotations

import time
from pathlib import Path

import psutil

from ...contracts import jobfiles
from ...models.jobs import Job
from ..base import Observation
from .processes import HOST, LAUNCH_TIMEOUT, find_runner, recorded_pid, runner_of, runner_started


def observe(job: Job, folder: Path) -> Observation:
    """The runner's process first, then its status: the process is what the server can check.

    The pid comes from the job's record (the server saw the launch) or from ``runner.pid`` (a launch
    not yet recorded, or a resumed attempt's runner); either way it counts only while that pid is the
    runner of this job's folder, so a pid file the job rewrote can neither keep it "running" nor aim a
    cancel at another process.
    """
    if not folder.is_dir():
        return Observation(
            state="failed", reason="lost", message=f"The job folder {folder} no longer exists."
        )
    damaged: str | None = None
    try:
        info = jobfiles.read_pid(folder)
    except jobfiles.Damaged as e:
        info, damaged = None, str(e)
    pids = [p for p in dict.fromkeys((recorded_pid(job), info.pid if info is not None else None)) if p]
    for pid in pids:
        started = runner_started(pid, folder)
        if started is not None:
            return Observation(state="running", backend_job_id=str(pid), started_at=started, host=HOST)
    if pids:
        status = jobfiles.read_status(folder)
        if status is not None:
            return Observation.from_status(status, str(pids[-1]))
        if was_preempted(job, folder, info):
            return Observation(state="queued", requeued="preempted")
        return Observation(
            state="failed",
            reason="lost",
            message="The runner process ended without a status (killed, out of memory, or the machine restarted).",
        )
    if info is None and damaged is None:
        return Observation(state="queued")
    if info is not None and info.launching_at is not None:  # a launch under way, or one that died
        since = time.time() - info.launching_at
        if 0 <= since < LAUNCH_TIMEOUT:
            return Observation(state="running", started_at=info.launching_at)
        return Observation(
            state="failed", reason="lost", message="The server stopped while starting the runner."
        )
    # Damaged, or naming neither runner nor launch: no launcher of ours wrote it (another job's code
    # can write into this folder). A runner found among the processes is this job's; else a queued job
    # is still queued, and its start replaces the file.
    found = find_runner(folder)
    if found is not None:
        return Observation(
            state="running", backend_job_id=str(found), started_at=runner_started(found, folder), host=HOST
        )
    if job.state == "queued":
        return Observation(state="queued")
    why = damaged or "its runner.pid names no runner"
    return Observation(state="failed", reason="files_damaged", message=f"The runner cannot be found: {why}.")


def live_pid(folder: Path, recorded: int | None) -> int | None:
    """The pid of this folder's runner while it runs (the record's, else runner.pid's), verified."""
    pid = recorded
    if pid is None or runner_of(pid, folder) is None:
        try:
            info = jobfiles.read_pid(folder)
        except jobfiles.Damaged:
            return None
        pid = info.pid if info is not None else None
    if pid is None:
        return None
    return pid if runner_of(pid, folder) is not None else None


def devices_of(folder: Path, recorded: int | None) -> list[str]:
    """The GPUs the server gave the runner of ``folder`` (read after a restart): its
    ``CUDA_VISIBLE_DEVICES`` as the operating system keeps the environment it was started with, never
    runner.pid's ``devices``, which the job's own code can rewrite. [] when it no longer runs."""
    pid = live_pid(folder, recorded)
    if pid is None:
        return []
    try:
        given = psutil.Process(pid).environ().get("CUDA_VISIBLE_DEVICES", "")
    except psutil.Error:
        return []
    return [d for d in given.split(",") if d]


def was_preempted(job: Job, folder: Path, info: jobfiles.PidFile | None) -> bool:
    """Did an opportunistic job's runner end by recording a stopped attempt (not a status)? Then its
    pid file goes, so that the job can be started again, and the job is queued."""
    if job.priority != "opportunistic":
        return False
    try:
        attempts = jobfiles.read_attempts(folder)
    except jobfiles.Damaged:
        return False
    if not attempts:
        return False
    started = info.started_at if info is not None else None
    if started is not None and (attempts[-1].ended_at or 0) < started:
        return False  # the latest runner recorded no attempt: it died (its record says how)
    if info is not None:
        (folder / jobfiles.PID).unlink(missing_ok=True)
    return True
