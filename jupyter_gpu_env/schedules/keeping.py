"""How schedules are kept: the server's own timer for a backend that keeps none (local), and the
arming of those a backend keeps (a SLURM chain, a CronJob). The runs the cluster started are adopted
by :mod:`.adoption`.
"""

from __future__ import annotations

import asyncio
import builtins
import logging
import time
from contextlib import AbstractAsyncContextManager
from pathlib import Path

from ..backends.base import Backend
from ..contracts import jobfiles
from ..contracts.schedules import folder as files
from ..contracts.schedules import locking
from ..contracts.schedules.plan import Armed, SchedulePlan
from ..errors import Conflict, GpuEnvError
from ..jobs.service import JobService
from ..models.automation.pipelines import Pipeline
from ..models.automation.schedules import Keeper
from ..models.jobs import Job
from ..models.sweeps import JobGroup
from ..pipelines.service import PipelineService
from ..system.offloop import python_work
from . import pipelined
from .adoption import Adoption
from .pipelined import PIPELINE_KEPT
from .records import ScheduleRecord, ScheduleRecords

log = logging.getLogger(__name__)

ARMED_TTL = 30.0  # seconds between two looks at how the backends hold their schedules
SERVER_KEPT = "Runs only while this Jupyter server runs: the local backend has no scheduler of its own."


class Keeping:
    """The schedules' timer, arming and adoption, over a :class:`JobService`."""

    def __init__(
        self,
        jobs: JobService,
        records: ScheduleRecords,
        starting_deadline: int,
        pipelines: PipelineService | None = None,
        lock_wait: float = locking.WAIT,
    ) -> None:
        self.jobs = jobs
        self.pipelines = pipelines
        self.store = jobs.store
        self.records = records
        self.starting_deadline = starting_deadline
        self.armed: dict[str, Armed] = {}
        self._armed_at = -float("inf")
        self._unreadable: set[str] = set()  # schedules whose times cannot be computed, said once
        # One round at a time, and no run made by hand (run now) while a round looks for runs to adopt.
        self.lock = asyncio.Lock()
        self.locks = locking.ScheduleLocks(lock_wait)  # each schedule's, shared with its tick
        self.adoption = Adoption(jobs, self.records)

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
                    await self.adoption.adopt(record, backend)
                    if self.kept_by(record) is None and record.active:
                        await self.run_due(record)
                except Exception:  # one schedule's trouble is its own
                    log.exception("schedule %s could not be looked after", record.id)
            await self.refresh_armed()

    async def run_due(self, record: ScheduleRecord) -> None:
        now = time.time()
        try:
            timing = record.timing
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
        return await self.adoption.adopt_all()

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
            timing = record.timing
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
