"""An opportunistic job's attempts as the tracker keeps them: what its runner recorded of each, merged
with what the backend said (a requeue's reason, when it started again), and their GPU-hours and energy
summed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..backends.base import Observation
from ..models.attempts import JobAttempt
from ..models.gpu.jobuse import ENERGY_SOURCES
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
    """The current attempt's GPU-hours and energy plus those of the attempts before it."""
    if not attempts:
        return usage
    changes: dict[str, Any] = {}
    if usage.gpu_hours_allocated is not None:
        changes["gpu_hours_allocated"] = usage.gpu_hours_allocated + sum(
            a.gpu_hours_allocated or 0 for a in attempts
        )
        if usage.gpu_hours_used is not None:
            changes["gpu_hours_used"] = usage.gpu_hours_used + sum(a.gpu_hours_used or 0 for a in attempts)
    changes.update(_energy(usage, attempts))
    return usage.model_copy(update=changes)


def _energy(usage: JobGpuUsage, attempts: Sequence[JobAttempt]) -> dict[str, Any]:
    """The energy of every attempt that measured one; which did not, said. Of different sources, the
    least exact names the sum (a share of a whole GPU, then power samples, then the counter)."""
    parts = [(a.energy_joules, a.energy_source) for a in attempts if a.gpu_hours_allocated or a.energy_joules]
    parts.append((usage.energy_joules, usage.energy_source))
    known = [(j, s) for j, s in parts if j is not None]
    if not known:
        return {}
    sources = [s for _, s in known if s is not None]
    missing = [f"attempt {a.number}" for a in attempts if a.energy_joules is None and a.gpu_hours_allocated]
    if usage.energy_joules is None and usage.available:
        missing.append("the current attempt")
    note = usage.energy_note if usage.energy_joules is not None else None
    if missing:
        which = missing[0] if len(missing) == 1 else ", ".join(missing[:-1]) + " and " + missing[-1]
        gap = f"{which[0].upper()}{which[1:]} measured no energy: the sum counts the other attempts' only."
        note = f"{note} {gap}" if note else gap
    return {
        "energy_joules": round(sum(j for j, _ in known), 3),
        "energy_source": max(sources, key=ENERGY_SOURCES.index) if sources else None,
        "energy_note": note,
    }


def requeued_words(attempts: Sequence[JobAttempt], obs: Observation) -> str:
    last = attempts[-1].reason if attempts else "preempted"
    why = {"evicted": "Evicted", "node_lost": "Lost with its node"}.get(last, "Preempted")
    return obs.message or f"{why}; requeued, it resumes from its checkpoint when it starts again."


def within(t: float | None, low: float, high: float) -> float | None:
    return None if t is None else min(max(t, low), high)
