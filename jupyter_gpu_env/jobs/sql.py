"""The jobs' part of the server's database (:mod:`..contracts.database`): the jobs' and sweeps' tables and
their migrations, and the SQL pieces the jobs' and the sweeps' records share (a record's row, the
insert). Features built on jobs keep their own tables beside these, with their own migrations.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from ..contracts.database import Step
from ..models.jobs import Job
from ..models.sweeps import JobGroup

PART = "jobs"
NOTEBOOK_OF = "json_extract(data, '$.notebook_path')"  # the index's expression, as queries write it

# The jobs' and sweeps' tables, step by step; `legacy`: the one-sequence version each step was.
MIGRATIONS: tuple[Step, ...] = (
    Step(
        [
            """CREATE TABLE IF NOT EXISTS jobs (
                id TEXT PRIMARY KEY,
                created_at REAL NOT NULL,
                state TEXT NOT NULL,
                backend TEXT NOT NULL,
                started_at REAL,
                finished_at REAL,
                gpu_units REAL NOT NULL DEFAULT 0,
                cpus REAL NOT NULL DEFAULT 1,
                data TEXT NOT NULL
            )""",
            "CREATE INDEX IF NOT EXISTS jobs_created ON jobs (created_at DESC, id DESC)",
            "CREATE INDEX IF NOT EXISTS jobs_state_created ON jobs (state, created_at DESC, id DESC)",
            "CREATE INDEX IF NOT EXISTS jobs_backend_state ON jobs (backend, state)",
            "CREATE INDEX IF NOT EXISTS jobs_started ON jobs (started_at)",
        ],
        legacy=1,
    ),
    Step(
        [
            "ALTER TABLE jobs ADD COLUMN deleted_at REAL",
        ],
        legacy=2,
    ),
    Step(
        [
            "ALTER TABLE jobs ADD COLUMN group_id TEXT",
            "CREATE INDEX IF NOT EXISTS jobs_group ON jobs (group_id, state)",
            """CREATE TABLE IF NOT EXISTS job_groups (
                id TEXT PRIMARY KEY,
                created_at REAL NOT NULL,
                deleted_at REAL,
                data TEXT NOT NULL
            )""",
        ],
        legacy=3,
    ),
    # A listing counts the visible jobs and reads a page of them newest first, both from this index
    # (without it the count read every row, its JSON included: 4 ms a listing at 10,000 jobs).
    Step(
        [
            "CREATE INDEX IF NOT EXISTS jobs_visible_created ON jobs (deleted_at, created_at DESC, id DESC)",
        ],
        legacy=4,
    ),
    Step(
        [
            "ALTER TABLE jobs ADD COLUMN schedule_id TEXT",
            "CREATE INDEX IF NOT EXISTS jobs_schedule ON jobs (schedule_id, created_at DESC)",
        ],
        legacy=5,
    ),
    Step(
        [
            "ALTER TABLE jobs ADD COLUMN pipeline_id TEXT",
            "ALTER TABLE jobs ADD COLUMN held INTEGER NOT NULL DEFAULT 0",
            "CREATE INDEX IF NOT EXISTS jobs_pipeline ON jobs (pipeline_id, state)",
        ],
        legacy=6,
    ),
    # Right-size advice reads a notebook's latest runs: found by the notebook, not by reading every row.
    Step(
        [
            f"CREATE INDEX IF NOT EXISTS jobs_notebook ON jobs ({NOTEBOOK_OF}, created_at DESC)",
        ],
        legacy=8,
    ),
)


VISIBLE = "deleted_at IS NULL"
COLUMNS = (
    "id, created_at, state, backend, started_at, finished_at, gpu_units, cpus, data, group_id, schedule_id, "
    "pipeline_id, held"
)
INSERT = f"INSERT INTO jobs ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"


def insert_records(db: sqlite3.Connection, jobs: Sequence[Job], sweeps: Sequence[JobGroup] = ()) -> None:
    """New jobs' records and sweeps', in the caller's transaction: a sweep with its runs, a pipeline's
    sweeps and jobs, retried runs."""
    for sweep in sweeps:
        db.execute(
            "INSERT INTO job_groups (id, created_at, data) VALUES (?, ?, ?)",
            (sweep.id, sweep.created_at, sweep.model_dump_json()),
        )
    db.executemany(INSERT, [row(j) for j in jobs])


def dump(changes: dict[str, Any]) -> dict[str, Any]:
    return {k: v.model_dump() if hasattr(v, "model_dump") else v for k, v in changes.items()}


def row(job: Job) -> tuple[Any, ...]:
    return (
        job.id,
        job.created_at,
        job.state,
        job.backend,
        job.started_at,
        job.finished_at,
        job.resources.gpu_units(),
        float(job.resources.cpus or 1),  # a job without a CPU request still holds at least one core
        job.model_dump_json(),
        job.group_id,
        job.schedule_id,
        job.pipeline_id,
        1 if job.waiting_for else 0,
    )
