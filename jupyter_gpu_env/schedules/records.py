"""Schedules in the job store (:mod:`..jobs.store`), on its database: what the server knows of each.

The schedule's folder holds what the cluster needs to run it without us (``schedule.json``); this
record holds what the server shows and acts on, and how far the server's own timer has looked.
"""

from __future__ import annotations

import builtins
import sqlite3
import time
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from ..contracts.database import Records, Step, transaction
from ..contracts.schedules.folder import ScheduleDoc
from ..contracts.schedules.timing import Timing, parse
from ..errors import Conflict, NotFound
from ..models.resources import JobResources

PART = "schedules"
# The schedules' table (the runs are found by schedule in the jobs' own `schedule_id` column).
MIGRATIONS: tuple[Step, ...] = (
    Step(
        [
            """CREATE TABLE IF NOT EXISTS schedules (
                id TEXT PRIMARY KEY,
                created_at REAL NOT NULL,
                deleted_at REAL,
                data TEXT NOT NULL
            )""",
        ],
        legacy=5,
    ),
)


class ScheduleRecord(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str
    name: str
    backend: str
    notebook_path: str
    folder: str = Field(description="The schedule's folder, absolute.")
    expression: str
    timezone: str
    overlap: Literal["skip", "allow"] = "skip"
    active: bool = True
    kernel: str | None = None
    environment: str | None = None
    image: str | None = None
    queue: str | None = None
    parameters: dict[str, JsonValue] = Field(default_factory=dict)
    resources: JobResources = Field(default_factory=JobResources)
    sweep_size: int | None = None
    pipeline_path: str | None = None
    created_at: float
    updated_at: float
    snapshot_at: float
    generation: int = 0
    checked_until: float = Field(description="The server's timer has dealt with every due time up to here.")

    @property
    def timing(self) -> Timing:
        """Its expression read (at no site minimum: that was checked when it was made), once for every
        record that holds it; raises :class:`InvalidRequest` for one stored by an older version, or by
        hand, that cannot be read."""
        return _timing(self.expression, self.timezone)

    def doc(self, *, minimum_period: float, starting_deadline: int, root: str, **what: Any) -> ScheduleDoc:
        """``schedule.json`` from this record and the server's limits; ``what``: a template, spec and
        sweep, or a pipeline. The fields both shapes hold are copied by name, not one by one."""
        shared = self.model_dump(include=_SHARED_WITH_DOC)
        return ScheduleDoc(
            **shared,
            minimum_period=minimum_period,
            starting_deadline_seconds=starting_deadline,
            root=root,
            **what,
        )


@lru_cache(maxsize=1024)
def _timing(expression: str, timezone: str) -> Timing:
    return parse(expression, timezone, minimum_period=0)


# What a record and schedule.json both hold (the rest of the document is the run's, or the server's limits).
_SHARED_WITH_DOC = {"id", "name", "backend", "expression", "timezone", "overlap", "active"}


class ScheduleRecords(Records):
    """:attr:`.store.JobStore.schedules`."""

    part = PART
    steps = MIGRATIONS

    async def insert(self, record: ScheduleRecord) -> None:
        def run() -> None:
            db = self._conn()
            try:
                with transaction(db):
                    db.execute(
                        "INSERT INTO schedules (id, created_at, data) VALUES (?, ?, ?)",
                        (record.id, record.created_at, record.model_dump_json()),
                    )
            except sqlite3.IntegrityError as e:
                raise Conflict(f"A schedule with id '{record.id}' exists.", reason="schedule_exists") from e

        await self._call(run)

    async def get(self, schedule_id: str) -> ScheduleRecord:
        def run() -> ScheduleRecord:
            row = (
                self._conn()
                .execute("SELECT data FROM schedules WHERE id = ? AND deleted_at IS NULL", (schedule_id,))
                .fetchone()
            )
            if row is None:
                raise NotFound(f"No schedule with id '{schedule_id}'.", reason="schedule_not_found")
            return ScheduleRecord.model_validate_json(row[0])

        return await self._call(run)

    async def list(self) -> builtins.list[ScheduleRecord]:
        """Every schedule, newest first."""

        def run() -> list[ScheduleRecord]:
            rows = (
                self._conn()
                .execute(
                    "SELECT data FROM schedules WHERE deleted_at IS NULL ORDER BY created_at DESC, id DESC"
                )
                .fetchall()
            )
            return [ScheduleRecord.model_validate_json(r[0]) for r in rows]

        return await self._call(run)

    async def update(self, schedule_id: str, **changes: Any) -> ScheduleRecord:
        def run() -> ScheduleRecord:
            db = self._conn()
            with transaction(db, immediate=True):
                row = db.execute(
                    "SELECT data FROM schedules WHERE id = ? AND deleted_at IS NULL", (schedule_id,)
                ).fetchone()
                if row is None:
                    raise NotFound(f"No schedule with id '{schedule_id}'.", reason="schedule_not_found")
                old = ScheduleRecord.model_validate_json(row[0])
                new = ScheduleRecord.model_validate({**old.model_dump(), **changes})
                db.execute("UPDATE schedules SET data = ? WHERE id = ?", (new.model_dump_json(), schedule_id))
            return new

        return await self._call(run)

    async def delete(self, schedule_id: str) -> None:
        """Hide the record; its runs' records stay, as jobs."""

        def run() -> None:
            cur = self._conn().execute(
                "UPDATE schedules SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL",
                (time.time(), schedule_id),
            )
            if cur.rowcount == 0:
                raise NotFound(f"No schedule with id '{schedule_id}'.", reason="schedule_not_found")

        await self._call(run)

    async def known_runs(self, schedule_id: str) -> set[str]:
        """The ids of the runs of this schedule the store has (deleted ones included: never adopted again)."""

        def run() -> set[str]:
            rows = (
                self._conn().execute("SELECT id FROM jobs WHERE schedule_id = ?", (schedule_id,)).fetchall()
            )
            return {r[0] for r in rows}

        return await self._call(run)

    async def states(self, job_ids: builtins.list[str]) -> dict[str, str]:
        """The state of each of these jobs the store has."""
        if not job_ids:
            return {}

        def run() -> dict[str, str]:
            marks = ",".join("?" * len(job_ids))
            rows = (
                self._conn().execute(f"SELECT id, state FROM jobs WHERE id IN ({marks})", job_ids).fetchall()
            )
            return {r[0]: r[1] for r in rows}

        return await self._call(run)

    async def active_runs(self, schedule_id: str) -> builtins.list[str]:
        def run() -> list[str]:
            rows = (
                self._conn()
                .execute(
                    "SELECT id FROM jobs WHERE schedule_id = ? AND state IN ('queued', 'running')",
                    (schedule_id,),
                )
                .fetchall()
            )
            return [r[0] for r in rows]

        return await self._call(run)
