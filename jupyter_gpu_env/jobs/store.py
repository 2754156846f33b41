"""Durable job records in SQLite (see :mod:`.sql` for the database and its thread). A record is the
job's JSON plus the columns that are filtered, sorted or summed, so a page of a 10,000-job listing reads
one index range and parses only that page.

The table is also the usage ledger: deleting a job hides its record (``deleted_at``) but keeps the
columns usage is summed from, so deleting jobs never lowers the GPU- and CPU-hours already used.
"""

from __future__ import annotations

import builtins
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from ..backends.base import check_transition
from ..contracts.database import Database, Records, transaction
from ..errors import Conflict, InvalidRequest, NotFound
from ..models.backends import UsageReport
from ..models.jobs import JOB_STATES, TERMINAL_STATES, Job, JobList
from . import sql
from .sql import INSERT, NOTEBOOK_OF, VISIBLE, dump, row
from .sweeps.records import SweepRecords

MAX_PAGE = 500
KEPT_PAGES = 64  # serialized listing pages kept for pollers (the UI's few pages, a few filters)


class JobStore(Records):
    """Async API over a SQLite file; every call runs on the database's own thread. A sweep's record
    and the queries over its runs are :attr:`sweeps`', on the same connection."""

    part = sql.PART  # the jobs' and sweeps' tables; features add theirs
    steps = sql.MIGRATIONS

    STANDING = ("pending_reason", "queue_position", "queue_name", "estimated_start")  # update_standing's

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.db = Database(self.path)
        super().__init__(self.db)
        self.sweeps = SweepRecords(self.db)
        # query -> (the database's version it was read at, its JSON, whether it shows an active job);
        # touched on the database's thread only
        self._pages: dict[tuple[Any, ...], tuple[tuple[int, int], bytes, bool]] = {}

    def close(self) -> None:
        self.db.close()

    # ----- records -----

    async def insert(self, job: Job) -> None:
        await self._call(self._insert, job)

    def _insert(self, job: Job) -> None:
        db = self._conn()
        try:
            with transaction(db):
                db.execute(INSERT, row(job))
        except sqlite3.IntegrityError as e:
            raise Conflict(f"A job with id '{job.id}' already exists.", reason="job_exists") from e

    async def insert_many(self, jobs: Iterable[Job]) -> None:
        """Insert records in one transaction (imports, benchmarks); all or none."""

        def run(rows: list[tuple[Any, ...]]) -> None:
            db = self._conn()
            try:
                with transaction(db):
                    db.executemany(INSERT, rows)
            except sqlite3.IntegrityError as e:
                raise Conflict(f"A job id is already taken: {e}", reason="job_exists") from e

        await self._call(run, [row(j) for j in jobs])

    async def get(self, job_id: str) -> Job:
        return await self._call(self._get, job_id)

    def _get(self, job_id: str) -> Job:
        row = self._conn().execute(f"SELECT data FROM jobs WHERE id = ? AND {VISIBLE}", (job_id,)).fetchone()
        if row is None:
            raise NotFound(f"No job with id '{job_id}'.", reason="job_not_found")
        return Job.model_validate_json(row[0])

    async def update(self, job_id: str, *, state: str | None = None, **changes: Any) -> Job:
        """Change fields of a record; a new ``state`` must be allowed by the state machine.

        Entering ``running`` stamps ``started_at`` and a terminal state stamps ``finished_at`` unless
        given. Raises :class:`NotFound` and :class:`IllegalTransition`.
        """
        return await self._call(self._update, job_id, state, changes)

    def _update(self, job_id: str, state: str | None, changes: dict[str, Any]) -> Job:
        db = self._conn()
        with transaction(db, immediate=True):  # read and write under one lock: another process may race
            job = self._get(job_id)
            if state is not None and state != job.state:
                check_transition(job.state, state)
                now = time.time()
                changes["state"] = state
                if state == "running" and changes.get("started_at") is None and job.started_at is None:
                    changes["started_at"] = now
                if state in TERMINAL_STATES:
                    changes.setdefault("pending_reason", None)
                    if changes.get("finished_at") is None:
                        changes["finished_at"] = now
            for key in ("started_at", "finished_at"):  # None in an observation means unknown, not "clear"
                if key in changes and changes[key] is None:
                    del changes[key]
            new = Job.model_validate({**job.model_dump(), **dump(changes)})
            if new == job:
                return job
            db.execute(
                "UPDATE jobs SET created_at=?, state=?, backend=?, started_at=?, finished_at=?, gpu_units=?, "
                "cpus=?, data=?, group_id=?, schedule_id=?, pipeline_id=?, held=? WHERE id=?",
                (*row(new)[1:], job_id),
            )
        return new

    async def update_standing(self, changes: dict[str, dict[str, Any]]) -> None:
        """Where each of many queued jobs stands (``pending_reason``, ``queue_position``, ``queue_name``,
        ``estimated_start``: job id -> values), in one transaction; a job no longer queued is left as
        it is (it started, or was cancelled, meanwhile)."""
        if changes:
            await self._call(self._standing, changes)

    def _standing(self, changes: dict[str, dict[str, Any]]) -> None:
        db = self._conn()
        with transaction(db, immediate=True):
            for job_id, fields in changes.items():
                paths = ", ".join(f"'$.{key}', ?" for key in fields if key in self.STANDING)
                values = [fields[key] for key in fields if key in self.STANDING]
                if values:
                    db.execute(
                        f"UPDATE jobs SET data = json_set(data, {paths}) WHERE id = ? AND state = 'queued'",
                        [*values, job_id],
                    )

    async def delete(self, job_id: str) -> None:
        await self._call(self._delete, job_id)

    def _delete(self, job_id: str) -> None:
        db = self._conn()
        with transaction(db):
            hidden = db.execute(
                f"UPDATE jobs SET deleted_at = ? WHERE id = ? AND {VISIBLE}", (time.time(), job_id)
            ).rowcount
            if hidden == 0:
                raise NotFound(f"No job with id '{job_id}'.", reason="job_not_found")

    async def count(self) -> int:
        return await self._call(
            lambda: self._conn().execute(f"SELECT COUNT(*) FROM jobs WHERE {VISIBLE}").fetchone()[0]
        )

    async def list(
        self,
        states: Iterable[str] | None = None,
        *,
        limit: int = 50,
        offset: int = 0,
        backend: str | None = None,
        sweep: str | None = None,
        schedule: str | None = None,
        pipeline: str | None = None,
    ) -> JobList:
        """Newest first, ``limit`` records from ``offset``, with the total over all pages; of one sweep
        in its order, of one schedule, or of one pipeline (``none``: of no pipeline)."""
        wanted = _checked(states, limit, offset)
        return await self._call(self._list, wanted, limit, offset, backend, sweep, schedule, pipeline)

    async def list_json(
        self,
        shape: Callable[[Job], Job],
        states: Iterable[str] | None = None,
        *,
        limit: int = 50,
        offset: int = 0,
        sweep: str | None = None,
        schedule: str | None = None,
        pipeline: str | None = None,
    ) -> tuple[bytes, bool]:
        """:meth:`list` as the API answers it, each job through ``shape``, serialized; and whether it
        shows an active job. Read and made once per change of the database (by this server or another
        process), then served as it is until the next: fifty clients polling one page cost one reading."""
        wanted = _checked(states, limit, offset)
        key = (None if wanted is None else tuple(wanted), limit, offset, None, sweep, schedule, pipeline)
        return await self._call(self._page, key, shape)

    def _page(self, key: tuple[Any, ...], shape: Callable[[Job], Job]) -> tuple[bytes, bool]:
        db = self._conn()
        # this connection's writes, and other connections' commits: either makes a page stale
        version = (db.total_changes, db.execute("PRAGMA data_version").fetchone()[0])
        kept = self._pages.pop(key, None)
        if kept is None or kept[0] != version:
            page = self._list(*key)
            page.items = [shape(job) for job in page.items]
            active = any(job.state not in TERMINAL_STATES for job in page.items)
            kept = (version, page.model_dump_json().encode(), active)
        self._pages[key] = kept  # the most recently asked last: the oldest go first
        while len(self._pages) > KEPT_PAGES:
            del self._pages[next(iter(self._pages))]
        return kept[1], kept[2]

    def _list(
        self,
        states: Sequence[str] | None,
        limit: int,
        offset: int,
        backend: str | None,
        sweep: str | None,
        schedule: str | None = None,
        pipeline: str | None = None,
    ) -> JobList:
        where: list[str] = [VISIBLE]
        args: list[Any] = []
        if states is not None:
            where.append(f"state IN ({','.join('?' * len(states))})" if states else "0")
            args += states
        if backend is not None:
            where.append("backend = ?")
            args.append(backend)
        if schedule is not None:
            where.append("schedule_id = ?")
            args.append(schedule)
        for column, value in (("group_id", sweep), ("pipeline_id", pipeline)):
            if value == "none":  # of no sweep, of no pipeline
                where.append(f"{column} IS NULL")
            elif value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        clause = f" WHERE {' AND '.join(where)}"
        # a sweep's runs in their order; everything else newest first
        order = (
            "json_extract(data, '$.group_index'), id"
            if sweep not in (None, "none")
            else "created_at DESC, id DESC"
        )
        db = self._conn()
        with transaction(db):  # one snapshot for the page and its total
            total = db.execute(f"SELECT COUNT(*) FROM jobs{clause}", args).fetchone()[0]
            rows = db.execute(
                f"SELECT data FROM jobs{clause} ORDER BY {order} LIMIT ? OFFSET ?",
                [*args, limit, offset],
            ).fetchall()
        items = [Job.model_validate_json(r[0]) for r in rows]
        nxt = offset + len(items)
        return JobList(
            items=items, total=total, offset=offset, limit=limit, next_offset=nxt if nxt < total else None
        )

    async def active(self, backend: str | None = None) -> builtins.list[Job]:
        """Queued and running jobs, oldest first (the order a free slot is given in); not those a pipeline
        holds until their parents end (they are not their backend's yet)."""

        def fetch() -> list[Job]:
            sql = f"SELECT data FROM jobs WHERE state IN ('queued', 'running') AND held = 0 AND {VISIBLE}"
            args: list[Any] = []
            if backend is not None:
                sql += " AND backend = ?"
                args.append(backend)
            rows = self._conn().execute(sql + " ORDER BY created_at, id", args).fetchall()
            return [Job.model_validate_json(r[0]) for r in rows]

        return await self._call(fetch)

    async def runs_of(self, notebook_path: str, limit: int) -> builtins.list[Job]:
        """The newest ended runs of a notebook whose runner measured their GPU memory."""

        def fetch() -> list[Job]:
            rows = (
                self._conn()
                .execute(
                    f"SELECT data FROM jobs WHERE {NOTEBOOK_OF} = ? AND state IN ('succeeded', 'failed', "
                    f"'cancelled') AND json_extract(data, '$.gpu.peak_memory_bytes') IS NOT NULL AND {VISIBLE} "
                    "ORDER BY created_at DESC LIMIT ?",
                    [notebook_path, limit],
                )
                .fetchall()
            )
            return [Job.model_validate_json(r[0]) for r in rows]

        return await self._call(fetch)

    async def unmeasured_of(self, notebook_path: str) -> tuple[int, str | None]:
        """How many ended runs of a notebook measured no GPU memory, and why the newest of them did not
        (its runner's ``gpu.reason``; None when it recorded no GPU summary at all)."""

        def fetch() -> tuple[int, str | None]:
            where = (
                f"WHERE {NOTEBOOK_OF} = ? AND state IN ('succeeded', 'failed', 'cancelled') "
                f"AND json_extract(data, '$.gpu.peak_memory_bytes') IS NULL AND {VISIBLE}"
            )
            db = self._conn()
            (count,) = db.execute(f"SELECT COUNT(*) FROM jobs {where}", [notebook_path]).fetchone()
            row = db.execute(
                f"SELECT json_extract(data, '$.gpu.reason') FROM jobs {where} ORDER BY created_at DESC LIMIT 1",
                [notebook_path],
            ).fetchone()
            return int(count), (row[0] if row else None)

        return await self._call(fetch)

    # ----- usage -----

    async def usage(self, start: float, end: float, *, now: float | None = None) -> UsageReport:
        """GPU- and CPU-hours of the wall time that falls inside ``[start, end)``, and jobs created then.

        Deleted jobs count: they used what they used. A period that ends before it starts is empty.
        """
        return await self._call(self._usage, start, end, time.time() if now is None else now)

    def _usage(self, start: float, end: float, now: float) -> UsageReport:
        return sql.usage(self._conn(), start, end, now)


def _checked(states: Iterable[str] | None, limit: int, offset: int) -> list[str] | None:
    """The states asked for, sorted; InvalidRequest for an unknown state or a page out of range."""
    wanted = sorted(set(states)) if states is not None else None
    for s in wanted or ():
        if s not in JOB_STATES:
            raise InvalidRequest(f"'{s}' is not a job state; states are {', '.join(JOB_STATES)}.")
    if not 1 <= limit <= MAX_PAGE:
        raise InvalidRequest(f"limit must be from 1 to {MAX_PAGE}.")
    if offset < 0:
        raise InvalidRequest("offset must not be negative.")
    return wanted
