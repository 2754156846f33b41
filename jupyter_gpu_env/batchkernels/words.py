"""What a batch kernel session is doing, in the words the notebook's toolbar and the log say it (pure)."""

from __future__ import annotations

import time

from ..gpu.idle import duration
from ..models.jobs import TERMINAL_STATES, Job
from ..models.kernels.batch import SessionState


def state_of(job: Job | None, connected: bool, ended: bool) -> SessionState:
    if ended or (job is not None and job.state in TERMINAL_STATES):
        return "ended"
    if job is None or job.state == "queued":
        return "waiting"
    return "running" if connected else "starting"


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def ends_at(job: Job | None) -> float | None:
    """When the walltime runs out: its start plus its time limit."""
    if job is None or job.started_at is None or not job.resources.time_limit_seconds:
        return None
    return job.started_at + job.resources.time_limit_seconds


def session_words(state: SessionState, job: Job | None, now: float | None = None) -> str:
    """ "waiting in queue 'gpu', 3rd, estimated start 14:20", "running on node01, 1 h 52 min left",
    "ended: Cancelled from outside (scancel)." (times in this server's clock)."""
    now = time.time() if now is None else now
    if job is None:
        return "submitting its job"
    if state == "waiting":
        parts = [f"waiting in queue '{job.queue_name}'" if job.queue_name else "waiting in the queue"]
        if job.queue_position:
            parts.append(ordinal(job.queue_position))
        if job.estimated_start and job.estimated_start > now:
            parts.append("estimated start " + time.strftime("%H:%M", time.localtime(job.estimated_start)))
        elif job.pending_reason:
            parts.append(job.pending_reason)
        return ", ".join(parts)
    on = f" on {job.node}" if job.node else ""
    if state == "starting":
        return f"starting the kernel{on}"
    if state == "running":
        end = ends_at(job)
        left = f", {duration(end - now)} left" if end is not None else ""
        return f"running{on}{left}"
    return f"ended: {job.message}" if job.message else f"ended ({job.state})"
