"""``MetricsRecords``: the ledger read for /metrics, on the database's thread, in one snapshot: the
visible jobs by backend and state, and each backend's energy, idle GPU time and queue waits; the
GPU-seconds allocated and used come from the jobs' own usage report (:meth:`JobStore.usage`), so the
two never disagree."""

from __future__ import annotations

import dataclasses
import time
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


class MetricsRecords(Records):
    """Reads the jobs' part of the database (its migrations are the jobs', registered once)."""

    part = sql.PART
    steps = sql.MIGRATIONS

    def __init__(self, store: JobStore) -> None:
        super().__init__(store.db)
        self.store = store

    async def read(self) -> Totals:
        """The ledger as it stands now."""
        now = time.time()
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
        return Totals(read_at=now, jobs={(b, s): int(n) for b, s, n in jobs}, backends=backends)

    def _read(self) -> tuple[list[tuple[str, str, int]], list[tuple[Any, ...]]]:
        db = self._conn()
        with transaction(db):
            return db.execute(_JOBS).fetchall(), db.execute(_PER_BACKEND).fetchall()
