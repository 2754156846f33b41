"""Schedules kept by the real single-node SLURM: a chain of waiting jobs that goes on with no server.

One scenario, about two minutes (a cron line runs on the minute): two schedules made, the server
stopped at once; the every-minute one runs at least twice, the other skips a run due while its
previous run still runs; a new server adopts every run once; pause and delete leave nothing waiting.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

from helpers import wait_until

from jupyter_gpu_env.backends.slurm import chain
from jupyter_gpu_env.contracts import jobfiles
from jupyter_gpu_env.contracts.schedules import folder as files
from jupyter_gpu_env.schedules.service import ScheduleService


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


async def _waiting(slurm) -> dict[str, list[tuple[str, str]]]:
    """The schedules' jobs in squeue: {schedule id: [(state, reason)]}."""
    out = await slurm.sh("squeue", "--noheader", "--format=%j|%T|%r")
    found: dict[str, list[tuple[str, str]]] = {}
    for line in out.stdout.splitlines():
        name, state, reason = line.strip().split("|")
        if name.startswith(chain.PREFIX):
            found.setdefault(name.removeprefix(chain.PREFIX), []).append((state, reason))
    return found


def _runs_ended(folder: Path) -> list[str]:
    runs = folder / files.RUNS
    return [r.name for r in sorted(runs.iterdir()) if (r / jobfiles.STATUS).exists()] if runs.exists() else []


async def test_a_schedule_kept_by_slurm_runs_with_no_server_and_is_adopted(slurm):
    quick = slurm.notebook("minutely.ipynb", ["print('ran at', __import__('time').time())"])
    slow = slurm.notebook("slow.ipynb", ["import time; time.sleep(16)"])
    svc = slurm.service()
    sched = ScheduleService(svc, minimum_period=1)
    minutely = await sched.create({"notebook_path": quick, "backend": "slurm", "schedule": "* * * * *"})
    often = await sched.create(
        {"notebook_path": slow, "backend": "slurm", "schedule": f"R/{_iso(time.time() + 4)}/PT10S"}
    )
    assert minutely.keeper.kind == "backend" and minutely.keeper.handle
    held = await _waiting(slurm)
    assert held[minutely.id] == [("PENDING", "BeginTime")] and held[often.id] == [("PENDING", "BeginTime")]
    await svc.stop()  # no Jupyter server from here on: SLURM alone runs both

    a_folder = Path(svc.job_dir) / "schedules" / f"minutely-{minutely.id}"
    b_folder = Path(svc.job_dir) / "schedules" / f"slow-{often.id}"

    def skipped() -> bool:
        return any(o.outcome == "skipped" for o in files.read_outcomes(b_folder))

    await wait_until(skipped, within=90, what="a run of the 10 s schedule skipped while the last one ran")
    # One minutely run is enough: the job that ran it armed the next minute's (one waits below); two
    # would cost the test up to two minute boundaries.
    await wait_until(
        lambda: len(_runs_ended(a_folder)) >= 1,
        within=90,
        what=lambda: (
            f"a minutely run ending (ended: {_runs_ended(a_folder)}; log: "
            f"{(a_folder / chain.TICK_LOG).read_text() if (a_folder / chain.TICK_LOG).exists() else ''})"
        ),
    )
    held = await _waiting(slurm)
    assert len(held[minutely.id]) == 1 and len(held[often.id]) <= 2  # one waits; a tick may be running

    # A new server adopts what SLURM ran, each run once, with its own record.
    svc = slurm.service()
    sched = ScheduleService(svc, minimum_period=1)
    try:
        await sched.tick()
        await sched.tick()
        runs = (await svc.list(schedule=minutely.id, limit=100)).items
        ended = {name.rsplit("-", 1)[-1] for name in _runs_ended(a_folder)}
        assert ended <= {j.id for j in runs} and len(runs) == len({j.id for j in runs})
        assert all(j.schedule_id == minutely.id and j.backend == "slurm" for j in runs)
        first = next(j for j in runs if j.id in ended)
        done = await slurm.wait_for(svc, first.id, slurm.ended)
        assert done.state == "succeeded" and "ran at" in (slurm.root / done.log_path).read_text()
        shown = await sched.get(often.id)
        assert {"started", "skipped"} <= {r.outcome for r in shown.last_runs}

        paused = await sched.update(minutely.id, {"active": False})
        assert paused.next_runs == [] and minutely.id not in await _pending(slurm)
        await sched.delete(often.id)
        assert often.id not in await _pending(slurm)
        assert not (b_folder / files.DOC).exists()
        resumed = await sched.update(minutely.id, {"active": True})
        assert (await _pending(slurm)).get(minutely.id) == 1 and resumed.keeper.present
        # An administrator cancels the waiting job: the schedule says so, and re-arming mends it.
        await slurm.sh("scancel", f"--name={chain.waiting_name(minutely.id)}")
        await sched.keeping.refresh_armed(force=True)
        lost = (await sched.get(minutely.id)).keeper
        assert not lost.present and "re-arm" in lost.message
        rearmed = await sched.rearm(minutely.id)
        assert rearmed.keeper.present and (await _pending(slurm)).get(minutely.id) == 1
        await sched.delete(minutely.id)
        assert await _pending(slurm) == {}
        for job in (await svc.list(state=["queued", "running"], limit=100)).items:
            await svc.cancel(job.id)
    finally:
        await svc.stop()
    record = json.loads((a_folder / files.RUNS / sorted(_runs_ended(a_folder))[0] / files.RECORD).read_text())
    assert record["schedule_id"] == minutely.id and record["backend_job_id"]


async def _pending(slurm) -> dict[str, int]:
    return {
        sid: n
        for sid, jobs in (await _waiting(slurm)).items()
        if (n := sum(1 for state, _ in jobs if state == "PENDING"))
    }


async def test_a_scheduled_sweep_is_one_job_array_and_is_adopted_whole(slurm):
    nb = slurm.notebook("grid.ipynb", ["print('x is', x)"], parameters="x = 0")
    svc = slurm.service()
    sched = ScheduleService(svc, minimum_period=1)
    made = await sched.create(
        {
            "notebook_path": nb,
            "backend": "slurm",
            "schedule": f"R1/{_iso(time.time() + 3)}/PT1H",
            "sweep": {"x": [1, 2]},
        }
    )
    assert made.sweep_size == 2
    await svc.stop()  # SLURM alone starts it
    folder = Path(svc.job_dir) / "schedules" / f"grid-{made.id}"

    def ended() -> list[Path]:
        runs = folder / files.RUNS
        sweeps = [p for p in runs.iterdir() if "-sweep-" in p.name] if runs.exists() else []
        done = [r for s in sweeps for r in files.sweep_runs(s) if (r / jobfiles.STATUS).exists()]
        return done if len(done) == 2 else []

    await wait_until(ended, within=90, what="both runs of the scheduled sweep ending")
    svc = slurm.service()
    sched = ScheduleService(svc, minimum_period=1)
    try:
        await sched.tick()
        runs = (await svc.list(schedule=made.id, limit=10)).items
        assert len(runs) == 2 and len({j.group_id for j in runs}) == 1
        for job in runs:
            assert (await slurm.wait_for(svc, job.id, slurm.ended)).state == "succeeded"
            assert "_" in (job.backend_job_id or "")  # a task of one job array
        sweep = await svc.sweeps.get(runs[0].group_id)
        assert sweep.schedule_id == made.id and sweep.state == "succeeded"
        await sched.delete(made.id)
        assert await _pending(slurm) == {}
    finally:
        await svc.stop()
