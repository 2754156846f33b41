"""Schedules on the local backend, run by the server's own timer: real notebooks, store and runner.

The timer's rounds are driven here (``tick()``) as the server's loop drives them; the due times are
real (an ISO-8601 interval of a few seconds, with the minimum period lowered for the test).
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime

import pytest
from helpers import wait_until

from jupyter_gpu_env.contracts.schedules import folder as files
from jupyter_gpu_env.errors import Conflict, InvalidRequest, NotFound
from jupyter_gpu_env.schedules.keeping import SERVER_KEPT
from jupyter_gpu_env.schedules.records import ScheduleRecords


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _every(seconds: int, start_in: float = 1.0) -> str:
    return f"R/{_iso(time.time() + start_in)}/PT{seconds}S"


async def _runs(svc, schedule_id: str):
    return (await svc.list(schedule=schedule_id, limit=100)).items


async def test_a_schedule_runs_its_snapshot_at_its_times_and_lists_its_runs(batch, scheduling):
    nb = batch.notebook("daily.ipynb", ["print('x =', x)"], parameters="x = 0")
    svc, sched = scheduling()
    made = await sched.create(
        {"notebook_path": nb, "schedule": _every(2), "parameters": {"x": 7}, "name": "nightly"}
    )
    assert made.keeper.kind == "server" and made.keeper.message == SERVER_KEPT
    assert len(made.next_runs) == 3 and made.next_runs[1].at - made.next_runs[0].at == 2
    assert made.next_runs[0].utc.endswith("Z") and made.description
    # Edited after scheduling: the schedule runs what was scheduled.
    batch.notebook("daily.ipynb", ["raise SystemExit('the edited notebook ran')"], parameters="x = 0")

    async def two_succeeded():
        await sched.tick()
        await svc.refresh()
        done = [j for j in await _runs(svc, made.id) if j.state == "succeeded"]
        return done if len(done) >= 2 else None

    done = await wait_until(two_succeeded, within=60, what="two scheduled runs succeeding")
    assert {j.schedule_id for j in done} == {made.id} and {j.name for j in done} == {"nightly"}
    assert all(j.parameters == {"x": 7} for j in done)
    assert len({j.job_dir for j in done}) == len(done)  # each run in its own folder
    log = (batch.root / done[0].log_path).read_text()
    assert "x = 7" in log and "edited" not in log
    shown = await sched.get(made.id)
    started = [r for r in shown.last_runs if r.outcome == "started"]
    assert {r.job_id for r in started} >= {j.id for j in done}
    assert all(r.state for r in started)
    assert (await svc.list(schedule="0" * 12)).items == []


async def test_overlap_skip_records_the_run_due_while_the_last_one_runs(batch, scheduling):
    nb = batch.notebook("slow.ipynb", ["import time; time.sleep(4)"])
    svc, sched = scheduling()
    made = await sched.create({"notebook_path": nb, "schedule": _every(1)})

    async def skipped():
        await sched.tick()
        runs = (await sched.get(made.id)).last_runs
        return [r for r in runs if r.outcome == "skipped"] or None

    found = await wait_until(skipped, within=30, what="a run recorded as skipped")
    assert "still runs" in found[0].message
    started = [j for j in await _runs(svc, made.id)]
    assert len(started) == 1  # never two at once
    await sched.update(made.id, {"active": False})
    for job in started:
        await svc.cancel(job.id)


async def test_runs_missed_while_the_server_was_down_are_recorded_not_all_started(batch, scheduling):
    nb = batch.notebook("hourly.ipynb", ["print(1)"])
    svc, sched = scheduling()
    start = time.time() - 3 * 3600 - 600
    made = await sched.create({"notebook_path": nb, "schedule": f"R/{_iso(start)}/PT1H"})
    # As if this server had been down since just before the first of them (the last, 10 minutes
    # ago, is past the starting deadline too).
    await ScheduleRecords(svc.store.db).update(made.id, checked_until=start - 1)
    await sched.tick()
    outcomes = (await sched.get(made.id)).last_runs
    assert [r.outcome for r in outcomes] == ["missed"] * 4
    assert all("not running" in r.message for r in outcomes)
    assert await _runs(svc, made.id) == []  # nothing started late, in a burst


async def test_pause_resume_run_now_and_delete(batch, scheduling):
    nb = batch.notebook("p.ipynb", ["print(1)"])
    svc, sched = scheduling()
    made = await sched.create({"notebook_path": nb, "schedule": "0 6 * * *", "timezone": "Europe/Rome"})
    assert made.next_runs[0].local.endswith(("+01:00", "+02:00")) and "06:00:00" in made.next_runs[0].local
    paused = await sched.update(made.id, {"active": False})
    assert not paused.active and paused.next_runs == []
    resumed = await sched.update(made.id, {"active": True, "schedule": "30 7 * * 1-5"})
    assert resumed.active and "07:30:00" in resumed.next_runs[0].local
    job = await sched.run_now(made.id)
    assert job.schedule_id == made.id
    await batch.wait_for(svc, job.id, batch.ended)
    await sched.delete(made.id)
    with pytest.raises(NotFound):
        await sched.get(made.id)
    assert [j.id for j in await _runs(svc, made.id)] == [job.id]  # its runs stay, as jobs
    assert list((batch.job_dir / "schedules").glob(f"*-{made.id}/{files.DOC}")) == []  # ticks stop


@pytest.mark.parametrize(
    ("expression", "zone", "words"),
    [
        ("61 * * * *", "UTC", "minute 61"),
        ("R/not-a-date/PT1H", "UTC", "not-a-date"),
        ("R/2026-12-01T00:00:00Z/PT30S", "UTC", "60 s"),
        ("0 6 * * *", "Mars/Olympus_Mons", "Mars/Olympus_Mons"),
    ],
)
async def test_bad_schedules_are_400s_that_say_what_is_wrong(batch, scheduling, expression, zone, words):
    nb = batch.notebook("b.ipynb", ["print(1)"])
    _, sched = scheduling(minimum_period=60)  # the ScheduleService's own default
    with pytest.raises(InvalidRequest) as refused:
        await sched.create({"notebook_path": nb, "schedule": expression, "timezone": zone})
    assert words in refused.value.message
    assert (await sched.list()).items == []
    assert not (batch.job_dir / "schedules").exists() or not any((batch.job_dir / "schedules").iterdir())


async def test_a_run_folders_record_is_untrusted_when_adopted(batch, scheduling):
    """A run's record.json is the run's own word: what the server keeps of it is checked."""
    nb = batch.notebook("u.ipynb", ["print(1)"])
    svc, sched = scheduling()
    made = await sched.create({"notebook_path": nb, "schedule": "0 6 * * *"})
    where = batch.job_dir / "schedules"
    (folder,) = [p for p in where.iterdir() if not p.name.startswith(".")]
    doc = files.read_doc(folder)
    job, run = files.new_run(folder, doc, time.time())
    record = json.loads((run / files.RECORD).read_text())
    record.update(
        state="succeeded", started_at=0, output_path="../../../etc/passwd", backend="evil", node="10.6.6.6"
    )
    (run / files.RECORD).write_text(json.dumps(record))
    (folder / files.RUNS / "20260101-0000-zzz").mkdir()
    (folder / files.RUNS / "20260101-0000-zzz" / files.RECORD).write_text("{" * 10000)
    adopted = await sched.keeping.adopt_all()
    assert adopted == [job.id]
    kept = await svc.store.get(job.id)
    # This server makes its own schedules' runs: one it never started was left by a crash.
    assert (kept.state, kept.reason) == ("failed", "lost") and kept.started_at is None
    assert kept.backend == "local" and kept.schedule_id == made.id
    assert kept.node is None  # where a run runs is its backend's word, never its record's
    assert kept.output_path.endswith("/output.ipynb") and ".." not in kept.output_path
    with pytest.raises(Conflict):
        await sched.rearm(made.id)  # the server runs local schedules: nothing to re-arm


async def test_a_new_snapshot_is_what_the_next_runs_run(batch, scheduling):
    nb = batch.notebook("snap.ipynb", ["print('version one')"])
    svc, sched = scheduling()
    made = await sched.create({"notebook_path": nb, "schedule": "@daily"})
    batch.notebook("snap.ipynb", ["print('version two')"])
    first = await sched.run_now(made.id)
    updated = await sched.update_snapshot(made.id)
    assert updated.snapshot_at > made.snapshot_at
    second = await sched.run_now(made.id)
    logs = []
    for job in (first, second):
        done = await batch.wait_for(svc, job.id, batch.ended)
        assert done.state == "succeeded"
        logs.append((batch.root / done.log_path).read_text())
    assert "version one" in logs[0] and "version two" in logs[1]


async def test_a_scheduled_sweep_runs_every_combination_at_each_due_time(batch, scheduling):
    nb = batch.notebook("sweep.ipynb", ["print('lr is', lr)"], parameters="lr = 0.1")
    svc, sched = scheduling()
    made = await sched.create(
        {"notebook_path": nb, "schedule": _every(30), "sweep": {"lr": [0.5, 0.25]}, "name": "grid"}
    )
    assert made.sweep_size == 2

    async def sweep_done():
        await sched.tick()
        await svc.refresh()
        runs = await _runs(svc, made.id)
        return runs if len(runs) == 2 and all(j.state == "succeeded" for j in runs) else None

    runs = await wait_until(sweep_done, within=60, what="the scheduled sweep's two runs succeeding")
    (group,) = {j.group_id for j in runs}
    assert group and sorted(j.parameters["lr"] for j in runs) == [0.25, 0.5]
    sweep = await svc.sweeps.get(group)
    assert sweep.schedule_id == made.id and sweep.state == "succeeded" and sweep.size == 2
    (started,) = [r for r in (await sched.get(made.id)).last_runs if r.outcome == "started"]
    assert started.group_id == group and started.state == "succeeded"
    with pytest.raises(Conflict):  # its values were checked whole when it was made
        await sched.update(made.id, {"parameters": {"lr": 1}})


async def test_changing_the_resources_alone_keeps_the_parameters(batch, scheduling):
    nb = batch.notebook("r.ipynb", ["print(n)"], parameters="n = 1")
    _, sched = scheduling()
    made = await sched.create({"notebook_path": nb, "schedule": "@daily", "parameters": {"n": 3}})
    changed = await sched.update(made.id, {"name": "renamed", "timezone": "UTC", "resources": {"cpus": 1}})
    assert changed.name == "renamed" and changed.resources.cpus == 1 and changed.parameters == {"n": 3}
    cleared = await sched.update(made.id, {"resources": {}})
    assert cleared.resources.cpus is None
