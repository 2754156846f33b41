"""A schedule's folder: the contract between the server, the SLURM chain's tick and a CronJob's pod.

``schedule.json`` says what runs and when (written by the server only, replaced whole), ``input.ipynb``
is the notebook's snapshot, ``runs/`` holds one job folder per run with its own ``record.json`` (the
record the server adopts) and ``runs.jsonl`` says what became of each due time (started, skipped,
missed). Whoever starts a run or changes the waiting job holds the schedule's lock, so two never race:
it is kept beside this folder, not in it (:mod:`.locking` says why).

What a run's notebook writes can reach this folder (the same user's files): the server reads
everything here through :mod:`..jobfiles`' bounded readers into models with ranges.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ...errors import FileRefused
from ...models.automation.schedules import RunOutcome, ScheduleRun
from ...models.jobs import Job
from ...models.sweeps import JobGroup
from ...system.atomic import write_atomic, write_json_atomic
from ...system.untrusted import append_regular_file, open_regular_file
from .. import jobfiles

DOC = "schedule.json"
RUNS = "runs"
OUTCOMES = "runs.jsonl"
RECORD = "record.json"
SWEEP = "sweep.json"  # a scheduled sweep's record, in its folder under runs/
MAX_SWEEP = 100_000  # runs of one scheduled sweep a reader believes
MAX_DOC = 1 << 20
MAX_OUTCOMES_READ = 256 << 10  # the tail of runs.jsonl a reader looks at
_EPOCH = Field(ge=1e9, le=1e10)


class ScheduleDoc(BaseModel):
    """``schedule.json``."""

    model_config = ConfigDict(extra="ignore")

    format: Literal[1] = 1
    id: Annotated[str, Field(pattern=r"^[0-9a-f]{12}$")]
    name: Annotated[str, Field(max_length=200)]
    backend: Annotated[str, Field(max_length=64)]
    expression: Annotated[str, Field(max_length=200)]
    timezone: Annotated[str, Field(max_length=64)]
    overlap: Literal["skip", "allow"] = "skip"
    active: bool = True
    generation: int = Field(default=0, ge=0)
    minimum_period: float = Field(default=60.0, ge=0)
    starting_deadline_seconds: int = Field(default=300, ge=0)
    root: str = Field(description="The server's root: paths in records are shown relative to it.")
    template: dict[str, Any] = Field(
        default_factory=dict, description="A run's record, but for its id, name, folder and times."
    )
    spec: dict[str, Any] = Field(
        default_factory=dict, description="A run's job.json, but for its id and output name."
    )
    pipeline_path: Annotated[str, Field(max_length=4096)] | None = Field(
        default=None, description="A scheduled pipeline: its file, run whole (the server starts it)."
    )
    backend_settings: dict[str, Any] = Field(
        default_factory=dict, description="What the backend's own tick needs (SLURM: sbatch options)."
    )
    sweep: SweepPlan | None = Field(default=None, description="Each due time runs this sweep.")


class SweepRun(BaseModel):
    name: Annotated[str, Field(max_length=400)]
    label: Annotated[str, Field(max_length=200)]
    parameters: dict[str, Any]


class SweepPlan(BaseModel):
    """A scheduled sweep's runs, expanded and checked when the schedule was made."""

    max_concurrent: int = Field(ge=1)
    varied: list[str]
    runs: list[SweepRun] = Field(min_length=1)


class Outcome(BaseModel):
    """A line of ``runs.jsonl``."""

    model_config = ConfigDict(extra="ignore")

    due_at: Annotated[float, _EPOCH]
    outcome: RunOutcome
    job_id: Annotated[str, Field(pattern=r"^[0-9a-f]{12}$")] | None = None
    group_id: Annotated[str, Field(pattern=r"^[0-9a-f]{12}$")] | None = None
    pipeline_id: Annotated[str, Field(pattern=r"^[0-9a-f]{12}$")] | None = None
    message: Annotated[str, Field(max_length=2000)] = ""
    at: Annotated[float, _EPOCH]


def write_doc(folder: Path, doc: ScheduleDoc) -> None:
    write_json_atomic(folder / DOC, doc.model_dump(mode="json"), durable=True)


def read_doc(folder: Path) -> ScheduleDoc | None:
    """The schedule's document; None when it is gone (deleted); :class:`jobfiles.Damaged` when unbelievable."""
    return jobfiles.read_model(folder / DOC, ScheduleDoc, MAX_DOC)


def write_snapshot(folder: Path, raw: bytes) -> None:
    """Replace the snapshot whole: runs made before keep theirs (a hard link to the old file)."""
    write_atomic(folder / jobfiles.INPUT, raw, durable=True)


def build(folder: Path, doc: ScheduleDoc, raw: bytes | None) -> None:
    """The schedule's folder made aside and renamed into place: never one without its document (a
    scheduled pipeline's has no snapshot: ``raw`` None)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = folder.with_name(f".tmp-{folder.name}")
    tmp.mkdir()
    try:
        (tmp / RUNS).mkdir()
        if raw is not None:
            write_snapshot(tmp, raw)
        write_doc(tmp, doc)
        tmp.rename(folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def shown(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _stamp(due_at: float) -> str:
    return time.strftime("%Y%m%d-%H%M", time.gmtime(due_at))


def _run_of(
    doc: ScheduleDoc,
    run: Path,
    job_id: str,
    name: str,
    parameters: dict[str, Any],
    output: str,
    now: float,
    **extra: Any,
) -> tuple[Job, dict[str, Any]]:
    """A run's queued record and its job.json, in ``run``."""
    where = shown(Path(doc.root), run)
    job = Job.model_validate(
        {
            **doc.template,
            "id": job_id,
            "name": name,
            "state": "queued",
            "message": "Waiting to start.",
            "job_dir": where,
            "input_path": f"{where}/{jobfiles.INPUT}",
            "output_path": f"{where}/{output}",
            "log_path": f"{where}/{jobfiles.LOG}",
            "parameters": parameters,
            "created_at": now,
            "schedule_id": doc.id,
            "group_id": None,
            "group_index": None,
            "attempts": [],
            "checkpoint_dir": f"{where}/{jobfiles.CHECKPOINT}",
            **extra,
        }
    )
    return job, {**doc.spec, "id": job_id, "name": name, "output": output, "parameters": parameters}


def _fill(folder: Path, run: Path, job: Job, spec: dict[str, Any]) -> None:
    run.mkdir()
    try:
        (run / jobfiles.INPUT).hardlink_to(folder / jobfiles.INPUT)  # the runner never writes it
    except OSError:
        shutil.copyfile(folder / jobfiles.INPUT, run / jobfiles.INPUT)
    write_json_atomic(run / jobfiles.JOB_JSON, spec)
    write_record(run, job)


def new_run(folder: Path, doc: ScheduleDoc, due_at: float, *, now: float | None = None) -> tuple[Job, Path]:
    """A run's folder under ``runs/`` (snapshot, job.json, record.json) made aside and renamed into
    place, its record queued; the caller submits it and records the outcome."""
    now = time.time() if now is None else now
    job_id = uuid.uuid4().hex[:12]
    stamp = _stamp(due_at)
    run = folder / RUNS / f"{stamp}-{job_id}"
    output = f"{jobfiles.OUTPUT.removesuffix('.ipynb')}-{stamp}.ipynb"
    job, spec = _run_of(doc, run, job_id, doc.name, dict(doc.template.get("parameters") or {}), output, now)
    tmp = run.with_name(f".tmp-{run.name}")
    try:
        _fill(folder, tmp, job, spec)
        tmp.rename(run)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return job, run


def new_sweep(folder: Path, doc: ScheduleDoc, due_at: float) -> tuple[JobGroup, list[Job], Path]:
    """A scheduled sweep's folder under ``runs/`` (a folder per run, as :func:`new_run` makes one, and
    ``sweep.json``, its record), made aside and renamed into place whole."""
    assert doc.sweep is not None
    now = time.time()
    sweep_id = uuid.uuid4().hex[:12]
    base = folder / RUNS / f"{_stamp(due_at)}-sweep-{sweep_id}"
    tmp = base.with_name(f".tmp-{base.name}")
    tmp.mkdir()
    jobs: list[Job] = []
    try:
        for i, planned in enumerate(doc.sweep.runs):
            job_id = uuid.uuid4().hex[:12]
            run = f"{i:04d}-{planned.label}"[:80]
            output = f"{jobfiles.OUTPUT.removesuffix('.ipynb')}-{i:04d}.ipynb"
            job, spec = _run_of(
                doc,
                base / run,
                job_id,
                planned.name,
                planned.parameters,
                output,
                now,
                group_id=sweep_id,
                group_index=i,
            )
            spec["group"] = {"id": sweep_id, "index": i, "max_concurrent": doc.sweep.max_concurrent}
            _fill(folder, tmp / run, job, spec)
            jobs.append(job)
        sweep = JobGroup(
            id=sweep_id,
            name=doc.name,
            backend=doc.backend,
            notebook_path=str(doc.template.get("notebook_path") or ""),
            size=len(jobs),
            max_concurrent=doc.sweep.max_concurrent,
            varied=doc.sweep.varied,
            parameters=dict(doc.template.get("parameters") or {}),
            counts={"queued": len(jobs)},
            state="queued",
            created_at=now,
            schedule_id=doc.id,
        )
        write_json_atomic(tmp / SWEEP, sweep.model_dump(mode="json"), durable=True)
        tmp.rename(base)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return sweep, jobs, base


def read_sweep(base: Path) -> JobGroup | None:
    """A scheduled sweep's record as its maker wrote it; :class:`jobfiles.Damaged` when unbelievable."""
    return jobfiles.read_model(base / SWEEP, JobGroup, jobfiles.MAX_SMALL * 16)


def write_record(run: Path, job: Job) -> None:
    write_json_atomic(run / RECORD, job.model_dump(mode="json"), durable=True)


def read_record(run: Path) -> Job | None:
    """A run's record as its maker wrote it; :class:`jobfiles.Damaged` when unbelievable."""
    return jobfiles.read_model(run / RECORD, Job, jobfiles.MAX_JSON)


def run_names(folder: Path) -> list[str]:
    """The runs' folder names (made whole: a temporary is not one yet)."""
    try:
        with os.scandir(folder / RUNS) as entries:
            return sorted(
                e.name for e in entries if not e.name.startswith(".") and e.is_dir(follow_symlinks=False)
            )
    except (FileNotFoundError, NotADirectoryError):
        return []


def sweep_runs(base: Path) -> list[Path]:
    """A scheduled sweep's run folders, in their order."""
    with os.scandir(base) as entries:
        return sorted(
            base / e.name for e in entries if not e.name.startswith(".") and e.is_dir(follow_symlinks=False)
        )


def record_outcome(
    folder: Path,
    due_at: float,
    outcome: RunOutcome,
    job_id: str | None = None,
    message: str = "",
    group_id: str | None = None,
    pipeline_id: str | None = None,
) -> None:
    """Append what became of ``due_at``: one write of one line, so concurrent writers never interleave."""
    line = Outcome(
        due_at=due_at,
        outcome=outcome,
        job_id=job_id,
        group_id=group_id,
        pipeline_id=pipeline_id,
        message=message[:2000],
        at=time.time(),
    )
    append_regular_file(folder / OUTCOMES, (line.model_dump_json() + "\n").encode(), name=OUTCOMES)


def read_outcomes(folder: Path, limit: int = 50) -> list[ScheduleRun]:
    """The latest ``limit`` outcomes, newest first, from the file's last MAX_OUTCOMES_READ bytes; lines
    that cannot be believed are passed over."""
    try:
        with open_regular_file(folder / OUTCOMES, name=OUTCOMES) as f:
            size = os.fstat(f.fileno()).st_size
            f.seek(max(0, size - MAX_OUTCOMES_READ))
            raw = f.read(MAX_OUTCOMES_READ)
    except (FileRefused, OSError):
        return []
    lines = raw.splitlines()
    if size > MAX_OUTCOMES_READ and lines:
        lines = lines[1:]  # the first may be the end of a line cut
    found: list[ScheduleRun] = []
    for text in reversed(lines):
        try:
            o = Outcome.model_validate(json.loads(text))
        except (ValueError, ValidationError, RecursionError):
            continue
        found.append(
            ScheduleRun(
                due_at=o.due_at,
                outcome=o.outcome,
                job_id=o.job_id,
                group_id=o.group_id,
                pipeline_id=o.pipeline_id,
                message=o.message,
            )
        )
        if len(found) >= limit:
            break
    return found


ScheduleDoc.model_rebuild()
