"""Dask clusters in the job store (:mod:`..jobs.store`), on its database: each cluster's record, and
its workers' spans, the usage ledger's rows for the worker- and GPU-hours no job record holds."""

from __future__ import annotations

import builtins
import sqlite3
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..contracts.database import Records, Step, transaction
from ..errors import Conflict, NotFound
from ..models.resources import JobResources

PART = "dask"
# Dask clusters, and their workers' time: the usage ledger's rows for what no job record holds.
MIGRATIONS: tuple[Step, ...] = (
    Step(
        [
            """CREATE TABLE IF NOT EXISTS dask_clusters (
                id TEXT PRIMARY KEY,
                created_at REAL NOT NULL,
                active INTEGER NOT NULL DEFAULT 1,
                data TEXT NOT NULL
            )""",
            "CREATE INDEX IF NOT EXISTS dask_clusters_active ON dask_clusters (active, created_at DESC)",
            """CREATE TABLE IF NOT EXISTS dask_workers (
                cluster_id TEXT NOT NULL,
                worker TEXT NOT NULL,
                started_at REAL NOT NULL,
                finished_at REAL,
                backend TEXT NOT NULL,
                cluster_name TEXT NOT NULL,
                gpu_units REAL NOT NULL DEFAULT 0,
                cpus REAL NOT NULL DEFAULT 1,
                PRIMARY KEY (cluster_id, worker, started_at)
            )""",
            "CREATE INDEX IF NOT EXISTS dask_workers_started ON dask_workers (started_at)",
        ],
        legacy=7,
    ),
)

FINAL = frozenset({"stopped", "failed"})


class ClusterRecord(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str
    name: str
    backend: str
    folder: str = Field(description="The cluster's folder, absolute.")
    handle: str | None = Field(default=None, description="The scheduler's id in its backend.")
    created_at: float
    started_at: float | None = None
    ended_at: float | None = None
    state: Literal["starting", "running", "stopping", "stopped", "failed"] = "starting"
    message: str = ""
    environment: str | None = None
    kernel: str | None = None
    image: str | None = None
    queue: str | None = None
    resources: JobResources
    threads_per_worker: int
    walltime_seconds: int
    lifetime_seconds: int
    idle_timeout_seconds: int
    workers: int | None = None
    adapt: dict[str, int] | None = None
    together: int = Field(default=0, description="Workers started in the scheduler's allocation.")
    layout: Literal["one_allocation", "separate_jobs", "processes"] = Field(
        default="separate_jobs", description="How it was started (DaskCluster.layout)."
    )
    generation: int = 0
    worker_seconds: float = 0.0
    started_total: int = 0
    request: dict[str, Any] = Field(default_factory=dict, description="What was asked, as sent.")
    tls: bool = Field(default=False, description="Its folder holds its TLS credentials (every new cluster).")
    connect_module: bool = Field(
        default=False, description="Its environment has jupyter-gpu-env, so `connect(id)` works there."
    )

    @property
    def final(self) -> bool:
        return self.state in FINAL


class WorkerSpan(BaseModel):
    worker: str
    started_at: float
    finished_at: float | None


class DaskRecords(Records):
    """:attr:`.store.JobStore.dask`."""

    part = PART
    steps = MIGRATIONS

    async def insert(self, record: ClusterRecord) -> None:
        def run() -> None:
            try:
                self._conn().execute(
                    "INSERT INTO dask_clusters (id, created_at, active, data) VALUES (?, ?, 1, ?)",
                    (record.id, record.created_at, record.model_dump_json()),
                )
            except sqlite3.IntegrityError as e:
                raise Conflict(
                    f"A Dask cluster with id '{record.id}' exists.", reason="cluster_exists"
                ) from e

        await self._call(run)

    async def update(self, record: ClusterRecord) -> None:
        def run() -> None:
            self._conn().execute(
                "UPDATE dask_clusters SET data = ?, active = ? WHERE id = ?",
                (record.model_dump_json(), 0 if record.final else 1, record.id),
            )

        await self._call(run)

    async def get(self, cluster_id: str) -> ClusterRecord:
        def fetch() -> ClusterRecord:
            found = (
                self._conn().execute("SELECT data FROM dask_clusters WHERE id = ?", (cluster_id,)).fetchone()
            )
            if found is None:
                raise NotFound(f"No Dask cluster with id '{cluster_id}'.", reason="cluster_not_found")
            return ClusterRecord.model_validate_json(found[0])

        return await self._call(fetch)

    async def page(self, limit: int, offset: int) -> tuple[builtins.list[ClusterRecord], int]:
        """Active ones first, then newest first, with how many there are."""

        def fetch() -> tuple[list[ClusterRecord], int]:
            db = self._conn()
            with transaction(db):
                total = db.execute("SELECT COUNT(*) FROM dask_clusters").fetchone()[0]
                rows = db.execute(
                    "SELECT data FROM dask_clusters ORDER BY active DESC, created_at DESC, id DESC "
                    "LIMIT ? OFFSET ?",
                    (limit, offset),
                ).fetchall()
            return [ClusterRecord.model_validate_json(r[0]) for r in rows], total

        return await self._call(fetch)

    async def active(self) -> builtins.list[ClusterRecord]:
        def fetch() -> list[ClusterRecord]:
            rows = self._conn().execute("SELECT data FROM dask_clusters WHERE active = 1").fetchall()
            return [ClusterRecord.model_validate_json(r[0]) for r in rows]

        return await self._call(fetch)

    async def record_spans(
        self, record: ClusterRecord, spans: Sequence[WorkerSpan], gpu_units: float
    ) -> None:
        """The workers' spans as the keeper last reported them: new ones added, ended ones closed."""

        def run() -> None:
            db = self._conn()
            with transaction(db):
                db.executemany(
                    "INSERT INTO dask_workers (cluster_id, worker, started_at, finished_at, backend, "
                    "cluster_name, gpu_units, cpus) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (cluster_id, worker, started_at) DO UPDATE SET finished_at = "
                    "excluded.finished_at WHERE dask_workers.finished_at IS NULL",
                    [
                        (
                            record.id,
                            s.worker,
                            s.started_at,
                            s.finished_at,
                            record.backend,
                            record.name,
                            gpu_units,
                            float(record.resources.cpus or record.threads_per_worker),
                        )
                        for s in spans
                    ],
                )

        await self._call(run)

    async def close_spans(self, cluster_id: str, at: float) -> None:
        """A cluster that ended: its workers ended then at the latest."""

        def run() -> None:
            self._conn().execute(
                "UPDATE dask_workers SET finished_at = MAX(started_at, ?) "
                "WHERE cluster_id = ? AND finished_at IS NULL",
                (at, cluster_id),
            )

        await self._call(run)
