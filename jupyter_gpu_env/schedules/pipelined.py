"""Scheduled pipelines: a ``*.pipeline.yaml`` run whole at a schedule's times.

The server starts each run, on every backend: a SLURM chain's tick and a CronJob's pod start one
notebook, while a pipeline's graph is compiled by :class:`...pipelines.service.PipelineService` (which
on SLURM submits every node at once, so the run goes on with no server once started). The file is read
as it is at each due time, as a pipeline sent by hand would be; one that has become invalid is
recorded as a missed run that says why.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path
from typing import Any

from ..contracts.jobfiles import slug
from ..contracts.schedules import folder as files
from ..contracts.schedules.timing import Timing
from ..errors import Conflict, GpuEnvError
from ..models.automation.pipelines import Pipeline
from ..models.automation.schedules import ScheduleRequest
from ..pipelines.service import PipelineService
from ..system.offloop import python_work
from ..system.trees import remove_tree
from .records import ScheduleRecord, ScheduleRecords

PIPELINE_KEPT = (
    "Runs only while this Jupyter server runs: the server starts each run of a pipeline; its nodes then "
    "go on in their batch system."
)


async def create(
    pipelines: PipelineService | None,
    records: ScheduleRecords,
    req: ScheduleRequest,
    timing: Timing,
    base: Path,
    **limits: Any,
) -> ScheduleRecord:
    """A scheduled pipeline made: its file checked, its folder built aside, its record inserted (``limits``:
    minimum_period and starting_deadline, as :func:`make` takes them)."""
    if pipelines is None:
        raise Conflict("Pipelines cannot be scheduled here.", reason="pipelines_unsupported")
    record, doc = await make(pipelines, req, timing, base, **limits)
    await python_work(files.build, Path(record.folder), doc, None)
    try:
        await records.insert(record)
    except BaseException:
        await asyncio.to_thread(remove_tree, Path(record.folder))
        raise
    return record


async def make(
    pipelines: PipelineService,
    req: ScheduleRequest,
    timing: Timing,
    base: Path,
    *,
    minimum_period: float,
    starting_deadline: int,
) -> tuple[ScheduleRecord, files.ScheduleDoc]:
    """The record and schedule.json of a scheduled pipeline, its file checked whole now as a pipeline
    sent now would be (nothing is made)."""
    assert req.pipeline_path is not None
    request = await pipelines.check_file(req.pipeline_path)
    schedule_id = uuid.uuid4().hex[:12]
    name = req.name or request.name
    now = time.time()
    backend = request.nodes[0].backend
    record = ScheduleRecord(
        id=schedule_id,
        name=name,
        backend=backend,
        notebook_path=req.pipeline_path,
        pipeline_path=req.pipeline_path,
        folder=str(base / f"{slug(name)}-{schedule_id}"),
        expression=timing.expression,
        timezone=timing.timezone,
        overlap=req.overlap,
        active=req.active,
        created_at=now,
        updated_at=now,
        snapshot_at=now,
        checked_until=now,
    )
    doc = record.doc(
        minimum_period=minimum_period,
        starting_deadline=starting_deadline,
        root=str(pipelines.jobs.root),
        pipeline_path=req.pipeline_path,
    )
    return record, doc


async def start(
    pipelines: PipelineService, where: Path, doc: files.ScheduleDoc, due: float, message: str = ""
) -> Pipeline:
    """The pipeline due at ``due``, sent as its file now says; recorded started, or missed saying why."""
    assert doc.pipeline_path is not None
    try:
        made = await pipelines.submit_file(doc.pipeline_path, schedule_id=doc.id)
    except GpuEnvError as e:
        await asyncio.to_thread(
            files.record_outcome, where, due, "missed", None, f"The pipeline could not be sent: {e}"
        )
        raise
    await asyncio.to_thread(files.record_outcome, where, due, "started", None, message, None, made.id)
    return made
