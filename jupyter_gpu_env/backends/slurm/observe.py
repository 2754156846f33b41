"""What a SLURM job's state is: the runner's files in the job folder first, then squeue or scontrol.

The runner's ``status.json`` is the final word on how the notebook ended. SLURM's own state fills in
what the runner cannot say: waiting and why (the pending reason, in words), a job that never started, a
node that failed, a time limit or preemption that stopped the runner (a SIGTERM the runner would
otherwise record as a cancel). :func:`observe` is a pure function of what was read, tested without
SLURM; :class:`SlurmObserver` reads it (the folders, then one squeue for every active job) each poll.
"""

from __future__ import annotations

import asyncio
import functools
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ...contracts import jobfiles
from ...models.jobs import Job, JobState
from ...models.resources import format_time_limit
from ..base import UNSUBMITTED_LOST, Observation
from . import parse
from .controller import SlurmController
from .words import (
    ENDED_STATES,
    ENDED_WORDS,
    NEVER_SATISFIED,
    NEVER_SATISFIED_WORDS,
    QUEUED_STATES,
    RUNNING_STATES,
    ceil_minutes,
    pending_words,
    requeued_words,
)

JOB_ID_FILE = "slurm_job_id"  # the SLURM id, beside the script: found again if the record missed it


@dataclass(frozen=True)
class FolderState:
    """What a job's folder says: the runner's status, the SLURM id written at submission, a heartbeat."""

    status: dict[str, Any] | None
    slurm_id: str | None
    heartbeat: bool


def read_id(folder: Path) -> str | None:
    try:
        raw = jobfiles.read_bytes(folder / JOB_ID_FILE, 64)
    except jobfiles.Damaged:
        return None
    text = (raw or b"").decode("ascii", "replace").strip()
    return text if re.fullmatch(r"\d+(?:_\d+)?", text) else None


def read_folders(folders: Mapping[str, Path]) -> dict[str, FolderState]:
    """Blocking reads: run it in a worker thread."""
    return {
        jid: FolderState(
            status=jobfiles.read_status(folder),
            slurm_id=read_id(folder),
            heartbeat=(folder / jobfiles.HEARTBEAT).exists(),
        )
        for jid, folder in folders.items()
    }


def observe(
    job: Job,
    slurm_id: str | None,
    row: parse.SlurmJob | None,
    local: FolderState,
    now: float,
    *,
    cancel_requested: bool,
    grace_over: Callable[[], bool],
) -> Observation | None:
    """The job's state from what its folder and SLURM say; None leaves the record as it is (wait).

    ``grace_over`` says whether SLURM has said the job ended long enough ago that the runner's status
    should have reached the shared filesystem by now.
    """
    status = local.status
    if slurm_id is None:
        if status is not None:
            return Observation.from_status(status)
        if now - job.created_at > UNSUBMITTED_LOST:
            return Observation(
                state="failed",
                reason="lost",
                message="The server stopped before SLURM accepted the job; it never ran.",
            )
        return None  # sbatch is still answering
    ended = row is not None and row.state in ENDED_STATES
    if status is not None:
        if status["state"] == "cancelled" and not cancel_requested:
            # The runner records any SIGTERM as a cancel. A time limit, preemption or node failure also
            # sends one: let SLURM's final state say which, once it has one.
            if ended and row is not None and row.state != "CANCELLED":
                return from_slurm_end(job, slurm_id, row, status)
            if row is not None and not ended and not grace_over():
                return None
        obs = replace(Observation.from_status(status, slurm_id), host=row.nodes if row else None)
        if ended and row is not None and row.state == "OUT_OF_MEMORY" and status["state"] == "failed":
            return from_slurm_end(job, slurm_id, row, status)
        return obs
    if row is None:
        if local.heartbeat and not grace_over():
            return None  # the runner ran; its status may still be on its way through the filesystem
        return Observation(
            state="failed",
            reason="lost",
            backend_job_id=slurm_id,
            message=f"SLURM no longer knows job {slurm_id} and its runner left no status in "
            f"{jobfiles.STATUS}: the job folder may not be on a filesystem the node shares.",
        )
    if row.state in QUEUED_STATES:
        if row.state == "CONFIGURING":
            reason = "Configuring: the nodes allocated to the job are starting."
        elif was_requeued(job, row, local):
            reason = requeued_words(row.reason)
            return Observation(
                state="queued", backend_job_id=slurm_id, pending_reason=reason, requeued="preempted"
            )
        else:
            reason = pending_words(row.reason, gpus=bool(job.resources.gpus or job.resources.mig_profile))
        return Observation(state="queued", backend_job_id=slurm_id, pending_reason=reason)
    if row.state in RUNNING_STATES:
        where = f" on {row.nodes}" if row.nodes else ""
        message = f"Running{where} (SLURM job {slurm_id})."
        if row.state in ("SUSPENDED", "STOPPED"):
            message = f"Suspended by SLURM{where} (SLURM job {slurm_id}); it continues when resumed."
        return Observation(
            state="running",
            backend_job_id=slurm_id,
            started_at=row.start_time,
            message=message,
            host=row.nodes,
        )
    if ended:
        if local.heartbeat and row.state != "CANCELLED" and not grace_over():
            return None
        return from_slurm_end(job, slurm_id, row, None)
    return Observation(
        state="running" if row.nodes else "queued",
        backend_job_id=slurm_id,
        pending_reason=f"SLURM state {row.state}.",
        host=row.nodes,
    )


def was_requeued(job: Job, row: parse.SlurmJob, local: FolderState) -> bool:
    """Is an opportunistic job SLURM lists as waiting one it ran and put back in its queue (preempted,
    or its node failed)? The record saw it run, its runner left a heartbeat, or SLURM counts a restart.
    A normal job is submitted with --no-requeue: it never is."""
    if job.priority != "opportunistic" or row.state == "CONFIGURING":
        return False
    return job.state == "running" or local.heartbeat or bool(row.restarts) or row.state.startswith("REQUEUE")


def from_slurm_end(
    job: Job, slurm_id: str, row: parse.SlurmJob, status: dict[str, Any] | None
) -> Observation:
    """How SLURM says the job ended, with what the runner said when it said anything."""
    reason, words = ENDED_WORDS.get(row.state, ("slurm_failed", f"SLURM ended the job ({row.state})."))
    if status is None and row.exit_code == jobfiles.EXIT_PREEMPTED and row.state in ("COMPLETED", "FAILED"):
        reason, words = (
            "not_requeued",
            (
                "The runner was signalled to stop for other work and saved what ran, but SLURM did not requeue "
                "the job (its partition or QOS may not preempt with PreemptMode=REQUEUE)."
            ),
        )
    never = row.state == "CANCELLED" and row.reason == NEVER_SATISFIED
    if never:  # a pipeline's node whose parents did not end as it needed (--kill-on-invalid-dep)
        reason, words = NEVER_SATISFIED_WORDS
    if row.state == "TIMEOUT" and job.resources.time_limit_seconds:
        limit = ceil_minutes(job.resources.time_limit_seconds) * 60
        words = f"SLURM stopped the job at its time limit of {format_time_limit(limit)}."
    state: JobState = "cancelled" if row.state == "CANCELLED" else "failed"
    extra = []
    if row.reason and row.reason not in ("None", row.state) and not never:
        extra.append(f"SLURM's reason: {row.reason}")
    if row.exit_code:
        extra.append(f"exit code {row.exit_code}")
    if status is not None and status.get("message") and status.get("state") == "failed":
        extra.append(f"the runner said: {status['message']}")
    message = f"{words} (SLURM job {slurm_id}" + ("; " + "; ".join(extra) if extra else "") + ")"
    started = row.start_time if row.nodes else None
    return Observation(
        state=state,
        reason=reason,
        message=message,
        backend_job_id=slurm_id,
        started_at=(status or {}).get("started_at") or started,
        finished_at=(status or {}).get("finished_at") or row.end_time or time.time(),
        exit_code=(status or {}).get("exit_code", row.exit_code),
        host=row.nodes,
    )


_SCONTROL_AT_ONCE = 4  # scontrol calls in flight for jobs squeue no longer lists (rare: after a long outage)


class SlurmObserver:
    """Observes active jobs through ``controller`` and their folders; waits ``status_grace`` seconds
    for a runner's status after SLURM says a job ended."""

    def __init__(self, controller: SlurmController, status_grace: float) -> None:
        self.controller = controller
        self.status_grace = status_grace
        # Jobs this server asked to stop: a runner's "cancelled" is then the user's, not SLURM's.
        self.cancel_requested: set[str] = set()
        self._ended_at: dict[str, float] = {}  # job id -> when SLURM was first seen done without a status

    async def poll(self, jobs: Sequence[Job], folders: Mapping[str, Path]) -> dict[str, Observation]:
        """Each job's observation (``folders``: each one's folder, by id); one squeue for them all."""
        local = await asyncio.to_thread(read_folders, folders)
        ids: dict[str, Job] = {}
        for job in jobs:
            slurm_id = job.backend_job_id or local[job.id].slurm_id
            if slurm_id:
                ids[slurm_id] = job
        rows = await self.controller.squeue(list(ids)) if ids else {}
        # Jobs squeue no longer lists (the controller forgot them, or a race): ask scontrol, but only
        # where the runner's status does not already settle the matter.
        missing = [sid for sid, job in ids.items() if sid not in rows and local[job.id].status is None]
        limit = asyncio.Semaphore(_SCONTROL_AT_ONCE)

        async def ask(sid: str) -> parse.SlurmJob | None:
            async with limit:
                return await self.controller.scontrol(sid)

        for sid, row in zip(missing, await asyncio.gather(*(ask(s) for s in missing)), strict=True):
            if row is not None:
                rows[sid] = row
        now = time.time()
        seen: dict[str, Observation] = {}
        for job in jobs:
            slurm_id = job.backend_job_id or local[job.id].slurm_id
            obs = observe(
                job,
                slurm_id,
                rows.get(slurm_id or ""),
                local[job.id],
                now,
                cancel_requested=job.id in self.cancel_requested,
                grace_over=functools.partial(self._grace_over, job.id, now),
            )
            if obs is not None:
                seen[job.id] = obs
        pending = {
            o.backend_job_id: jid for jid, o in seen.items() if o.state == "queued" and o.backend_job_id
        }
        if pending:
            partitions = {r.partition for sid in pending if (r := rows.get(sid)) and r.partition}
            for sid, standing in (await self.controller.standings(set(pending), partitions)).items():
                seen[pending[sid]] = replace(
                    seen[pending[sid]],
                    queue_position=standing.position,
                    queue_name=standing.partition,
                    estimated_start=standing.estimated_start,
                )
        active = {j.id for j in jobs}
        self._ended_at = {k: v for k, v in self._ended_at.items() if k in active}
        self.cancel_requested &= active
        return seen

    def _grace_over(self, job_id: str, now: float) -> bool:
        first = self._ended_at.setdefault(job_id, now)
        return now - first >= self.status_grace
