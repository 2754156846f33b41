"""Keeping job records in step with the backends: one poll per backend per round for all its active jobs,
and what each observation and each job's progress file change in its record.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..backends.base import Backend, IllegalTransition, Observation
from ..contracts import jobfiles
from ..errors import GpuEnvError
from ..gpu.energy import WATTS_BOUND, most_joules
from ..loops import Refresher
from ..models.attempts import JobAttempt, with_summary
from ..models.jobs import TERMINAL_STATES, Job, JobGpuUsage, JobProgress
from .attempts import merged_attempts, requeued_words, restarted, summed, within
from .store import JobStore

log = logging.getLogger(__name__)
STANDING = frozenset(JobStore.STANDING)  # where a queued job stands, written many at once

# Someone watches a job or a sweep: their records are settled at most this often (seconds), a few
# times a second however many watchers ask (callers share the refresh lock).
WATCHED_REFRESH = 0.25
# How long a cancel waits for a runner that has written its final status to be seen ending.
ENDING_GRACE = 2.0
# How many ended jobs the tracker remembers having told ``on_ended`` of (so that it tells it once).
TOLD_ENDED = 10_000


class JobTracker:
    """Polls ``backends`` on demand; the service's loops call :meth:`refresh` every round.

    ``on_ended`` (set where the services are built: the server's notifier) is called once per job,
    with its record, when the record first reaches succeeded, failed or cancelled; what it raises is
    logged, never raised, and it must not block (it starts its own work in the background)."""

    def __init__(
        self, store: JobStore, backends: Mapping[str, Backend], folder_of: Callable[[Job], Path]
    ) -> None:
        self.store = store
        self.backends = backends
        self.folder_of = folder_of
        self.on_ended: Callable[[Job], None] | None = None
        self._told: OrderedDict[str, None] = OrderedDict()
        self._lock = asyncio.Lock()
        self._last = 0.0
        self._took = 0.0  # seconds the last refresh took
        self._polled: set[str] = set()
        self._soon = Refresher(self._settle_quietly, self.stale)

    def has_polled(self, name: str) -> bool:
        """Has this process looked at the backend's active jobs yet?"""
        return name in self._polled

    def seconds_since_refresh(self) -> float:
        return time.monotonic() - self._last

    def stale(self) -> bool:
        """Is the last refresh older than a watcher should see? At least WATCHED_REFRESH, and four times
        what the last refresh took: watchers keep the tracker busy a fifth of the time at most, however
        many jobs are active (a refresh of a 1,000-run sweep's records takes 0.05-0.25 s)."""
        return self.seconds_since_refresh() > max(WATCHED_REFRESH, 4 * self._took)

    async def settle_watched(self) -> None:
        """Someone watches a sweep or a job: settle the records now rather than at the next round. Callers
        that arrive while a refresh runs wait for that one and are then served by it, not each by one of
        their own in turn (fifty watchers of a 1,000-run sweep queued fifty refreshes)."""
        if not self.stale():
            return
        async with self._lock:
            if self.stale():  # no refresh ended while this one waited for the lock
                await self._refresh()

    def settle_soon(self) -> None:
        """Someone lists active jobs: settle the records in the background (one such settle at a time)
        and return at once. A listing answers from the store as it is, and never waits behind a refresh
        (fifty clients listing while a 1,000-run sweep ran waited up to 25 s)."""
        self._soon.ask()

    async def close(self) -> None:
        await self._soon.close()

    def ended(self, job: Job) -> None:
        """``job``'s record has just reached its end (here, or by a cancel): tell ``on_ended``, once."""
        if self.on_ended is None or job.state not in TERMINAL_STATES or job.id in self._told:
            return
        self._told[job.id] = None
        if len(self._told) > TOLD_ENDED:
            self._told.popitem(last=False)
        try:
            self.on_ended(job)
        except Exception:  # a listener's trouble never changes how a job is recorded
            log.exception("telling of the end of job %s failed", job.id)

    async def mark_cancelling(self, jobs: Sequence[Job]) -> None:
        """Before a backend is asked to stop ``jobs``: tell their runners it is a cancel. An opportunistic
        job's runner otherwise takes the signal for a preemption, and its job for one to resume."""
        resumable = [self.folder_of(j) for j in jobs if j.priority == "opportunistic"]
        if resumable:
            await asyncio.to_thread(_mark_all, resumable)

    async def _settle_quietly(self) -> None:
        try:
            await self.settle_watched()
        except Exception:  # in the background: the next round tries again
            log.exception("settling the watched jobs failed")

    async def refresh(self) -> None:
        """Poll each backend once for all its active jobs and apply what they and the job folders say."""
        async with self._lock:
            await self._refresh()

    async def _refresh(self) -> None:
        began = time.monotonic()
        await asyncio.gather(*(self.refresh_backend(n, b) for n, b in self.backends.items()))
        self._last = time.monotonic()
        self._took = self._last - began

    async def settle_ended(self, jobs: Sequence[Job]) -> list[Job]:
        """Of ``jobs`` (records that say queued or running), record now the end of those their backend
        sees ended, and return every record as it then is: a cancel must act on how the jobs stand, not
        on records a round behind (it would rewrite a job that succeeded as cancelled).

        The backend decides, not a status file alone, which the job's own code could write while it
        runs. A runner that has written its status lives a few milliseconds more: such jobs are
        looked at again for up to ENDING_GRACE seconds, until their backend sees them end."""
        seen = await self._poll_some(jobs)
        deadline = time.monotonic() + ENDING_GRACE
        ending = await self._ending(jobs, seen)
        while ending and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
            seen |= await self._poll_some(ending)
            ending = await self._ending(ending, seen)
        settled = []
        for job in jobs:
            obs = seen.get(job.id)
            if obs is not None and obs.state in TERMINAL_STATES and job.state not in TERMINAL_STATES:
                job = await self.apply(job, obs, None)
            settled.append(job)
        return settled

    async def _ending(self, jobs: Sequence[Job], seen: Mapping[str, Observation]) -> list[Job]:
        """The jobs their backend sees active whose runner has written its final status."""
        active = [j for j in jobs if (o := seen.get(j.id)) is not None and o.state not in TERMINAL_STATES]
        written = await asyncio.to_thread(lambda: [jobfiles.read_status(self.folder_of(j)) for j in active])
        return [j for j, status in zip(active, written, strict=True) if status is not None]

    async def _poll_some(self, jobs: Sequence[Job]) -> dict[str, Observation]:
        seen: dict[str, Observation] = {}
        for name in {j.backend for j in jobs}:
            backend = self.backends.get(name)
            if backend is None:
                continue
            try:
                seen |= await backend.look([j for j in jobs if j.backend == name])
            except GpuEnvError as e:
                log.warning("backend %s could not be polled: %s", name, e)
        return seen

    async def refresh_backend(self, name: str, backend: Backend) -> None:
        jobs = await self.store.active(name)
        if not jobs:
            self._polled.add(name)
            return
        try:
            seen = await backend.poll(jobs)
        except GpuEnvError as e:
            log.warning("backend %s could not be polled: %s", name, e)
            return
        self._polled.add(name)
        # A normal job that waits and has never run has no files yet: a 1,000-run sweep's queued runs
        # are most of a round, 3,000 reads. Their places in the queue shift together as one run ends:
        # written in one transaction, not 1,000.
        read = [j for j in jobs if j.state != "queued" or _ran(j, seen.get(j.id))]
        folders = await asyncio.to_thread(lambda: {j.id: read_folder(self.folder_of(j)) for j in read})
        places: dict[str, dict[str, Any]] = {}
        for job in jobs:
            try:
                await self.apply(job, seen.get(job.id), folders.get(job.id, FolderFiles()), places)
            except Exception:  # one job's trouble must not keep the others from being recorded
                log.exception("job %s could not be brought up to date", job.id)
        await self.store.update_standing(places)

    async def apply(
        self,
        job: Job,
        obs: Observation | None,
        files: FolderFiles | None,
        places: dict[str, dict[str, Any]] | None = None,
    ) -> Job:
        """Bring a record in line with an observation and what the job's folder says of its progress and
        GPU use. The record's times are the server's: the first start it saw stands, and every time is
        kept between the job's creation and now, whatever a file in the folder claims."""
        changes: dict[str, Any] = {}
        now = time.time()
        if files is None and obs is not None and obs.state in TERMINAL_STATES:
            files = await asyncio.to_thread(read_folder, self.folder_of(job))
        files = files or FolderFiles()
        state = obs.state if obs is not None and obs.state != job.state else None
        requeued = state == "queued" and job.state == "running"
        if requeued and (
            obs is None or not obs.requeued or job.priority != "opportunistic" or job.kind == "kernel"
        ):
            # A normal job is never requeued, nor is a kernel session (it cannot resume in a new
            # allocation: its backend ends it); a stale "queued" changes nothing.
            state, requeued = None, False
        # While it runs on, an attempt its runner just recorded belongs to the requeue still to be seen
        # (SLURM lists a preempted job COMPLETING first): merged then, it is not taken for one missing.
        written = () if job.state == "running" and state is None else files.attempts
        attempts = merged_attempts(job, written, obs.requeued if requeued and obs else None, now)
        if attempts != job.attempts:
            changes["attempts"] = attempts

        started = job.started_at or within(obs.started_at if obs else None, job.created_at, now)
        finished = None
        if state in TERMINAL_STATES and obs is not None:
            finished = within(obs.finished_at or now, started or job.created_at, now)
        if files.gpu is not None:
            usage = _capped(summed(files.gpu, attempts), job, started, finished or now)
            if usage != job.gpu:
                changes["gpu"] = usage
        if files.progress is not None and files.progress != job.progress:
            changes["progress"] = files.progress
        if files.damaged and state is None and job.state == "running":
            note = f"Running on {job.backend}; {'; '.join(files.damaged)}."
            if note != job.message:
                changes["message"] = note
        if obs is not None:
            if obs.backend_job_id and obs.backend_job_id != job.backend_job_id:
                changes["backend_job_id"] = obs.backend_job_id
            if obs.host and obs.host != job.node:
                changes["node"] = obs.host
            if obs.state == "queued" and obs.pending_reason != job.pending_reason:
                changes["pending_reason"] = obs.pending_reason
            standing = (
                (obs.queue_position, obs.queue_name, obs.estimated_start)
                if obs.state == "queued"
                else (None,) * 3
            )
            if standing != (job.queue_position, job.queue_name, job.estimated_start):
                changes.update(
                    zip(("queue_position", "queue_name", "estimated_start"), standing, strict=True)
                )
        try:
            if state is not None and obs is not None:
                if job.state == "queued" and (
                    state == "succeeded" or (state != "running" and obs.started_at)
                ):
                    # It ran and ended between two looks: record the run, then the end.
                    job = await self.store.update(job.id, state="running", started_at=started)
                again = restarted(attempts, obs, state, job.created_at, now)
                if again is not None:  # it started again: its wait in the queue ends
                    attempts[-1] = attempts[-1].model_copy(update={"resumed_at": again})
                    changes["attempts"] = attempts
                if requeued:
                    changes.update(message=requeued_words(attempts, obs), exit_code=None)
                elif state == "running":
                    words = with_summary(obs.message or f"Running on {job.backend}.", attempts)
                    changes.update(pending_reason=None, message=words)
                else:
                    words = with_summary(obs.message or "", attempts)
                    changes.update(reason=obs.reason, message=words, exit_code=obs.exit_code)
                if not requeued:
                    changes.update(started_at=started, finished_at=finished)
            if state is None and not changes:
                return job
            if places is not None and state is None and job.state == "queued" and set(changes) <= STANDING:
                places[job.id] = changes  # where a queued job stands: the caller writes all at once
                return job
            job = await self.store.update(job.id, state=state, **changes)
        except IllegalTransition:
            return await self.store.get(job.id)  # someone else (a cancel) ended it first; theirs stands
        if state in TERMINAL_STATES:
            self.ended(job)
        return job


@dataclass(frozen=True)
class FolderFiles:
    """What a job's folder says of its progress and GPU use, and which of its files cannot be believed."""

    progress: JobProgress | None = None
    gpu: JobGpuUsage | None = None
    damaged: tuple[str, ...] = ()
    attempts: tuple[JobAttempt, ...] = ()


def _ran(job: Job, obs: Observation | None) -> bool:
    """May a queued job's folder hold what a runner wrote? Not a normal job's, still waiting."""
    return obs is None or obs.state != "queued" or job.priority != "normal" or bool(job.attempts)


def read_folder(folder: Path) -> FolderFiles:
    """Blocking reads of a job's progress and GPU summary; a damaged file is named, not fatal."""
    damaged: list[str] = []
    try:
        progress = jobfiles.read_progress(folder)
    except jobfiles.Damaged as e:
        progress = None
        damaged.append(str(e))
    try:
        gpu = jobfiles.read_gpu(folder)
    except jobfiles.Damaged as e:
        gpu = JobGpuUsage(available=False, reason=f"GPU use is not shown: {e}.")
        damaged.append(str(e))
    try:
        attempts = tuple(jobfiles.read_attempts(folder))
    except jobfiles.Damaged as e:
        attempts = ()
        damaged.append(str(e))
    return FolderFiles(progress, gpu, tuple(damaged), attempts)


def _mark_all(folders: Sequence[Path]) -> None:
    for folder in folders:
        jobfiles.mark_cancel(folder)


def _capped(usage: JobGpuUsage, job: Job, started: float | None, until: float) -> JobGpuUsage:
    """The summary with its GPU-hours and energy no more than the record's run time allows (the energy at
    WATTS_BOUND a device held), and no carbon or cost of the folder's: the server computes those."""
    changes: dict[str, Any] = {"co2e_grams": None, "cost": None}
    seconds = max(0.0, until - (started or until))
    devices = max(math.ceil(job.resources.gpu_units()), len(usage.devices), 1)
    if usage.gpu_hours_allocated is not None:
        units = max(job.resources.gpu_units(), float(len(usage.devices)), 1.0)
        most = round(units * seconds / 3600, 6)
        if usage.gpu_hours_allocated > most:
            changes["gpu_hours_allocated"] = most
            changes["gpu_hours_used"] = (
                None if usage.gpu_hours_used is None else min(usage.gpu_hours_used, most)
            )
    if usage.energy_joules is not None and usage.energy_joules > (top := most_joules(devices, seconds)):
        changes["energy_joules"] = round(top, 3)
        changes["energy_note"] = (
            f"The runner's figure, {usage.energy_joules:,.0f} J, is more than {devices} device(s) can draw "
            f"in the job's {seconds:,.0f} s at {WATTS_BOUND:,.0f} W each: kept at that bound."
        )
    if all(getattr(usage, k) == v for k, v in changes.items()):
        return usage
    return usage.model_copy(update=changes)
