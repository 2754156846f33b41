"""The jobs' part of the server's database (:mod:`..contracts.database`): the jobs' and sweeps' tables and
their migrations, the SQL pieces the jobs' and the sweeps' records share (a record's row, the
insert), and the usage ledger's sums. Features built on jobs keep their own tables beside these, with
their own migrations.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from ..contracts.database import Step, transaction
from ..models.backends import BackendUsage, ClusterUsage, UsageReport
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


def _billed(start: str, end: str) -> str:
    """A job's run time inside ``[start, end)`` (SQL), less what a stopped opportunistic job waited in its
    queue before it started again; a running job counts up to ``:now``."""
    overlap = f"MAX(0, MIN({end}, COALESCE(finished_at, :now)) - MAX({start}, started_at))"
    waited = (
        f"(SELECT COALESCE(SUM(MAX(0, MIN({end}, COALESCE(json_extract(a.value, '$.resumed_at'), "
        f"finished_at, :now)) - MAX({start}, started_at, json_extract(a.value, '$.ended_at')))), 0) "
        "FROM json_each(jobs.data, '$.attempts') a WHERE json_extract(a.value, '$.ended_at') IS NOT NULL)"
    )
    return f"MAX(0, {overlap} - {waited})"


def usage(db: sqlite3.Connection, start: float, end: float, now: float) -> UsageReport:
    """GPU- and CPU-hours of the run time inside ``[start, end)``, the GPU energy measured in it, and the
    jobs created then, per backend (the ledger's sums; :meth:`.store.JobStore.usage`). A job's energy is
    spread evenly over its run time: the period holds its share."""
    if end <= start:
        return UsageReport(period_start=start, period_end=end)
    overlap = "MAX(0, MIN(:end, COALESCE(finished_at, :now)) - MAX(:start, started_at))"
    args = {"start": start, "end": end, "now": now}
    billed, whole = _billed(":start", ":end"), _billed("-1e18", "1e18")
    with transaction(db):
        # used: the allocated hours weighted by the run's mean utilization, where it was measured
        util = "json_extract(data, '$.gpu.mean_utilization_percent')"
        energy = "json_extract(data, '$.gpu.energy_joules')"
        hours = db.execute(
            f"SELECT backend, SUM(gpu_units * {billed}), SUM(cpus * {billed}), "
            f"SUM(CASE WHEN {util} IS NOT NULL THEN gpu_units * {billed} * {util} / 100.0 ELSE 0 END), "
            f"SUM(CASE WHEN {util} IS NOT NULL THEN gpu_units * {billed} ELSE 0 END), "
            f"SUM(CASE WHEN {energy} IS NOT NULL AND {whole} > 0 THEN {energy} * {billed} / {whole} ELSE 0 END), "
            f"SUM(CASE WHEN {energy} IS NOT NULL THEN gpu_units * {billed} ELSE 0 END) FROM jobs "
            "WHERE started_at IS NOT NULL AND started_at < :end AND COALESCE(finished_at, :now) > :start "
            "GROUP BY backend",
            args,
        ).fetchall()
        counts = db.execute(
            "SELECT backend, state, COUNT(*) FROM jobs WHERE created_at >= :start AND created_at < :end "
            "GROUP BY backend, state",
            args,
        ).fetchall()
        # Dask workers' spans are in the ledger too, in the Dask part's table once that part exists here.
        kept = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'dask_workers'")
        workers = (
            db.execute(
                f"SELECT backend, cluster_name, SUM({overlap}), SUM(gpu_units * {overlap}), "
                f"SUM(cpus * {overlap}) FROM dask_workers "
                "WHERE started_at < :end AND COALESCE(finished_at, :now) > :start "
                "GROUP BY backend, cluster_name",
                args,
            ).fetchall()
            if kept.fetchone()
            else []
        )
    report = UsageReport(period_start=start, period_end=end)
    for backend, gpu_s, cpu_s, used_s, measured_s, joules, metered_s in hours:
        u = report.backends.setdefault(backend, BackendUsage())
        u.gpu_hours, u.cpu_hours = (gpu_s or 0) / 3600, (cpu_s or 0) / 3600
        u.gpu_hours_used, u.gpu_hours_measured = (used_s or 0) / 3600, (measured_s or 0) / 3600
        u.gpu_energy_kwh, u.gpu_hours_energy_measured = (joules or 0) / 3.6e6, (metered_s or 0) / 3600
    for backend, state, n in counts:
        report.backends.setdefault(backend, BackendUsage()).jobs[state] = n
    for backend, name, worker_s, gpu_s, cpu_s in workers:
        u = report.backends.setdefault(backend, BackendUsage())
        u.gpu_hours += (gpu_s or 0) / 3600
        u.cpu_hours += (cpu_s or 0) / 3600
        c = report.dask_clusters.setdefault(name, ClusterUsage(backend=backend))
        c.worker_hours += (worker_s or 0) / 3600
        c.gpu_hours += (gpu_s or 0) / 3600
        c.cpu_hours += (cpu_s or 0) / 3600
    total = report.total
    for u in report.backends.values():
        total.gpu_hours += u.gpu_hours
        total.cpu_hours += u.cpu_hours
        total.gpu_hours_used += u.gpu_hours_used
        total.gpu_hours_measured += u.gpu_hours_measured
        total.gpu_energy_kwh += u.gpu_energy_kwh
        total.gpu_hours_energy_measured += u.gpu_hours_energy_measured
        for state, n in u.jobs.items():
            total.jobs[state] = total.jobs.get(state, 0) + n
    return report
