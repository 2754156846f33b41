"""ScheduleService: schedules made, listed, changed, run now and deleted; their runs started (by the
server's own timer, for a backend that keeps no schedules, and for pipelines: :mod:`.pipelined`) or
adopted (runs the cluster started). A schedule is checked as a job would be (the notebook, what runs it, the backend, the queue and the
resources) and its notebook snapshotted; then its folder is built aside and renamed into place, the
record inserted and, where the backend keeps schedules (SLURM, Kubernetes), armed there. A backend
that refuses leaves nothing behind. Every change to what runs or when bumps the document's
generation and re-arms, under the schedule's lock (:mod:`.locking`: a 409 ``busy`` after a few
seconds), so a tick of the old chain does nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..contracts import jobfiles
from ..contracts.schedules import folder as files
from ..contracts.schedules import locking
from ..contracts.schedules.timing import Timing, describe, parse
from ..errors import Conflict, GpuEnvError, InvalidRequest, NotFound
from ..jobs import submission
from ..jobs.parameters import inspect_notebook
from ..jobs.service import JobService
from ..jobs.sweeps import plan
from ..models.automation.pipelines import Pipeline
from ..models.automation.schedules import (
    DueTime,
    Schedule,
    ScheduleList,
    SchedulePatch,
    SchedulePreview,
    ScheduleRequest,
)
from ..models.jobs import Job
from ..models.sweeps import JobGroup
from ..pipelines.service import PipelineService
from ..system.offloop import python_work
from ..system.trees import remove_tree
from . import pipelined
from .keeping import Keeping
from .records import ScheduleRecord, ScheduleRecords

log = logging.getLogger(__name__)

LISTED_RUNS = 10
SHOWN_RUNS = 50
# What a schedule shows as its record holds it (the rest is computed: its times in words, its runs).
_SHOWN_AS_KEPT = set(Schedule.model_fields) & set(ScheduleRecord.model_fields)


class ScheduleService:
    """Schedules over a :class:`JobService` (its store, intake, backends and tracker)."""

    def __init__(
        self,
        jobs: JobService,
        *,
        minimum_period: float = 60.0,
        starting_deadline: int = 300,
        pipelines: PipelineService | None = None,
        lock_wait: float = locking.WAIT,
    ) -> None:
        self.jobs = jobs
        self.store = jobs.store
        self.records = ScheduleRecords(jobs.store.db)  # the schedules' part of the jobs' database
        self.minimum_period = minimum_period
        self.starting_deadline = starting_deadline
        self.base = jobs.job_dir / "schedules"
        self.pipelines = pipelines
        self.keeping = Keeping(jobs, self.records, starting_deadline, pipelines, lock_wait)

    # ----- making -----

    def timing(self, expression: str, timezone: str) -> Timing:
        return parse(expression, timezone, minimum_period=self.minimum_period)

    async def create(self, request: ScheduleRequest | Mapping[str, Any]) -> Schedule:
        req = request if isinstance(request, ScheduleRequest) else _parse(request)
        timing = self.timing(req.schedule, req.timezone)
        if not timing.next_runs(time.time(), 1):
            raise InvalidRequest(
                f"The schedule {timing.expression!r} has no run left: all its times are past. "
                "Give a start in the future, or more repeats.",
                reason="invalid_schedule",
            )
        if req.pipeline_path is not None:
            limits = {"minimum_period": self.minimum_period, "starting_deadline": self.starting_deadline}
            made = await pipelined.create(self.pipelines, self.records, req, timing, self.base, **limits)
            return await self.get(made.id)
        self.jobs.check_size(req.parameters)
        ready = await self.jobs.intake.prepare(req, None)
        sweep = await self._sweep_plan(req, ready.nb) if plan.is_sweep(req) else None
        if sweep is None:
            await python_work(submission.check_parameters, ready.nb, req.parameters)
        schedule_id = uuid.uuid4().hex[:12]
        name = req.name or ready.nb_file.stem
        where = self.base / f"{jobfiles.slug(name)}-{schedule_id}"
        template, spec = self.jobs.intake.new_job(
            req, ready, name, req.parameters, where / files.RUNS / "run"
        )
        now = time.time()
        record = ScheduleRecord(
            id=schedule_id,
            name=name,
            backend=ready.backend.name,
            notebook_path=template.notebook_path,
            folder=str(where),
            expression=timing.expression,
            timezone=timing.timezone,
            overlap=req.overlap,
            active=req.active,
            kernel=template.kernel,
            environment=req.environment,
            image=req.image,
            queue=req.queue,
            parameters=req.parameters,
            resources=template.resources,
            sweep_size=len(sweep.runs) if sweep else None,
            created_at=now,
            updated_at=now,
            snapshot_at=now,
            checked_until=now,
        )
        doc = record.doc(
            minimum_period=self.minimum_period,
            starting_deadline=self.starting_deadline,
            root=str(self.jobs.root),
            template=template.model_dump(mode="json"),
            spec=spec,
            sweep=sweep,
        )
        await python_work(files.build, where, doc, ready.raw)
        try:
            await self.records.insert(record)
            if ready.backend.keeps_schedules:
                async with self.keeping.locked(record):
                    await self.keeping.arm(record, ready.backend)
        except BaseException:
            await asyncio.to_thread(remove_tree, where)
            await asyncio.shield(self._forget(schedule_id))
            raise
        return await self.get(schedule_id)

    async def _sweep_plan(self, req: ScheduleRequest, nb: Any) -> files.SweepPlan:
        """A scheduled sweep's runs, checked whole now as a sweep sent now would be."""
        planned = plan.expand(req, self.jobs.sweeps.max_runs)
        declared = await python_work(inspect_notebook, nb)
        await python_work(plan.check, declared, planned, self.jobs.max_parameters_bytes)
        name = req.name or Path(req.notebook_path or "").stem
        return files.SweepPlan(
            max_concurrent=planned.max_concurrent,
            varied=planned.varied,
            runs=[
                files.SweepRun(
                    name=plan.run_name(name, params, planned.varied),
                    label=jobfiles.slug(plan.label(params, planned.varied), 30),
                    parameters=params,
                )
                for params in planned.runs
            ],
        )

    async def _forget(self, schedule_id: str) -> None:
        with contextlib.suppress(GpuEnvError):
            await self.records.delete(schedule_id)

    # ----- reading -----

    def preview(self, expression: str, timezone: str = "UTC") -> SchedulePreview:
        """The expression checked as a schedule would be, in words, with its next three due times."""
        timing = self.timing(expression, timezone)
        return SchedulePreview(
            schedule=timing.expression,
            timezone=timing.timezone,
            description=describe(timing),
            next_runs=_upcoming(timing),
        )

    async def list(self) -> ScheduleList:
        records = await self.records.list()
        items = [await self._shown(r, LISTED_RUNS) for r in records]
        return ScheduleList(items=items, total=len(items), offset=0, limit=max(len(items), 1))

    async def name_of(self, schedule_id: str) -> str | None:
        """The schedule's name, for a message about one of its runs; None once it is deleted."""
        try:
            return (await self.records.get(schedule_id)).name
        except NotFound:
            return None

    async def get(self, schedule_id: str) -> Schedule:
        return await self._shown(await self.records.get(schedule_id), SHOWN_RUNS)

    async def _shown(self, record: ScheduleRecord, runs: int) -> Schedule:
        try:
            timing = record.timing
            description, due = describe(timing), _upcoming(timing) if record.active else []
        except (GpuEnvError, OverflowError, ValueError) as e:  # stored by an older version, or by hand:
            # shown saying so, not a 500 for the whole list
            description, due = f"Its times cannot be computed: {e}. Change its schedule or delete it.", []
        last = await asyncio.to_thread(files.read_outcomes, Path(record.folder), runs)
        states = await self.records.states([r.job_id for r in last if r.job_id])
        for gid in {r.group_id for r in last if r.group_id}:
            with contextlib.suppress(NotFound):  # a sweep whose runs were all deleted has no state
                states[gid] = (await self.store.sweeps.get(gid)).state
        for pid in {r.pipeline_id for r in last if r.pipeline_id and self.pipelines}:
            with contextlib.suppress(NotFound):
                states[pid] = (await self.pipelines.get(pid)).state  # type: ignore[union-attr]
        last = [
            r.model_copy(update={"state": states.get(r.job_id or r.group_id or r.pipeline_id or "")})
            for r in last
        ]
        return Schedule(
            **record.model_dump(include=_SHOWN_AS_KEPT),
            schedule=record.expression,
            description=description,
            next_runs=due,
            keeper=self.keeping.keeper(record),
            last_runs=last,
        )

    async def tick(self) -> None:
        """A round of the schedules' timer (the server's loop calls it): see :class:`.keeping.Keeping`."""
        await self.keeping.tick()

    # ----- changing -----

    async def update(self, schedule_id: str, patch: SchedulePatch | Mapping[str, Any]) -> Schedule:
        p = patch if isinstance(patch, SchedulePatch) else SchedulePatch.model_validate(patch)
        record = await self.records.get(schedule_id)
        self._changed_timing(record, p)  # before any wait for the lock
        async with self.keeping.locked(record):  # one change at a time, each from what the last left
            await self._update(await self.records.get(schedule_id), p)
        return await self.get(schedule_id)

    async def _update(self, record: ScheduleRecord, p: SchedulePatch) -> None:
        schedule_id = record.id
        given = p.model_dump(exclude_unset=True, exclude={"schedule", "timezone"})  # those: ``timing``
        changes: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
        timing = self._changed_timing(record, p)
        backend = self.jobs.intake.backend(record.backend)
        where = Path(record.folder)
        doc = await self.keeping.doc(record)
        if record.pipeline_path is not None and {"parameters", "resources"} & changes.keys():
            raise Conflict(
                f"Schedule '{record.name}' runs a pipeline: its parameters and resources are its file's, "
                "node by node. Change the file: the next run reads it.",
                reason="pipeline_fixed",
            )
        template = Job.model_validate(doc.template) if doc.template else None
        spec = dict(doc.spec)
        if doc.sweep is not None and "parameters" in changes:
            raise Conflict(
                f"Schedule '{record.name}' runs a sweep: its values were checked whole when it was made. "
                "Make the schedule anew with the values you want.",
                reason="sweep_parameters_fixed",
            )
        if "parameters" in changes or "resources" in changes:
            assert template is not None  # a pipeline's are refused above
            raw = await self._snapshot(record)
            params = changes.get("parameters", record.parameters)
            self.jobs.check_size(params)
            _, nb = await python_work(submission.read_notebook, Path(record.notebook_path), raw)
            await python_work(submission.check_parameters, nb, params)
            request = submission.request_of(template, params)
            if "resources" in changes:
                request = request.model_copy(update={"resources": p.resources})
            backend.validate(request)
            resources = request.resources.normalized()
            template = template.model_copy(update={"parameters": params, "resources": resources})
            spec.update(
                parameters=params,
                resources=resources.model_dump(),
                time_limit_seconds=resources.time_limit_seconds,
            )
            changes.update(parameters=params, resources=resources)
        new = await self.records.update(
            schedule_id,
            **changes,
            expression=timing.expression,
            timezone=timing.timezone,
            updated_at=time.time(),
            generation=record.generation + 1,
            checked_until=max(record.checked_until, time.time()),
        )
        doc = doc.model_copy(
            update={
                "expression": new.expression,
                "timezone": new.timezone,
                "overlap": new.overlap,
                "active": new.active,
                "generation": new.generation,
                "name": new.name,
                "template": template.model_dump(mode="json") if template else doc.template,
                "spec": spec,
            }
        )
        await self.keeping.rewrite(where, doc, new, backend)

    def _changed_timing(self, record: ScheduleRecord, p: SchedulePatch) -> Timing:
        """When it runs after the change: a 400 for what the change sends, a 409 for what is stored (an
        older version's, or a hand's)."""
        try:
            return self.timing(p.schedule or record.expression, p.timezone or record.timezone)
        except InvalidRequest as e:
            if p.schedule is not None or p.timezone is not None:
                raise
            said = f"Schedule '{record.name}': its times cannot be computed: {e}. Send its schedule anew."
            raise Conflict(said, reason="invalid_schedule") from None

    async def _snapshot(self, record: ScheduleRecord) -> bytes:
        """The notebook the schedule runs, read as untrusted (the runs' code can reach the folder)."""
        path = Path(record.folder) / jobfiles.INPUT
        try:
            raw = await asyncio.to_thread(jobfiles.read_bytes, path, submission.MAX_NOTEBOOK_BYTES)
        except jobfiles.Damaged as e:
            raise Conflict(f"Schedule '{record.name}': {e}.", reason="files_damaged") from None
        if raw is None:
            raise Conflict(
                f"Schedule '{record.name}' has lost its snapshot: take a new one.", reason="snapshot_missing"
            )
        return raw

    async def update_snapshot(self, schedule_id: str) -> Schedule:
        """Snapshot the notebook as it is now: the next runs run that."""
        record = await self.records.get(schedule_id)
        if record.pipeline_path is not None:
            raise Conflict(
                f"Schedule '{record.name}' runs its pipeline file as it is at each due time: there is no "
                "snapshot to take.",
                reason="pipeline_fixed",
            )
        nb_file = await python_work(submission.resolve_notebook, self.jobs.root, record.notebook_path)
        raw, nb = await python_work(submission.read_notebook, nb_file, None)
        await python_work(submission.check_parameters, nb, record.parameters)
        async with self.keeping.locked(record):  # a tick making a run links the snapshot whole, old or new
            await asyncio.to_thread(files.write_snapshot, Path(record.folder), raw)
            await self.records.update(schedule_id, snapshot_at=time.time(), updated_at=time.time())
        return await self.get(schedule_id)

    async def rearm(self, schedule_id: str) -> Schedule:
        """Set the schedule up again in its batch system (after an administrator cancelled its job)."""
        record = await self.records.get(schedule_id)
        backend = self.jobs.intake.backend(record.backend)
        if self.keeping.kept_by(record) is None:
            raise Conflict(f"Schedule '{record.name}' is run by this server; there is nothing to re-arm.")
        if not record.active:
            raise Conflict(
                f"Schedule '{record.name}' is paused: resume it instead.", reason="schedule_paused"
            )
        async with self.keeping.locked(record):
            await self.keeping.arm(record, backend)
        return await self.get(schedule_id)

    async def delete(self, schedule_id: str) -> None:
        """Stop the schedule where it is kept, then forget it; its runs stay, as jobs."""
        record = await self.records.get(schedule_id)
        where = Path(record.folder)
        async with self.keeping.locked(record):
            if (backend := self.keeping.kept_by(record)) is not None:
                await backend.disarm_schedule(self.keeping.plan(record, None))
            await asyncio.to_thread((where / files.DOC).unlink, True)  # a tick that starts now does nothing
            await self.records.delete(schedule_id)
        self.keeping.armed.pop(schedule_id, None)

    async def run_now(self, schedule_id: str) -> Job | JobGroup | Pipeline:
        """One run (a sweep, a pipeline) at once, outside the schedule (overlap does not apply: the user asked)."""
        record = await self.records.get(schedule_id)
        doc = await self.keeping.doc(record)
        busy = locking.timer_busy(record.name)  # made and recorded before a round could adopt it:
        async with locking.bounded(self.keeping.lock, self.keeping.locks.wait, busy):
            return await self.keeping.start(Path(record.folder), doc, time.time(), "Run now, by the user.")


def _parse(data: Mapping[str, Any]) -> ScheduleRequest:
    try:
        return ScheduleRequest.model_validate(dict(data))
    except ValidationError as e:
        raise InvalidRequest(f"Invalid schedule: {e.errors()[0]['msg']}", reason="invalid_request") from None


def _upcoming(timing: Timing) -> list[DueTime]:
    return [DueTime.of(at, timing.zone) for at in timing.next_runs(time.time(), 3)]
