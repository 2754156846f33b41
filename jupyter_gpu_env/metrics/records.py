"""``MetricsRecords``: the ledger read for /metrics on a connection and a thread of its own (SQLite's
WAL lets it read beside the jobs' own), so a reading never holds up the jobs' thread: the visible jobs
by backend and state, and each backend's energy, idle GPU time and queue waits; the GPU-seconds
allocated and used come from the jobs' own usage report (:meth:`JobStore.usage`), so the two never
disagree. A reading is skipped when nothing was written since the last one and nothing in it grows
with time (no job running on a GPU, no Dask worker running): an idle server reads nothing."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

from ..contracts.database import Records, transaction
from ..jobs import sql
from ..jobs.store import JobStore
from .totals import WAIT_BUCKETS, BackendTotals, Totals, Waits

_GPU = "json_extract(data, '$.gpu')"
# Per backend, over every record that started, deleted ones included (the ledger: what was used stays
# used): the energy its runner measured (`gpu.energy_joules`, absent where none was: 0), the GPU-seconds
# allocated while idle (its allocated GPU-hours times its share of idle samples), and its queue wait
# histogram (started - created).
_WAIT = "MAX(0.0, started_at - created_at)"
_PER_BACKEND = (
    "SELECT backend, "
    f"SUM(MAX(0.0, COALESCE(json_extract({_GPU}, '$.energy_joules'), 0.0))), "
    f"SUM(MAX(0.0, COALESCE(json_extract({_GPU}, '$.gpu_hours_allocated'), 0.0)) * 3600.0 "
    f"* MIN(1.0, MAX(0.0, COALESCE(json_extract({_GPU}, '$.idle_fraction'), 0.0)))), "
    + "".join(f"SUM({_WAIT} <= {bound!r}), " for bound in WAIT_BUCKETS)
    + f"COUNT(*), SUM({_WAIT}) FROM jobs WHERE started_at IS NOT NULL GROUP BY backend"
)
_JOBS = f"SELECT backend, state, COUNT(*) FROM jobs WHERE {sql.VISIBLE} GROUP BY backend, state"
# What makes the figures grow with no write: a job running on a GPU, a Dask worker running.
_GROWING = "SELECT EXISTS (SELECT 1 FROM jobs WHERE state = 'running' AND gpu_units > 0)"
_WORKERS = "SELECT EXISTS (SELECT 1 FROM dask_workers WHERE finished_at IS NULL AND gpu_units > 0)"


class MetricsRecords(Records):
    """Reads the jobs' part of the database (its migrations are the jobs', registered once) through a
    ``JobStore`` of its own on the same file."""

    part = sql.PART
    steps = sql.MIGRATIONS

    def __init__(self, path: Path) -> None:
        self.store = JobStore(path)
        super().__init__(self.store.db)
        self._read_at_version: int | None = None  # the file's version at the last reading, if none grew

    def close(self) -> None:
        self.store.close()

    async def read(self, earlier: Totals | None = None) -> Totals:
        """The ledger as it stands now; ``earlier`` again (with this time) when nothing changed since."""
        now = time.time()
        version, growing = await self._call(self._version)
        if earlier is not None and not growing and version == self._read_at_version:
            return dataclasses.replace(earlier, read_at=now)
        usage = await self.store.usage(0.0, now, now=now)
        jobs, rows = await self._call(self._read)
        backends: dict[str, BackendTotals] = {}
        for backend, energy, idle, *waits in rows:
            *buckets, count, waited = waits
            backends[backend] = BackendTotals(
                energy_joules=float(energy or 0.0),
                idle_seconds=float(idle or 0.0),
                waits=Waits(tuple(int(n or 0) for n in (*buckets, count)), float(waited or 0.0)),
            )
        for backend, hours in usage.backends.items():
            backends[backend] = dataclasses.replace(
                backends.get(backend, BackendTotals()),
                allocated_seconds=hours.gpu_hours * 3600.0,
                used_seconds=hours.gpu_hours_used * 3600.0,
                measured_seconds=hours.gpu_hours_measured * 3600.0,
            )
        self._read_at_version = None if growing else version
        return Totals(read_at=now, jobs={(b, s): int(n) for b, s, n in jobs}, backends=backends)

    def _version(self) -> tuple[int, bool]:
        """The file's version (it changes with every commit by another connection) and whether anything
        grows with time."""
        db = self._conn()
        version = int(db.execute("PRAGMA data_version").fetchone()[0])
        growing = bool(db.execute(_GROWING).fetchone()[0])
        kept = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'dask_workers'")
        if not growing and kept.fetchone():
            growing = bool(db.execute(_WORKERS).fetchone()[0])
        return version, growing

    def _read(self) -> tuple[list[tuple[str, str, int]], list[tuple[Any, ...]]]:
        db = self._conn()
        with transaction(db):
            return db.execute(_JOBS).fetchall(), db.execute(_PER_BACKEND).fetchall()
