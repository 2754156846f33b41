"""Each feature's part of the database migrates on its own, and a file of the one-sequence schema
(``PRAGMA user_version`` 1 to 8, before parts) is read as having exactly the steps it had."""

from __future__ import annotations

import sqlite3

import pytest
from helpers import job_record

from jupyter_gpu_env.contracts.database import PARTS_VERSION, Database
from jupyter_gpu_env.dask import records as dask_records
from jupyter_gpu_env.dask.records import DaskRecords
from jupyter_gpu_env.errors import Conflict
from jupyter_gpu_env.jobs import sql
from jupyter_gpu_env.jobs.store import JobStore
from jupyter_gpu_env.pipelines import records as pipeline_records
from jupyter_gpu_env.pipelines.records import PipelineRecords
from jupyter_gpu_env.schedules import records as schedule_records
from jupyter_gpu_env.schedules.records import ScheduleRecords

PARTS = {
    "jobs": sql.MIGRATIONS,
    "schedules": schedule_records.MIGRATIONS,
    "pipelines": pipeline_records.MIGRATIONS,
    "dask": dask_records.MIGRATIONS,
}


def legacy_file(path, version: int) -> None:
    """A file as the one-sequence schema left it at ``version``: every step numbered up to it, in order."""
    steps = sorted(
        (s.legacy, s.statements)
        for steps in PARTS.values()
        for s in steps
        if s.legacy and s.legacy <= version
    )
    db = sqlite3.connect(path)
    for _, statements in steps:
        for statement in statements:
            db.execute(statement)
    db.execute(f"PRAGMA user_version = {version}")
    db.commit()
    db.close()


def columns(path, table: str) -> set[str]:
    db = sqlite3.connect(path)
    try:
        return {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
    finally:
        db.close()


def parts_of(path) -> dict[str, int]:
    db = sqlite3.connect(path)
    try:
        assert db.execute("PRAGMA user_version").fetchone()[0] == PARTS_VERSION
        return dict(db.execute("SELECT part, version FROM schema_parts").fetchall())
    finally:
        db.close()


async def test_a_file_of_the_last_one_sequence_schema_keeps_its_records_and_runs_no_step_again(tmp_path):
    path = tmp_path / "jobs.sqlite"
    legacy_file(path, 8)
    db = sqlite3.connect(path)
    db.execute(sql.INSERT, sql.row(job_record("0123456789ab")))
    db.commit()
    db.close()
    store = JobStore(path)
    try:
        for feature in (ScheduleRecords, PipelineRecords, DaskRecords):
            feature(store.db)  # each part registered, as the features' services do
        assert (await store.get("0123456789ab")).id == "0123456789ab"
        assert await ScheduleRecords(store.db).list() == []
    finally:
        store.close()
    assert parts_of(path) == {"legacy": 8, **{part: len(steps) for part, steps in PARTS.items()}}


async def test_an_older_file_gets_each_missing_step_when_its_part_is_first_used(tmp_path):
    path = tmp_path / "jobs.sqlite"
    legacy_file(path, 4)  # before schedules, pipelines and Dask clusters
    store = JobStore(path)
    try:
        await store.insert(job_record("0123456789ab"))  # the jobs' part: schedule_id, pipeline_id, held
        assert {"schedule_id", "pipeline_id", "held"} <= columns(path, "jobs")
        assert "schedules" not in parts_of(path)
        records = ScheduleRecords(store.db)  # a part registered once the file is open
        assert await records.list() == []
        assert columns(path, "schedules") == {"id", "created_at", "deleted_at", "data"}
    finally:
        store.close()
    assert parts_of(path)["schedules"] == len(schedule_records.MIGRATIONS)


async def test_a_part_written_by_a_newer_version_is_refused_not_misread(tmp_path):
    path = tmp_path / "jobs.sqlite"
    store = JobStore(path)
    await store.insert(job_record("0123456789ab"))
    store.close()
    db = sqlite3.connect(path)
    db.execute("UPDATE schema_parts SET version = version + 1 WHERE part = 'jobs'")
    db.commit()
    db.close()
    again = JobStore(path)
    try:
        with pytest.raises(Conflict) as refused:
            await again.get("0123456789ab")
        assert refused.value.reason == "store_too_new" and "jobs" in str(refused.value)
    finally:
        again.close()


def test_a_part_is_owned_by_one_set_of_migrations(tmp_path):
    db = Database(tmp_path / "x.sqlite")
    db.own("schedules", schedule_records.MIGRATIONS)
    db.own("schedules", schedule_records.MIGRATIONS)  # a second records object of the same feature
    with pytest.raises(ValueError, match="schedules"):
        db.own("schedules", sql.MIGRATIONS)
    db.close()
    db.close()  # a service stopped twice (a test's restart, then its teardown) closes it once
