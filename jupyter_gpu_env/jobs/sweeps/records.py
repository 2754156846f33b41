"""Sweeps in the job store: a sweep's record beside its runs' (see :mod:`..store`), on the store's
database. The table keeps its first name, ``job_groups``."""

from __future__ import annotations

import builtins
import sqlite3
import time
from collections.abc import Iterable, Sequence

from ...contracts.database import Records, transaction
from ...errors import Conflict, NotFound
from ...models.jobs import Job
from ...models.sweeps import JobGroup, JobGroupList
from ..sql import MIGRATIONS, PART, VISIBLE, insert_records
from .plan import summarized

# A sweep is listed while it has a run: one whose runs were all deleted is gone (its record stays, as
# the runs' do, hidden).
_LISTED = (
    "deleted_at IS NULL AND EXISTS "
    "(SELECT 1 FROM jobs WHERE jobs.group_id = job_groups.id AND jobs.deleted_at IS NULL)"
)


class SweepRecords(Records):
    """Sweeps' records and the queries over their runs; :attr:`.store.JobStore.sweeps`."""

    part = PART  # the sweeps' table is the jobs' part's
    steps = MIGRATIONS

    async def insert(self, sweep: JobGroup, jobs: Sequence[Job]) -> None:
        """A sweep and all its runs, in one transaction: all or none."""

        def run() -> None:
            db = self._conn()
            try:
                with transaction(db):
                    insert_records(db, jobs, [sweep])
            except sqlite3.IntegrityError as e:
                raise Conflict(f"A job or sweep id is already taken: {e}", reason="job_exists") from e

        await self._call(run)

    async def get(self, sweep_id: str) -> JobGroup:
        """The sweep with its runs counted per state now."""
        return await self._call(self._get, sweep_id)

    def _get(self, sweep_id: str) -> JobGroup:
        db = self._conn()
        with transaction(db):
            row = db.execute(
                "SELECT data FROM job_groups WHERE id = ? AND deleted_at IS NULL", (sweep_id,)
            ).fetchone()
            if row is None:
                raise NotFound(f"No sweep with id '{sweep_id}'.", reason="group_not_found")
            counts = dict(
                db.execute(
                    f"SELECT state, COUNT(*) FROM jobs WHERE group_id = ? AND {VISIBLE} GROUP BY state",
                    (sweep_id,),
                ).fetchall()
            )
            if not counts:  # a sweep is its runs: with none left it has no state to tell
                raise NotFound(
                    f"Sweep '{sweep_id}' is gone: every run of it was deleted.", reason="group_not_found"
                )
            last = db.execute(
                f"SELECT MAX(finished_at) FROM jobs WHERE group_id = ? AND {VISIBLE}", (sweep_id,)
            ).fetchone()[0]
        return summarized(JobGroup.model_validate_json(row[0]), counts, last)

    async def list(self, *, limit: int = 50, offset: int = 0, pipelines: bool = True) -> JobGroupList:
        """Sweeps, newest first, each with its runs counted per state (one query for the page's counts);
        without ``pipelines``, not the sweeps that are nodes of a pipeline."""
        listed = _LISTED if pipelines else f"{_LISTED} AND json_extract(data, '$.pipeline_id') IS NULL"

        def fetch() -> JobGroupList:
            db = self._conn()
            with transaction(db):
                total = db.execute(f"SELECT COUNT(*) FROM job_groups WHERE {listed}").fetchone()[0]
                rows = db.execute(
                    f"SELECT id, data FROM job_groups WHERE {listed} ORDER BY created_at DESC, id DESC "
                    "LIMIT ? OFFSET ?",
                    (limit, offset),
                ).fetchall()
                ids = [r[0] for r in rows]
                marks = ",".join("?" * len(ids))
                counts: dict[str, dict[str, int]] = {}
                last: dict[str, float | None] = {}
                if ids:
                    for gid, state, n in db.execute(
                        f"SELECT group_id, state, COUNT(*) FROM jobs WHERE group_id IN ({marks}) AND {VISIBLE} "
                        "GROUP BY group_id, state",
                        ids,
                    ).fetchall():
                        counts.setdefault(gid, {})[state] = n
                    for gid, end in db.execute(
                        f"SELECT group_id, MAX(finished_at) FROM jobs WHERE group_id IN ({marks}) AND {VISIBLE} "
                        "GROUP BY group_id",
                        ids,
                    ).fetchall():
                        last[gid] = end
            items = [
                summarized(JobGroup.model_validate_json(data), counts.get(gid, {}), last.get(gid))
                for gid, data in rows
            ]
            nxt = offset + len(items)
            return JobGroupList(
                items=items, total=total, offset=offset, limit=limit, next_offset=nxt if nxt < total else None
            )

        return await self._call(fetch)

    async def idle_runs(self, sweep_ids: Sequence[str], idle_seconds: float) -> dict[str, builtins.list[str]]:
        """The running runs of these sweeps whose GPU has been idle ``idle_seconds`` or more, by sweep."""
        if not sweep_ids:
            return {}

        def fetch() -> dict[str, builtins.list[str]]:
            rows = (
                self._conn()
                .execute(
                    f"SELECT group_id, id FROM jobs WHERE group_id IN ({','.join('?' * len(sweep_ids))}) "
                    f"AND state = 'running' AND {VISIBLE} "
                    "AND json_extract(data, '$.gpu.idle_seconds') >= ? ORDER BY json_extract(data, '$.group_index')",
                    [*sweep_ids, idle_seconds],
                )
                .fetchall()
            )
            out: dict[str, builtins.list[str]] = {}
            for gid, jid in rows:
                out.setdefault(gid, []).append(jid)
            return out

        return await self._call(fetch)

    async def runs(self, sweep_id: str) -> builtins.list[Job]:
        """Every run of a sweep, in its order."""

        def fetch() -> list[Job]:
            rows = (
                self._conn()
                .execute(
                    f"SELECT data FROM jobs WHERE group_id = ? AND {VISIBLE} "
                    "ORDER BY json_extract(data, '$.group_index'), id",
                    (sweep_id,),
                )
                .fetchall()
            )
            return [Job.model_validate_json(r[0]) for r in rows]

        return await self._call(fetch)

    async def discard(self, job_ids: Iterable[str]) -> None:
        """Remove records of runs the backend refused (nothing ran, so no usage is lost), and their
        sweep once it has no run left."""
        ids = list(job_ids)

        def run() -> None:
            db = self._conn()
            with transaction(db):
                groups = {
                    g
                    for (g,) in db.execute(
                        f"SELECT DISTINCT group_id FROM jobs WHERE id IN ({','.join('?' * len(ids))})", ids
                    ).fetchall()
                    if g
                }
                db.executemany("DELETE FROM jobs WHERE id = ?", [(i,) for i in ids])
                for g in groups:
                    if db.execute("SELECT COUNT(*) FROM jobs WHERE group_id = ?", (g,)).fetchone()[0] == 0:
                        db.execute("DELETE FROM job_groups WHERE id = ?", (g,))

        if ids:
            await self._call(run)

    async def replace(self, old: Sequence[Job], new: Sequence[Job]) -> None:
        """Retried runs: the old records hidden (their usage stays counted), the new ones inserted, at once."""

        def run() -> None:
            db = self._conn()
            with transaction(db):
                now = time.time()
                db.executemany("UPDATE jobs SET deleted_at = ? WHERE id = ?", [(now, j.id) for j in old])
                insert_records(db, new)

        await self._call(run)

    async def unhide(self, job_ids: Sequence[str]) -> None:
        """Show again the records :meth:`replace` hid (a retry the backend refused)."""
        await self._call(
            lambda: self._conn().executemany(
                "UPDATE jobs SET deleted_at = NULL WHERE id = ?", [(i,) for i in job_ids]
            )
        )

    async def update(self, sweep: JobGroup) -> None:
        await self._call(
            lambda: self._conn().execute(
                "UPDATE job_groups SET data = ? WHERE id = ?", (sweep.model_dump_json(), sweep.id)
            )
        )
