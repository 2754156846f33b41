"""An opportunistic job's attempts as the tracker keeps them: what its runner recorded of each, merged
with what the backend said (a requeue's reason, when it started again), and their GPU-hours summed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..backends.base import Observation
from ..models.attempts import JobAttempt
from ..models.jobs import Job, JobGpuUsage


def merged_attempts(
    job: Job, written: Sequence[JobAttempt], requeued: str | None, now: float
) -> list[JobAttempt]:
    """The record's attempts with what the runner wrote (its word on each attempt it recorded); and,
    when the backend has just requeued the job but its runner recorded nothing (killed outright, its
    node lost), an attempt of the tracker's own. The backend's reason stands over the runner's."""
    by_number = {a.number: a for a in job.attempts}
    for a in written:  # the runner's word on each attempt, but the backend's reason and the restart stand
        kept = by_number.get(a.number)
        by_number[a.number] = a if kept is None else a.model_copy(update=tracked(kept))
    attempts = [by_number[n] for n in sorted(by_number)][:1000]
    if requeued is not None and len(attempts) <= len(job.attempts):  # the runner recorded nothing
        attempts.append(
            JobAttempt(
                number=len(attempts) + 1,
                started_at=None if attempts else job.started_at,
                ended_at=now,
                reason="evicted"
                if requeued == "evicted"
                else "node_lost"
                if requeued == "node_lost"
                else "preempted",
                cells_done=job.progress.cells_done,
            )
        )
    elif requeued in ("evicted", "node_lost") and attempts and attempts[-1].reason != requeued:
        attempts[-1] = attempts[-1].model_copy(update={"reason": requeued})
    return attempts


def restarted(
    attempts: Sequence[JobAttempt], obs: Observation, state: str, created: float, now: float
) -> float | None:
    """When a stopped job started again, if it just did: it runs again, or it ran and ended between two
    looks (its backend's start time is after the last stop)."""
    if not attempts or attempts[-1].resumed_at is not None or state == "queued":
        return None
    stopped = attempts[-1].ended_at or created
    if state == "running":
        return within(obs.started_at, stopped, now) or now
    return obs.started_at if obs.started_at and stopped < obs.started_at <= now else None


def tracked(kept: JobAttempt) -> dict[str, Any]:
    """What the tracker knows of an attempt better than its runner: a reason the backend gave (evicted,
    node lost), and when the job started again."""
    known: dict[str, Any] = {"resumed_at": kept.resumed_at}
    if kept.reason != "preempted":
        known["reason"] = kept.reason
    return known


def summed(usage: JobGpuUsage, attempts: Sequence[JobAttempt]) -> JobGpuUsage:
    """The current attempt's GPU-hours plus those of the attempts before it."""
    if not attempts or usage.gpu_hours_allocated is None:
        return usage
    alloc = usage.gpu_hours_allocated + sum(a.gpu_hours_allocated or 0 for a in attempts)
    used = usage.gpu_hours_used
    if used is not None:
        used += sum(a.gpu_hours_used or 0 for a in attempts)
    return usage.model_copy(update={"gpu_hours_allocated": alloc, "gpu_hours_used": used})


def requeued_words(attempts: Sequence[JobAttempt], obs: Observation) -> str:
    last = attempts[-1].reason if attempts else "preempted"
    why = {"evicted": "Evicted", "node_lost": "Lost with its node"}.get(last, "Preempted")
    return obs.message or f"{why}; requeued, it resumes from its checkpoint when it starts again."


def within(t: float | None, low: float, high: float) -> float | None:
    return None if t is None else min(max(t, low), high)
