"""The job store and the state machine, without running anything."""

from __future__ import annotations

import json
import sqlite3
import time

import pytest
from helpers import job_record

from jupyter_gpu_env.backends.base import TRANSITIONS, IllegalTransition, check_transition
from jupyter_gpu_env.contracts.database import PARTS_VERSION
from jupyter_gpu_env.errors import Conflict, InvalidRequest, NotFound
from jupyter_gpu_env.jobs import sql
from jupyter_gpu_env.jobs.store import JobStore
from jupyter_gpu_env.models.jobs import JOB_STATES, Job
from jupyter_gpu_env.models.resources import JobResources


def make_job(
    i: int, *, state: str = "queued", backend: str = "local", created: float | None = None, **kw
) -> Job:
    created_at = 1_000_000.0 + i if created is None else created
    return job_record(
        f"job{i:06d}", f"jobs/n{i}", name=f"n{i}", backend=backend, state=state, created_at=created_at, **kw
    )


def test_state_machine_allows_exactly_the_documented_transitions():
    allowed = {
        ("queued", "running"),
        ("queued", "failed"),
        ("queued", "cancelled"),
        ("running", "succeeded"),
        ("running", "failed"),
        ("running", "cancelled"),
        ("running", "queued"),  # requeued after a preemption (the tracker allows it only then)
    }
    for old in JOB_STATES:
        for new in JOB_STATES:
            if (old, new) in allowed:
                check_transition(old, new)
            else:
                with pytest.raises(IllegalTransition):
                    check_transition(old, new)
    assert all(not TRANSITIONS[s] for s in ("succeeded", "failed", "cancelled"))
    with pytest.raises(IllegalTransition, match="final"):
        check_transition("succeeded", "running")
    with pytest.raises(IllegalTransition):
        check_transition("queued", "exploded")


async def test_store_records_and_refuses_illegal_transitions(tmp_path):
    store = JobStore(tmp_path / "jobs.sqlite")
    try:
        await store.insert(make_job(1))
        with pytest.raises(Conflict):
            await store.insert(make_job(1))
        with pytest.raises(IllegalTransition):
            await store.update("job000001", state="succeeded")  # queued jobs must run first
        job = await store.update("job000001", state="running", backend_job_id="123")
        assert job.started_at is not None and job.backend_job_id == "123"
        job = await store.update("job000001", state="failed", reason="cell_error", message="boom")
        assert (job.state, job.reason, job.message) == ("failed", "cell_error", "boom")
        assert job.finished_at >= job.started_at
        for new in ("running", "succeeded", "cancelled", "queued"):
            with pytest.raises(IllegalTransition):
                await store.update("job000001", state=new)
        assert (await store.get("job000001")).state == "failed"
        with pytest.raises(NotFound):
            await store.get("nope")
        await store.delete("job000001")
        with pytest.raises(NotFound):
            await store.delete("job000001")
    finally:
        store.close()


async def test_records_survive_reopening_and_the_schema_is_versioned(tmp_path):
    path = tmp_path / "jobs.sqlite"
    store = JobStore(path)
    await store.insert(make_job(7, parameters={"a": [1, 2]}, resources=JobResources(gpus=2)))
    store.close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA user_version").fetchone()[0] == PARTS_VERSION
    parts = dict(db.execute("SELECT part, version FROM schema_parts").fetchall())
    assert parts == {"legacy": 0, "jobs": len(sql.MIGRATIONS)}  # a new file: no feature's part until used
    db.close()
    again = JobStore(path)
    try:
        job = await again.get("job000007")
        assert job.parameters == {"a": [1, 2]} and job.resources.gpus == 2
    finally:
        again.close()


async def test_listing_10000_records_pages_filters_and_is_fast(tmp_path):
    store = JobStore(tmp_path / "jobs.sqlite")
    try:
        states = ["queued", "running", "succeeded", "failed", "cancelled"]
        jobs = [make_job(i, state=states[i % 5]) for i in range(10_000)]
        await store.insert_many(jobs)
        assert await store.count() == 10_000

        t0 = time.perf_counter()
        page = await store.list(limit=50)
        elapsed = time.perf_counter() - t0
        assert page.total == 10_000 and len(page.items) == 50 and page.next_offset == 50
        assert [j.id for j in page.items[:3]] == ["job009999", "job009998", "job009997"]  # newest first
        assert elapsed < 0.5, f"a page of 10,000 records took {elapsed:.3f} s"

        last = await store.list(limit=50, offset=9_980)
        assert len(last.items) == 20 and last.next_offset is None and last.items[-1].id == "job000000"
        assert (await store.list(limit=10, offset=20_000)).items == []

        t0 = time.perf_counter()
        failed = await store.list(["failed"], limit=100, offset=100)
        assert time.perf_counter() - t0 < 0.5
        assert failed.total == 2_000 and all(j.state == "failed" for j in failed.items)
        assert failed.items[0].id == "job009498"  # the 101st newest failed job (i % 5 == 3)
        both = await store.list(["running", "queued"], limit=1)
        assert both.total == 4_000

        # Pages do not overlap and cover everything.
        seen, offset = set(), 0
        while offset is not None:
            page = await store.list(["succeeded"], limit=500, offset=offset)
            seen |= {j.id for j in page.items}
            offset = page.next_offset
        assert len(seen) == 2_000

        with pytest.raises(InvalidRequest):
            await store.list(["finished"])
        with pytest.raises(InvalidRequest):
            await store.list(limit=0)
        with pytest.raises(InvalidRequest):
            await store.list(offset=-1)
        active = await store.active()
        assert len(active) == 4_000 and active[0].id == "job000000"  # oldest first

        # The first page and its total come from an index: neither reads every record (the count did,
        # each record's JSON included, on every listing every open tab polls).
        def plans() -> list[str]:
            db = store.db.conn()
            return [
                " ".join(str(step[-1]) for step in db.execute(f"EXPLAIN QUERY PLAN {sql}").fetchall())
                for sql in (
                    "SELECT COUNT(*) FROM jobs WHERE deleted_at IS NULL",
                    "SELECT data FROM jobs WHERE deleted_at IS NULL ORDER BY created_at DESC, id DESC LIMIT 50",
                )
            ]

        count, first = await store.db.call(plans)
        assert "COVERING INDEX" in count, count
        assert "INDEX" in first and "TEMP B-TREE" not in first, first
    finally:
        store.close()


async def test_usage_sums_gpu_and_cpu_hours_inside_the_period(tmp_path):
    store = JobStore(tmp_path / "jobs.sqlite")
    h = 3600.0
    start, end = 100 * h, 200 * h
    try:
        jobs = [
            # 2 GPUs, 4 CPUs, 10 h entirely inside: 20 GPU-h, 40 CPU-h.
            make_job(1, state="succeeded", created=110 * h, started_at=110 * h, finished_at=120 * h,
                     resources=JobResources(gpus=2, cpus=4)),
            # Started before the period: only the 5 h inside count; no CPU request counts one core.
            make_job(2, state="failed", created=90 * h, started_at=95 * h, finished_at=105 * h,
                     resources=JobResources(gpus=1)),
            # A 3g.40gb MIG slice (3/7 of a GPU) for 7 h on another backend.
            make_job(3, state="succeeded", backend="slurm", created=150 * h, started_at=150 * h,
                     finished_at=157 * h, resources=JobResources(mig_profile="3g.40gb", cpus=2)),
            # Still running: counts up to "now" (190 h).
            make_job(4, state="running", created=180 * h, started_at=180 * h, resources=JobResources(gpus=1)),
            # Never started, and one outside the period altogether.
            make_job(5, state="cancelled", created=160 * h),
            make_job(6, state="succeeded", created=300 * h, started_at=300 * h, finished_at=301 * h,
                     resources=JobResources(gpus=8)),
        ]  # fmt: skip
        await store.insert_many(jobs)
        report = await store.usage(start, end, now=190 * h)
        local, slurm = report.backends["local"], report.backends["slurm"]
        assert local.gpu_hours == pytest.approx(20 + 5 + 10)
        assert local.cpu_hours == pytest.approx(40 + 5 + 10)
        assert local.jobs == {"succeeded": 1, "running": 1, "cancelled": 1}  # job 2 was created before
        assert slurm.gpu_hours == pytest.approx(3), slurm
        assert slurm.cpu_hours == pytest.approx(14)
        assert report.total.gpu_hours == pytest.approx(38)
        assert report.total.jobs == {"succeeded": 2, "running": 1, "cancelled": 1}
        empty = await store.usage(end, start)  # a period that ends before it starts holds nothing
        assert empty.backends == {} and empty.total.gpu_hours == 0 and empty.total.jobs == {}
    finally:
        store.close()


async def test_a_resumed_job_is_not_billed_for_its_waits_in_the_queue(tmp_path):
    from jupyter_gpu_env.models.attempts import JobAttempt

    store = JobStore(tmp_path / "jobs.sqlite")
    h = 3600.0
    try:
        ran_twice = [
            JobAttempt(
                number=1, started_at=110 * h, ended_at=112 * h, reason="preempted", resumed_at=115 * h
            ),
            JobAttempt(number=2, started_at=115 * h, ended_at=116 * h, reason="evicted", resumed_at=120 * h),
        ]
        waiting = [JobAttempt(number=1, started_at=180 * h, ended_at=181 * h, reason="preempted")]
        await store.insert_many([
            # ran 110-112, 115-116, 120-125 on 2 GPUs: 16 GPU-h, not the 30 of its first start to its end
            make_job(1, state="succeeded", created=110 * h, started_at=110 * h, finished_at=125 * h,
                     resources=JobResources(gpus=2), attempts=ran_twice, priority="opportunistic"),
            # stopped at 181 h and waiting again at "now" (190 h): 1 GPU-h so far
            make_job(2, state="queued", created=180 * h, started_at=180 * h, resources=JobResources(gpus=1),
                     attempts=waiting, priority="opportunistic"),
        ])  # fmt: skip
        report = await store.usage(100 * h, 200 * h, now=190 * h)
        assert report.backends["local"].gpu_hours == pytest.approx(16 + 1)
        # a period that cuts a wait: 114-118 holds 1 h of running (115-116), not 4
        assert (await store.usage(114 * h, 118 * h, now=190 * h)).total.gpu_hours == pytest.approx(2)
    finally:
        store.close()


async def test_used_gpu_hours_weigh_allocated_hours_by_measured_utilization(tmp_path):
    from jupyter_gpu_env.jobs.usage import as_csv, weekly
    from jupyter_gpu_env.models.jobs import JobGpuUsage

    store = JobStore(tmp_path / "jobs.sqlite")
    h = 3600.0
    now = time.mktime((2026, 11, 25, 12, 0, 0, 0, 0, -1))  # a Wednesday
    monday = time.mktime((2026, 11, 23, 0, 0, 0, 0, 0, -1))
    try:
        jobs = [
            # Last week: 2 GPUs for 10 h at 25 % mean utilization: 20 allocated, 5 used.
            make_job(1, state="succeeded", created=monday - 72 * h, started_at=monday - 72 * h,
                     finished_at=monday - 62 * h, resources=JobResources(gpus=2),
                     gpu=JobGpuUsage(available=True, mean_utilization_percent=25.0)),
            # This week: a MIG slice (1/7) for 7 h, utilization not measurable: allocated, not measured.
            make_job(2, state="succeeded", created=monday + 10 * h, started_at=monday + 10 * h,
                     finished_at=monday + 17 * h, resources=JobResources(mig_profile="1g.10gb"),
                     gpu=JobGpuUsage(available=True, mean_utilization_percent=None)),
            # This week: 1 GPU for 4 h at 90 %.
            make_job(3, state="succeeded", created=monday + 20 * h, started_at=monday + 20 * h,
                     finished_at=monday + 24 * h, resources=JobResources(gpus=1),
                     gpu=JobGpuUsage(available=True, mean_utilization_percent=90.0)),
        ]  # fmt: skip
        await store.insert_many(jobs)
        report = await weekly(store, 2, now)
        last, this = report.weeks
        assert (last.week_start, this.week_start) == (monday - 7 * 24 * h, monday)
        assert (
            last.total.gpu_hours,
            last.total.gpu_hours_used,
            last.total.gpu_hours_measured,
        ) == pytest.approx((20, 5, 20))
        assert this.total.gpu_hours == pytest.approx(1 + 4)
        assert (this.total.gpu_hours_used, this.total.gpu_hours_measured) == pytest.approx((3.6, 4))
        rows = as_csv(report).splitlines()
        assert rows[0].startswith("week_start,backend,gpu_hours,gpu_hours_used") and len(rows) == 1 + 2 * 2
        assert rows[-1].startswith("2026-11-23,all,5.0,3.6,4.0,0.9,")
    finally:
        store.close()


async def test_the_ledger_spreads_each_jobs_energy_over_its_run_and_prices_it_at_the_sites_numbers(tmp_path):
    from jupyter_gpu_env.gpu.energy import SitePrices
    from jupyter_gpu_env.jobs.usage import as_csv, report, weekly
    from jupyter_gpu_env.models.attempts import JobAttempt
    from jupyter_gpu_env.models.jobs import JobGpuUsage

    store = JobStore(tmp_path / "jobs.sqlite")
    h, kwh = 3600.0, 3.6e6
    now = time.mktime((2026, 11, 25, 12, 0, 0, 0, 0, -1))  # a Wednesday
    monday = time.mktime((2026, 11, 23, 0, 0, 0, 0, 0, -1))

    def measured(kw: float | None) -> JobGpuUsage:
        return JobGpuUsage(available=True, energy_joules=None if kw is None else kw * kwh,
                           energy_source=None if kw is None else "counter")  # fmt: skip

    try:
        await store.insert_many([
            # 4 h over the week's start, 4 kWh: 2 in each week
            make_job(1, state="succeeded", created=monday - 2 * h, started_at=monday - 2 * h,
                     finished_at=monday + 2 * h, resources=JobResources(gpus=1), gpu=measured(4)),
            # a slice whose energy was not measured: its hours, no energy
            make_job(2, state="succeeded", created=monday + 3 * h, started_at=monday + 3 * h,
                     finished_at=monday + 10 * h, resources=JobResources(mig_profile="1g.10gb"), gpu=measured(None)),
            # deleted later: what it drew stays counted
            make_job(3, state="succeeded", created=monday + 4 * h, started_at=monday + 4 * h,
                     finished_at=monday + 5 * h, resources=JobResources(gpus=1), gpu=measured(1)),
            # preempted at 11 h, waited 2 h, resumed: 2 h of run time hold all of its 1 kWh
            make_job(4, state="succeeded", created=monday + 10 * h, started_at=monday + 10 * h,
                     finished_at=monday + 14 * h, resources=JobResources(gpus=1), gpu=measured(1),
                     priority="opportunistic",
                     attempts=[JobAttempt(number=1, reason="preempted", started_at=monday + 10 * h,
                                          ended_at=monday + 11 * h, resumed_at=monday + 13 * h)]),
        ])  # fmt: skip
        await store.delete("job000003")
        site = SitePrices(
            carbon_intensity=300, pue=1.5, gpu_hour_price=2.0, energy_price=0.25, currency="EUR"
        )
        last, this = (await weekly(store, 2, now, prices=site)).weeks
        assert last.total.gpu_energy_kwh == pytest.approx(2)
        assert this.total.gpu_energy_kwh == pytest.approx(2 + 1 + 1)
        assert this.total.gpu_hours == pytest.approx(2 + 1 + 1 + 2)
        assert this.total.gpu_hours_energy_measured == pytest.approx(2 + 1 + 2)  # not the slice's hour
        assert this.total.co2e_grams == pytest.approx(4 * 1.5 * 300)
        cost = this.total.cost
        assert cost is not None and cost.currency == "EUR"
        assert (cost.gpu_time, cost.energy, cost.amount) == pytest.approx((6 * 2.0, 4 * 1.5 * 0.25, 13.5))
        assert this.backends["local"].co2e_grams == this.total.co2e_grams
        rows = as_csv(await weekly(store, 2, now, prices=site)).splitlines()
        assert rows[0].endswith(",gpu_energy_kwh,co2e_grams,cost,currency")
        assert rows[-1].endswith(",4.0,1800.0,13.5,EUR")
        plain = await report(store, monday, now)  # a site that set nothing: kWh, no carbon, no cost
        assert plain.total.gpu_energy_kwh == pytest.approx(4)
        assert (plain.total.co2e_grams, plain.total.cost) == (None, None)
        assert as_csv(await weekly(store, 1, now)).splitlines()[-1].endswith(",4.0,,,")
    finally:
        store.close()


async def test_a_sweeps_idle_runs_are_named(tmp_path):
    from jupyter_gpu_env.models.jobs import JobGpuUsage
    from jupyter_gpu_env.models.sweeps import JobGroup

    store = JobStore(tmp_path / "jobs.sqlite")
    try:
        group = JobGroup(
            id="g00000000001", name="scan", backend="local", notebook_path="nb.ipynb", size=3, max_concurrent=3,
            varied=["a"], counts={"running": 3}, state="running", created_at=1.0,
        )  # fmt: skip
        runs = [
            make_job(i, state="running", group_id=group.id, group_index=i, started_at=1.0,
                     gpu=JobGpuUsage(available=True, idle_seconds=idle))
            for i, idle in enumerate((0.0, 900.0, 599.0))
        ]  # fmt: skip
        await store.sweeps.insert(group, runs)
        assert await store.sweeps.idle_runs([group.id], 600.0) == {group.id: [runs[1].id]}
        assert await store.sweeps.idle_runs([group.id], 5000.0) == {}
    finally:
        store.close()


async def test_a_listing_page_is_made_once_per_change_of_the_records(tmp_path):
    """Fifty pollers of one page cost one reading: the same bytes until a write, by this store or by
    another process's connection to the same file (the CLI), makes a new page."""
    store, other = JobStore(tmp_path / "jobs.sqlite"), JobStore(tmp_path / "jobs.sqlite")
    try:
        await store.insert_many(make_job(i, state="succeeded") for i in range(3))
        first, active = await store.list_json(lambda job: job, limit=2)
        again, _ = await store.list_json(lambda job: job, limit=2)
        assert again is first and not active  # kept, not made again
        assert [j["id"] for j in json.loads(first)["items"]] == ["job000002", "job000001"]
        await store.insert(make_job(3))
        mine, active = await store.list_json(lambda job: job, limit=2)
        assert json.loads(mine)["items"][0]["id"] == "job000003" and active
        await other.update("job000003", state="running")
        theirs, _ = await store.list_json(lambda job: job, limit=2)
        assert json.loads(theirs)["items"][0]["state"] == "running"
        assert (await store.list_json(lambda job: job, states=["queued"]))[0] != theirs  # by query
    finally:
        store.close()
        other.close()


async def test_where_many_queued_jobs_stand_is_written_at_once_and_only_while_queued(tmp_path):
    store = JobStore(tmp_path / "jobs.sqlite")
    try:
        await store.insert_many(make_job(i) for i in range(3))
        await store.update("job000002", state="cancelled")
        places = {
            f"job{i:06d}": {"queue_position": i + 1, "queue_name": "local", "pending_reason": f"#{i}"}
            for i in range(3)
        }
        await store.update_standing(places)
        first, second, gone = [await store.get(f"job{i:06d}") for i in range(3)]
        assert (first.queue_position, first.queue_name, first.pending_reason) == (1, "local", "#0")
        assert (second.queue_position, second.pending_reason) == (2, "#1")
        assert gone.queue_position is None and gone.pending_reason is None  # it left the queue first
    finally:
        store.close()
