"""The adoption of runs the cluster started for a schedule it keeps, so that nothing a schedule ran is
missing from the jobs, and nothing is listed twice.

The server makes its own schedules' runs and records them at once; a run of a kept schedule writes
its own ``record.json`` (the backend's tick), read here as untrusted: what the server keeps of it is
checked (where it is, what it runs, a state still to be observed).
"""

from __future__ import annotations

import asyncio
import builtins
import logging
import re
import time
from pathlib import Path
from typing import Any

from ..backends.base import Backend
from ..contracts import jobfiles
from ..contracts.schedules import folder as files
from ..errors import Conflict
from ..jobs.service import JobService
from ..models.jobs import Job
from .records import ScheduleRecord, ScheduleRecords

log = logging.getLogger(__name__)

_OUTPUT = re.compile(r"^output-\d{8}-\d{4}\.ipynb$")  # as folder.new_run names it
_BACKEND_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$")  # a SLURM id, a Job's name


class Adoption:
    """Finds each schedule's runs in its folder and records those the store lacks."""

    def __init__(self, jobs: JobService, records: ScheduleRecords) -> None:
        self.jobs = jobs
        self.store = jobs.store
        self.records = records
        self._seen: dict[str, set[str]] = {}  # run folders already looked at, by schedule

    async def adopt_all(self) -> builtins.list[str]:
        """Adopt every schedule's runs the store lacks; their ids."""
        adopted: builtins.list[str] = []
        for record in await self.records.list():
            if (backend := self.jobs.backends.get(record.backend)) is not None:
                adopted += await self.adopt(record, backend)
        return adopted

    async def adopt(self, record: ScheduleRecord, backend: Backend) -> builtins.list[str]:
        """Insert the record of every run (and scheduled sweep) the cluster started that the store does
        not have yet. The server makes its own schedules' runs and records them at once: one of those it
        lacks was left by a crash before its start, and is recorded so, not started late."""
        where = Path(record.folder)
        seen = self._seen.setdefault(record.id, set())
        names = [n for n in await asyncio.to_thread(files.run_names, where) if n not in seen]
        if not names:
            return []
        known = await self.records.known_runs(record.id)
        adopted: builtins.list[str] = []
        for name in names:
            seen.add(name)  # looked at once: a damaged record is said once, not every round
            run = where / files.RUNS / name
            try:
                if "-sweep-" in name:
                    adopted += await self._adopt_sweep(record, backend, run, known)
                elif (job := await self._adopted(record, backend, run, known)) is not None:
                    await self.store.insert(job)
                    adopted.append(job.id)
            except jobfiles.Damaged as e:
                log.warning("schedule %s: %s cannot be adopted: %s", record.id, name, e)
            except Conflict:  # recorded meanwhile
                continue
        if adopted:
            log.info("schedule %s: adopted %s", record.id, ", ".join(adopted))
        return adopted

    async def _adopted(
        self, record: ScheduleRecord, backend: Backend, run: Path, known: set[str], **extra: Any
    ) -> Job | None:
        """What the server keeps of a run's own record, or None when it is not one to adopt."""
        run_id = run.name.rsplit("-", 1)[-1]
        if run_id in known and not extra:
            return None
        job = await asyncio.to_thread(files.read_record, run)
        if job is None or job.schedule_id != record.id or (not extra and job.id != run_id) or job.id in known:
            return None
        job = _as_adopted(job, record, run, self.jobs.intake.shown, backend.keeps_schedules).model_copy(
            update=extra
        )
        if not backend.keeps_schedules and job.state == "queued":
            job = job.model_copy(
                update={
                    "state": "failed",
                    "reason": "lost",
                    "message": "The server stopped before starting this run.",
                    "finished_at": time.time(),
                }
            )
        return job

    async def _adopt_sweep(
        self, record: ScheduleRecord, backend: Backend, base: Path, known: set[str]
    ) -> builtins.list[str]:
        """A scheduled sweep's record and all its runs, in one transaction."""
        sweep_id = base.name.rsplit("-", 1)[-1]
        sweep = await asyncio.to_thread(files.read_sweep, base)
        if sweep is None or sweep.id != sweep_id:
            return []
        runs: list[Job] = []
        for folder in await asyncio.to_thread(files.sweep_runs, base):
            index = folder.name.split("-", 1)[0]  # the folder says its place, as new_sweep named it
            if not (index.isdigit() and int(index) < files.MAX_SWEEP):
                continue
            job = await self._adopted(
                record, backend, folder, known, group_id=sweep_id, group_index=int(index)
            )
            if job is not None:
                runs.append(job)
        if not runs:
            return []
        kept = sweep.model_copy(
            update={
                "backend": record.backend,
                "schedule_id": record.id,
                "size": len(runs),
                "counts": {"queued": len(runs)},
                "state": "queued",
                "backend_job_id": None,
                "created_at": max(min(sweep.created_at, time.time()), record.created_at),
            }
        )
        await self.store.sweeps.insert(kept, runs)
        return [j.id for j in runs]


def _as_adopted(job: Job, record: ScheduleRecord, run: Path, shown: Any, kept: bool) -> Job:
    """A run's record as its maker wrote it, with what the server decides itself: where it is (the
    server's view of the folder), what it runs (the schedule's), and a state still to be observed."""
    where = shown(run)
    output = Path(job.output_path).name
    if not _OUTPUT.fullmatch(output):
        output = jobfiles.OUTPUT
    unsubmitted = job.state == "failed" and job.reason == "submit_failed"
    backend_id = job.backend_job_id if kept and _BACKEND_ID.fullmatch(job.backend_job_id or "") else None
    return job.model_copy(
        update={
            "backend_job_id": backend_id,
            "node": None,  # where it runs is the backend's word, not the record's
            "backend": record.backend,
            "schedule_id": record.id,
            "job_dir": where,
            "input_path": f"{where}/{jobfiles.INPUT}",
            "output_path": f"{where}/{output}",
            "log_path": f"{where}/{jobfiles.LOG}",
            "state": "failed" if unsubmitted else "queued",
            "started_at": None,
            "finished_at": time.time() if unsubmitted else None,
            "group_id": None,
            "group_index": None,
            "attempts": [],  # its runner's attempts.json says, once the tracker reads it
            "checkpoint_dir": f"{where}/{jobfiles.CHECKPOINT}",
            "created_at": max(min(job.created_at, time.time()), record.created_at),
        }
    )
