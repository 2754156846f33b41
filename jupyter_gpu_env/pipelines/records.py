"""Pipelines in the job store (:mod:`..jobs.store`), on its database: each pipeline's record (what was
asked of each node, and which jobs are its current ones) beside the jobs it made, which carry its id."""

from __future__ import annotations

import builtins
import sqlite3
import time
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..contracts.database import Records, Step, transaction
from ..errors import Conflict, NotFound
from ..jobs.sql import VISIBLE, insert_records
from ..models.jobs import Job
from ..models.sweeps import JobGroup

PART = "pipelines"
# The pipelines' table (their nodes' jobs are found by the jobs' own `pipeline_id` column).
MIGRATIONS: tuple[Step, ...] = (
    Step(
        [
            """CREATE TABLE IF NOT EXISTS pipelines (
                id TEXT PRIMARY KEY,
                created_at REAL NOT NULL,
                deleted_at REAL,
                data TEXT NOT NULL
            )""",
        ],
        legacy=6,
    ),
)


class NodeRecord(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str
    kind: Literal["job", "sweep", "external"]
    after: list[str] = Field(default_factory=list)
    when: Literal["succeeded", "failed", "always"] = "succeeded"
    request: dict[str, Any] = Field(
        default_factory=dict, description="What was asked (a PipelineNodeRequest's JSON): what a rerun sends."
    )
    job_id: str | None = None  # a job node's current job, or the external job
    group_id: str | None = None  # a sweep node's current sweep
    attempts: int = 1


class PipelineRecord(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str
    name: str
    folder: str = Field(description="The pipeline's folder, absolute.")
    created_at: float
    cancelled_at: float | None = None
    file_path: str | None = None
    schedule_id: str | None = None
    notify: dict[str, Any] | None = None
    nodes: list[NodeRecord]


class PipelineRecords(Records):
    """:attr:`.store.JobStore.pipelines`."""

    part = PART
    steps = MIGRATIONS

    async def insert(self, record: PipelineRecord, jobs: Sequence[Job], groups: Sequence[JobGroup]) -> None:
        """The pipeline, its sweeps and every job it made, in one transaction: all or none."""

        def run() -> None:
            db = self._conn()
            try:
                with transaction(db):
                    db.execute(
                        "INSERT INTO pipelines (id, created_at, data) VALUES (?, ?, ?)",
                        (record.id, record.created_at, record.model_dump_json()),
                    )
                    insert_records(db, jobs, groups)
            except sqlite3.IntegrityError as e:
                raise Conflict(
                    f"A pipeline, job or sweep id is already taken: {e}", reason="job_exists"
                ) from e

        await self._call(run)

    async def replace_nodes(
        self, record: PipelineRecord, jobs: Sequence[Job], groups: Sequence[JobGroup]
    ) -> None:
        """A rerun: the record as it now is and the new jobs and sweeps of the nodes run again, at once."""

        def run() -> None:
            db = self._conn()
            with transaction(db):
                db.execute(
                    "UPDATE pipelines SET data = ? WHERE id = ? AND deleted_at IS NULL",
                    (record.model_dump_json(), record.id),
                )
                insert_records(db, jobs, groups)

        await self._call(run)

    async def get(self, pipeline_id: str) -> PipelineRecord:
        def fetch() -> PipelineRecord:
            found = (
                self._conn()
                .execute("SELECT data FROM pipelines WHERE id = ? AND deleted_at IS NULL", (pipeline_id,))
                .fetchone()
            )
            if found is None:
                raise NotFound(f"No pipeline with id '{pipeline_id}'.", reason="pipeline_not_found")
            return PipelineRecord.model_validate_json(found[0])

        return await self._call(fetch)

    async def update(self, record: PipelineRecord) -> None:
        def run() -> None:
            self._conn().execute(
                "UPDATE pipelines SET data = ? WHERE id = ? AND deleted_at IS NULL",
                (record.model_dump_json(), record.id),
            )

        await self._call(run)

    async def page(self, limit: int, offset: int) -> tuple[builtins.list[PipelineRecord], int]:
        """Newest first, with how many there are."""

        def fetch() -> tuple[list[PipelineRecord], int]:
            db = self._conn()
            with transaction(db):
                total = db.execute("SELECT COUNT(*) FROM pipelines WHERE deleted_at IS NULL").fetchone()[0]
                rows = db.execute(
                    "SELECT data FROM pipelines WHERE deleted_at IS NULL "
                    "ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
                    (limit, offset),
                ).fetchall()
            return [PipelineRecord.model_validate_json(r[0]) for r in rows], total

        return await self._call(fetch)

    async def open_ids(self) -> builtins.list[str]:
        """Pipelines with a job not ended yet (held, queued or running): those that may move on."""

        def fetch() -> list[str]:
            rows = (
                self._conn()
                .execute(
                    "SELECT DISTINCT pipeline_id FROM jobs WHERE pipeline_id IS NOT NULL "
                    f"AND state IN ('queued', 'running') AND {VISIBLE}"
                )
                .fetchall()
            )
            return [r[0] for r in rows]

        return await self._call(fetch)

    async def jobs(self, pipeline_id: str) -> dict[str, Job]:
        """Every job the pipeline made (of every attempt), by id."""

        def fetch() -> dict[str, Job]:
            rows = (
                self._conn()
                .execute(f"SELECT data FROM jobs WHERE pipeline_id = ? AND {VISIBLE}", (pipeline_id,))
                .fetchall()
            )
            jobs = (Job.model_validate_json(r[0]) for r in rows)
            return {j.id: j for j in jobs}

        return await self._call(fetch)

    async def delete(self, pipeline_id: str) -> None:
        def run() -> None:
            db = self._conn()
            with transaction(db):
                now = time.time()
                db.execute("UPDATE pipelines SET deleted_at = ? WHERE id = ?", (now, pipeline_id))
                db.execute(
                    f"UPDATE jobs SET deleted_at = ? WHERE pipeline_id = ? AND {VISIBLE}", (now, pipeline_id)
                )

        await self._call(run)
