"""The job store's SQL pieces shared by its modules: a record's row, the insert, transactions."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from typing import Any

from ..models.jobs import Job

VISIBLE = "deleted_at IS NULL"
COLUMNS = "id, created_at, state, backend, started_at, finished_at, gpu_units, cpus, data, group_id"
INSERT = f"INSERT INTO jobs ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"


@contextlib.contextmanager
def transaction(db: sqlite3.Connection, *, immediate: bool = False) -> Iterator[None]:
    db.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


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
    )
