"""What a job service reports beside the records: logs, GPU series, usage, and what backends can start.

A mixin of :class:`.service.JobService` (kept apart to keep that module about the records' lifecycle).
"""

from __future__ import annotations

import asyncio
import builtins
import time
from pathlib import Path

from ..errors import Conflict, InvalidRequest, NotFound
from ..gpu import jobuse
from ..models.backends import BackendInfo, UsageReport, UsageWeeks
from ..models.cluster import ClusterCapacity
from ..models.jobs import TERMINAL_STATES, Job, JobGpuSeries, LogChunk
from . import jobfiles, usage
from .backend import Backend
from .store import JobStore

DEFAULT_LOG_CHUNK = 256 << 10
MAX_LOG_CHUNK = 4 << 20
USAGE_DEFAULT_PERIOD = 7 * 24 * 3600


class JobReports:
    store: JobStore
    backends: dict[str, Backend]

    async def get(self, job_id: str) -> Job:
        raise NotImplementedError

    def folder_of(self, job: Job) -> Path:
        raise NotImplementedError

    async def log(self, job_id: str, offset: int = 0, limit: int = DEFAULT_LOG_CHUNK) -> LogChunk:
        """The log from byte ``offset``, at most ``limit`` bytes (capped at 4 MiB); follow with ``next_offset``."""
        if offset < 0:
            raise InvalidRequest("offset must not be negative.")
        limit = max(1, min(int(limit), MAX_LOG_CHUNK))
        job = await self.store.get(job_id)
        backend = self.backends.get(job.backend)
        if backend is not None:
            chunk = await backend.logs(job, offset, limit)
            if chunk is not None:
                return chunk
        text, nxt, size = await asyncio.to_thread(
            jobfiles.read_log, self.folder_of(job) / jobfiles.LOG, offset, limit
        )
        if offset > size:
            raise Conflict(
                f"offset {offset} is past the end of the log, which has {size} bytes so far.",
                reason="offset_past_end",
            )
        return LogChunk(
            offset=offset, next_offset=nxt, text=text, eof=job.state in TERMINAL_STATES and nxt >= size
        )

    async def gpu_series(self, job_id: str) -> JobGpuSeries:
        """The job's GPU samples (at most 600 points, evenly thinned) and its summary."""
        job = await self.get(job_id)
        devices, points = await asyncio.to_thread(jobuse.read_series, self.folder_of(job))
        return JobGpuSeries.model_validate(
            {"job_id": job.id, "summary": job.gpu, "devices": devices, "points": points}
        )

    async def capacity(self, backend: str) -> ClusterCapacity:
        """What the backend can start now: free and total GPUs and MIG slices by profile and model."""
        found = self.backends.get(backend)
        if found is None:
            known = ", ".join(sorted(self.backends)) or "none"
            raise NotFound(
                f"Unknown backend '{backend}'; configured backends: {known}.", reason="unknown_backend"
            )
        return await found.capacity()

    def backend_infos(self) -> builtins.list[BackendInfo]:
        return [b.info() for b in self.backends.values()]

    async def usage(self, start: float | None = None, end: float | None = None) -> UsageReport:
        """GPU-hours, CPU-hours and jobs per state per backend; by default over the last 7 days."""
        end = time.time() if end is None else end
        start = end - USAGE_DEFAULT_PERIOD if start is None else start
        return await self.store.usage(start, end)

    async def usage_weeks(self, weeks: int = 8) -> UsageWeeks:
        """GPU-hours allocated and used per week, the last ``weeks`` weeks (this one so far last)."""
        return await usage.weekly(self.store, weeks)
