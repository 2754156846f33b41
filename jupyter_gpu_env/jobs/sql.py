"""The job store's database: one SQLite file in WAL mode behind one worker thread, its schema and the
SQL pieces the jobs' and the sweeps' records share (a record's row, the insert, transactions).

One connection on one thread serializes the server's writes without locks and keeps SQLite off the
event loop; WAL lets another process (the CLI) read and write the same file meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from ..errors import Conflict
from ..models.jobs import Job

T = TypeVar("T")

SCHEMA_VERSION = 8
NOTEBOOK_OF = "json_extract(data, '$.notebook_path')"  # the index's expression, as queries write it

# Each step takes the schema from the version before it to its own; a new file runs them all.
_MIGRATIONS: dict[int, list[str]] = {
    1: [
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
    2: ["ALTER TABLE jobs ADD COLUMN deleted_at REAL"],
    3: [
        "ALTER TABLE jobs ADD COLUMN group_id TEXT",
        "CREATE INDEX IF NOT EXISTS jobs_group ON jobs (group_id, state)",
        """CREATE TABLE IF NOT EXISTS job_groups (
            id TEXT PRIMARY KEY,
            created_at REAL NOT NULL,
            deleted_at REAL,
            data TEXT NOT NULL
        )""",
    ],
    # A listing counts the visible jobs and reads a page of them newest first, both from this index
    # (without it the count read every row, its JSON included: 4 ms a listing at 10,000 jobs).
    4: ["CREATE INDEX IF NOT EXISTS jobs_visible_created ON jobs (deleted_at, created_at DESC, id DESC)"],
    # Schedules, and their runs found by schedule as a sweep's are by group.
    5: [
        "ALTER TABLE jobs ADD COLUMN schedule_id TEXT",
        "CREATE INDEX IF NOT EXISTS jobs_schedule ON jobs (schedule_id, created_at DESC)",
        """CREATE TABLE IF NOT EXISTS schedules (
            id TEXT PRIMARY KEY,
            created_at REAL NOT NULL,
            deleted_at REAL,
            data TEXT NOT NULL
        )""",
    ],
    # Pipelines: their nodes' jobs found by pipeline; a job held until its parents end is not active
    # for its backend (the local backend would start it).
    6: [
        "ALTER TABLE jobs ADD COLUMN pipeline_id TEXT",
        "ALTER TABLE jobs ADD COLUMN held INTEGER NOT NULL DEFAULT 0",
        "CREATE INDEX IF NOT EXISTS jobs_pipeline ON jobs (pipeline_id, state)",
        """CREATE TABLE IF NOT EXISTS pipelines (
            id TEXT PRIMARY KEY,
            created_at REAL NOT NULL,
            deleted_at REAL,
            data TEXT NOT NULL
        )""",
    ],
    # Dask clusters, and their workers' time: the usage ledger's rows for what no job record holds.
    7: [
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
    # Right-size advice reads a notebook's latest runs: found by the notebook, not by reading every row.
    8: [f"CREATE INDEX IF NOT EXISTS jobs_notebook ON jobs ({NOTEBOOK_OF}, created_at DESC)"],
}


class Database:
    """The connection and the one thread every call runs on; shared by :class:`.store.JobStore` and
    its sweeps' records."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gpu-env-jobstore")
        self._db: sqlite3.Connection | None = None

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on the database's thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, fn, *args)

    def conn(self) -> sqlite3.Connection:
        """The connection (opened, and migrated, on first use); only on the database's thread."""
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=10.0, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            # durable at checkpoints; a crash loses no committed WAL frame
            db.execute("PRAGMA synchronous=NORMAL")
            _migrate(db)
            self._db = db
        return self._db

    def close(self) -> None:
        def shut() -> None:
            if self._db is not None:
                self._db.close()
                self._db = None

        self._executor.submit(shut).result()
        self._executor.shutdown(wait=True)


def _migrate(db: sqlite3.Connection) -> None:
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise Conflict(
            f"The job store {db} was written by a newer jupyter-gpu-env (schema {version}); "
            f"this one reads schema {SCHEMA_VERSION}.",
            reason="store_too_new",
        )
    if version == SCHEMA_VERSION:
        return
    with transaction(db, immediate=True):
        for step in range(version + 1, SCHEMA_VERSION + 1):
            for stmt in _MIGRATIONS[step]:
                db.execute(stmt)
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


VISIBLE = "deleted_at IS NULL"
COLUMNS = (
    "id, created_at, state, backend, started_at, finished_at, gpu_units, cpus, data, group_id, schedule_id, "
    "pipeline_id, held"
)
INSERT = f"INSERT INTO jobs ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"


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
        job.schedule_id,
        job.pipeline_id,
        1 if job.waiting_for else 0,
    )
