"""How schedules are kept: the server's own timer for a backend that keeps none (local), the
arming of those a backend keeps (a SLURM chain, a CronJob), and the adoption of runs the cluster
started, so that nothing a schedule ran is missing from the jobs, and nothing is listed twice.

The server makes its own schedules' runs and records them at once; a run of a kept schedule writes
its own ``record.json`` (:mod:`.tick`), read here as untrusted: what the server keeps of it is
checked (where it is, what it runs, a state still to be observed).
"""

from __future__ import annotations

import asyncio
import builtins
import logging
import re
import time
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

from ..batch import jobfiles
from ..batch.backend import Backend
from ..batch.service import JobService
from ..errors import Conflict, GpuEnvError
from ..models.automation.pipelines import Pipeline
from ..models.automation.schedules import Keeper
from ..models.jobs import Job
from ..models.sweeps import JobGroup
from ..pipelines.service import PipelineService
from ..system.offloop import python_work
from . import folder as files
from . import locking, pipelined
from .pipelined import PIPELINE_KEPT
from .plan import Armed, SchedulePlan
from .records import ScheduleRecord
from .timing import parse

log = logging.getLogger(__name__)

_OUTPUT = re.compile(r"^output-\d{8}-\d{4}\.ipynb$")  # as folder.new_run names it
ARMED_TTL = 30.0  # seconds between two looks at how the backends hold their schedules
_BACKEND_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$")  # a SLURM id, a Job's name
SERVER_KEPT = "Runs only while this Jupyter server runs: the local backend has no scheduler of its own."


class Keeping:
    """The schedules' timer, arming and adoption, over a :class:`JobService`."""

    def __init__(
        self,
        jobs: JobService,
        starting_deadline: int,
        pipelines: PipelineService | None = None,
        lock_wait: float = locking.WAIT,
    ) -> None:
        self.jobs = jobs
        self.pipelines = pipelines
        self.store = jobs.store
        self.records = jobs.store.schedules
        self.starting_deadline = starting_deadline
        self.armed: dict[str, Armed] = {}
        self._armed_at = -float("inf")
        self._seen: dict[str, set[str]] = {}  # run folders already looked at, by schedule
        self._unreadable: set[str] = set()  # schedules whose times cannot be computed, said once
        # One round at a time, and no run made by hand (run now) while a round looks for runs to adopt.
        self.lock = asyncio.Lock()
        self.locks = locking.ScheduleLocks(lock_wait)  # each schedule's, shared with its tick

    def keeper(self, record: ScheduleRecord) -> Keeper:
        if record.pipeline_path is not None:
            return Keeper(kind="server", message=PIPELINE_KEPT)
        backend = self.kept_by(record)
        if backend is None:
            return Keeper(kind="server", message=SERVER_KEPT)
        armed = self.armed.get(record.id)
        if not record.active:
            said = (
                armed.message
                if armed is not None and armed.message
                else "Paused: no run starts until it is resumed."
            )
            return Keeper(kind="backend", handle=armed.handle if armed else None, message=said)
        if armed is None:
            return Keeper(kind="backend", message=f"Kept by the '{record.backend}' backend.")
        return Keeper(kind="backend", handle=armed.handle, present=armed.present, message=armed.message)

    # ----- the server's own timer, and adoption -----

    async def tick(self) -> None:
        """Start what is due of the schedules this server runs; adopt what the cluster ran."""
        async with self.lock:
            for record in await self.records.list():
                try:
                    backend = self.jobs.backends.get(record.backend)
                    if backend is None:
                        continue
                    await self.adopt(record, backend)
                    if self.kept_by(record) is None and record.active:
                        await self.run_due(record)
                except Exception:  # one schedule's trouble is its own
                    log.exception("schedule %s could not be looked after", record.id)
            await self.refresh_armed()

    async def run_due(self, record: ScheduleRecord) -> None:
        now = time.time()
        try:
            timing = parse(record.expression, record.timezone, minimum_period=0)
        except GpuEnvError as e:  # stored by an older version, or by hand: listed saying so, never run
            if record.id not in self._unreadable:
                self._unreadable.add(record.id)
                log.warning("schedule %s is not run: its times cannot be computed: %s", record.id, e)
            return
        due = timing.runs_between(record.checked_until, now, limit=1000)
        if not due:
            return
        where = Path(record.folder)
        *missed, latest = due
        for t in missed:
            await asyncio.to_thread(
                files.record_outcome, where, t, "missed", None, "This server was not running at the time."
            )
        if now - latest > self.starting_deadline:
            await asyncio.to_thread(
                files.record_outcome,
                where,
                latest,
                "missed",
                None,
                "This server was not running at the time.",
            )
        elif record.overlap == "skip" and (running := await self.records.active_runs(record.id)):
            await asyncio.to_thread(
                files.record_outcome,
                where,
                latest,
                "skipped",
                None,
                f"The previous run ({running[0]}) still runs.",
            )
        else:
            try:
                await self.start(where, await self.doc(record), latest)
            except GpuEnvError as e:
                log.warning("schedule %s: its run could not start: %s", record.id, e)
        await self.records.update(record.id, checked_until=now)

    async def start(
        self, where: Path, doc: files.ScheduleDoc, due: float, message: str = ""
    ) -> Job | JobGroup | Pipeline:
        """The run (the sweep, the pipeline) due at ``due``: made, recorded, handed to its backend."""
        if doc.pipeline_path is not None and self.pipelines is not None:
            return await pipelined.start(self.pipelines, where, doc, due, message)
        if doc.sweep is None:
            job, _ = await python_work(files.new_run, where, doc, due)
            await asyncio.to_thread(files.record_outcome, where, due, "started", job.id, message)
            return await self.start_run(job)
        sweep, runs, base = await python_work(files.new_sweep, where, doc, due)
        await self.store.sweeps.insert(sweep, runs)
        try:
            await self.jobs.sweeps.hand_over(sweep, runs, discard=base)
        except GpuEnvError as e:
            await asyncio.to_thread(
                files.record_outcome, where, due, "missed", None, f"It could not be sent: {e}"
            )
            raise
        await asyncio.to_thread(files.record_outcome, where, due, "started", None, message, sweep.id)
        return await self.jobs.sweeps.get(sweep.id)

    async def start_run(self, job: Job) -> Job:
        backend = self.jobs.intake.backend(job.backend)
        try:
            await self.store.insert(job)
        except Conflict:  # adopted meanwhile
            job = await self.store.get(job.id)
        try:
            obs = await backend.submit(job)
        except GpuEnvError as e:
            return await self.store.update(job.id, state="failed", reason="submit_failed", message=str(e))
        return await self.jobs.tracker.apply(job, obs, None)

    async def adopt_all(self) -> builtins.list[str]:
        """Adopt every schedule's runs the store lacks (what a round of :meth:`tick` does); their ids."""
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

    async def refresh_armed(self, *, force: bool = False) -> None:
        """Ask each backend how it holds its schedules: at most once per ARMED_TTL, one query each (a
        busy cluster's squeue is not asked every few seconds)."""
        if not force and time.monotonic() - self._armed_at < ARMED_TTL:
            return
        self._armed_at = time.monotonic()
        records = [r for r in await self.records.list() if r.active and r.pipeline_path is None]
        for name, backend in self.jobs.backends.items():
            if not backend.keeps_schedules:
                continue
            mine = [self.plan(r, None) for r in records if r.backend == name]
            if not mine:
                continue
            try:
                self.armed.update(await backend.schedules_armed(mine))
            except GpuEnvError as e:
                log.warning("backend %s could not say how it holds its schedules: %s", name, e)

    # ----- helpers -----

    def plan(self, record: ScheduleRecord, doc: files.ScheduleDoc | None) -> SchedulePlan:
        try:
            timing = parse(record.expression, record.timezone, minimum_period=0)
            cron, upcoming = timing.cron, timing.next_runs(time.time(), 1)
        except GpuEnvError:  # stored by an older version, or by hand: armed to run nothing, deleted
            cron, upcoming = None, []
        template = Job.model_validate(doc.template) if doc is not None else _bare_template(record)
        return SchedulePlan(
            id=record.id,
            name=record.name,
            folder=Path(record.folder),
            template=template,
            expression=record.expression,
            cron=cron,
            timezone=record.timezone,
            overlap=record.overlap,
            active=record.active,
            next_due=upcoming[0] if upcoming else None,
            generation=record.generation,
            starting_deadline_seconds=self.starting_deadline,
            sweep_size=record.sweep_size,
        )

    async def doc(self, record: ScheduleRecord) -> files.ScheduleDoc:
        try:
            doc = await asyncio.to_thread(files.read_doc, Path(record.folder))
        except jobfiles.Damaged as e:
            raise Conflict(
                f"Schedule '{record.name}': {e}. Delete it and make it again.", reason="files_damaged"
            ) from None
        if doc is None:
            raise Conflict(f"Schedule '{record.name}' has lost its folder.", reason="snapshot_missing")
        return doc

    async def arm(self, record: ScheduleRecord, backend: Backend) -> None:
        """Hand the schedule, as it now is, to the backend that keeps it: a paused one (or one with no
        run left) starts nothing there, as that backend does it (no waiting SLURM job; a suspended
        CronJob). Call it holding the schedule's lock (:meth:`locked`)."""
        doc = await self.doc(record)
        self.armed[record.id] = await backend.arm_schedule(self.plan(record, doc))

    async def rewrite(
        self, where: Path, doc: files.ScheduleDoc, record: ScheduleRecord, backend: Backend
    ) -> None:
        """schedule.json replaced, and the schedule armed anew; holding the schedule's lock (:meth:`locked`)."""
        await asyncio.to_thread(files.write_doc, where, doc)
        if self.kept_by(record) is not None:
            self.armed[record.id] = await backend.arm_schedule(self.plan(record, doc))

    def kept_by(self, record: ScheduleRecord) -> Backend | None:
        """The backend that keeps the schedule itself; None: this server runs it."""
        backend = self.jobs.backends.get(record.backend)
        keeps = backend is not None and backend.keeps_schedules and record.pipeline_path is None
        return backend if keeps else None

    def locked(self, record: ScheduleRecord) -> AbstractAsyncContextManager[None]:
        """The schedule's lock, here and against its tick; a 409 ``busy`` after a wait (:mod:`.locking`)."""
        return self.locks.hold(record.id, Path(record.folder), record.name)


def _bare_template(record: ScheduleRecord) -> Job:
    return Job(
        id=record.id,
        name=record.name,
        backend=record.backend,
        state="queued",
        notebook_path=record.notebook_path,
        job_dir=record.folder,
        input_path=f"{record.folder}/{jobfiles.INPUT}",
        output_path=f"{record.folder}/{jobfiles.OUTPUT}",
        log_path=f"{record.folder}/{jobfiles.LOG}",
        resources=record.resources,
        queue=record.queue,
        image=record.image,
        created_at=record.created_at,
    )


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
