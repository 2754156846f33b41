"""A schedule's lock cannot stall the server (issue 35, item 3).

A run's code once took ``flock`` on its schedule's ``schedule.lock``, two folders above its own, and held
it: every change of the schedule waited for it on a worker thread, the threads ran out, and the whole
server stopped answering. The lock the server shares with the SLURM tick is no longer in the schedule's
folder, and the server waits for it only so long and on no thread: then a 409 ``busy`` that says what
holds it. The other side of each lock is a child process, as a run or a tick is.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from helpers import body, error, wait_until, write_notebook

from jupyter_gpu_env.contracts.schedules.locking import WAIT, lock_path
from jupyter_gpu_env.errors import Conflict
from jupyter_gpu_env.schedules.records import ScheduleRecord, ScheduleRecords

HOLD = (
    "import fcntl, os, sys\n"
    "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)\n"
    "fcntl.flock(fd, fcntl.LOCK_EX)\n"
    "print('held', flush=True)\n"
    "sys.stdin.read()\n"  # held until the test ends this process
)


@contextlib.asynccontextmanager
async def held_by_another_process(path: Path) -> AsyncIterator[int]:
    """``flock`` on ``path`` held by a child process; its pid."""
    path.parent.mkdir(parents=True, exist_ok=True)
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", HOLD, str(path), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    try:
        assert child.stdout is not None
        assert await asyncio.wait_for(child.stdout.readline(), 30) == b"held\n"
        yield child.pid
    finally:
        child.kill()
        await child.wait()


def waiting_on(path: Path) -> bool:
    """Whether a process waits for the flock on ``path`` (a ``->`` line of /proc/locks)."""
    st = os.stat(path)
    device = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    lines = Path("/proc/locks").read_text().splitlines()
    return any(line.split()[1:3] == ["->", "FLOCK"] and device in line.split() for line in lines)


@pytest.fixture
def jp_server_config(jp_server_config, demo_app_config):
    return {**jp_server_config, "GpuEnvApp": {**demo_app_config}}


async def _made(api, jp_root_dir, jp_serverapp) -> tuple[str, Path]:
    nb = write_notebook(jp_root_dir, "locked.ipynb", ["print(1)"])
    req = {"notebook_path": nb, "schedule": "@daily", "name": "nightly"}
    made = await body(await api("schedules", method="POST", body=json.dumps(req)))
    store = jp_serverapp.web_app.settings["gpu_env_services"].jobs.store
    return made["id"], Path((await ScheduleRecords(store.db).get(made["id"])).folder)


async def test_a_run_holding_a_lock_in_its_schedules_folder_stalls_nothing(api, jp_root_dir, jp_serverapp):
    sid, folder = await _made(api, jp_root_dir, jp_serverapp)
    # What the run's code did: the lock file two folders above its own, held.
    async with held_by_another_process(folder / "schedule.lock"):
        changes = [
            api("schedules", sid, method="PATCH", body=json.dumps({"name": f"n{i}"})) for i in range(7)
        ]
        others = [api("schedules"), api("schedules", sid), api("jobs")]
        answers = await asyncio.wait_for(asyncio.gather(*changes, *others), 30)
        assert [a.code for a in answers] == [200] * 10
        assert (await asyncio.wait_for(api("schedules", sid, method="DELETE"), 30)).code == 204


async def test_while_another_process_holds_its_lock_a_change_is_409_busy_and_the_rest_answers(
    api, jp_root_dir, jp_serverapp
):
    sid, folder = await _made(api, jp_root_dir, jp_serverapp)
    async with held_by_another_process(lock_path(folder)) as pid:  # as the SLURM tick starting a run
        started = time.monotonic()
        changes = [
            asyncio.ensure_future(
                error(api("schedules", sid, method="PATCH", body=json.dumps({"name": f"n{i}"})), 409)
            )
            for i in range(6)
        ]
        changes.append(asyncio.ensure_future(error(api("schedules", sid, method="DELETE"), 409)))
        # Meanwhile the rest of the server answers: no thread waits for the lock.
        others = (
            api("schedules"),
            api("schedules", sid),
            api("jobs"),
            api("schedules", "preview", params={"schedule": "@daily"}),
        )
        answers = await asyncio.wait_for(asyncio.gather(*others), WAIT)
        assert [a.code for a in answers] == [200] * 4
        if time.monotonic() - started < WAIT / 2:  # surely before the changes' deadline
            assert not any(c.done() for c in changes)  # they still wait for the lock
        refusals = await asyncio.wait_for(asyncio.gather(*changes), WAIT + 20)
        assert time.monotonic() - started < WAIT + 20
        assert {r["reason"] for r in refusals} == {"busy"}
        assert all("Nothing was changed" in r["message"] for r in refusals)
        said = [r["message"] for r in refusals if f"process {pid}" in r["message"]]
        assert said and "try again" in said[0], refusals
        assert (await body(await api("schedules", sid)))["name"] == "nightly"  # nothing changed
    changed = await api("schedules", sid, method="PATCH", body=json.dumps({"name": "renamed"}))
    assert (await body(changed))["name"] == "renamed"
    assert (await api("schedules", sid, method="DELETE")).code == 204


async def test_a_schedule_whose_folder_is_gone_is_deleted(api, jp_root_dir, jp_serverapp):
    services = jp_serverapp.web_app.settings["gpu_env_services"]
    now = time.time()
    lost = ScheduleRecord(
        id="a" * 12, name="lost", backend="local", notebook_path="gone.ipynb",
        folder=str(services.schedules.base / "lost-aaaaaaaaaaaa"), expression="@daily", timezone="UTC",
        created_at=now, updated_at=now, snapshot_at=now, checked_until=now,
    )  # fmt: skip
    await ScheduleRecords(services.jobs.store.db).insert(lost)
    assert (await api("schedules", lost.id, method="DELETE")).code == 204
    assert (await body(await api("schedules")))["items"] == []


async def test_a_change_waits_for_another_of_the_same_schedule_only_so_long(batch, scheduling):
    nb = batch.notebook("w.ipynb", ["print(1)"])
    svc, sched = scheduling(lock_wait=0.3)
    made = await sched.create({"notebook_path": nb, "schedule": "@daily", "name": "held"})
    other = await sched.create({"notebook_path": nb, "schedule": "@daily", "name": "other"})
    record = await ScheduleRecords(svc.store.db).get(made.id)
    async with sched.keeping.locked(record):  # a change of it under way in this server
        for change in (
            sched.update(made.id, {"name": "later"}),
            sched.delete(made.id),
            sched.update_snapshot(made.id),
        ):
            with pytest.raises(Conflict) as busy:
                await asyncio.wait_for(change, 10)
            assert busy.value.reason == "busy" and "under way in this server" in busy.value.message
        # Another schedule is not held by it.
        assert (await sched.update(other.id, {"name": "free"})).name == "free"
    assert (await sched.update(made.id, {"name": "later"})).name == "later"
    async with sched.keeping.lock:  # a round of the server's timer under way
        with pytest.raises(Conflict) as busy:
            await asyncio.wait_for(sched.run_now(made.id), 10)
        assert busy.value.reason == "busy"


async def test_the_tick_waits_for_the_lock_the_server_holds(batch, scheduling):
    """The SLURM tick and the server take one lock: a tick that starts while the server changes the
    schedule waits, then goes on (here it finds its generation outdated, and does nothing)."""
    nb = batch.notebook("t.ipynb", ["print(1)"])
    svc, sched = scheduling()
    made = await sched.create({"notebook_path": nb, "schedule": "@daily"})
    record = await ScheduleRecords(svc.store.db).get(made.id)
    folder = Path(record.folder)
    async with sched.keeping.locked(record):
        tick = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "jupyter_gpu_env.backends.slurm.tick", str(folder),
            "--due", "0", "--generation", "999",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        await wait_until(lambda: waiting_on(lock_path(folder)), within=30, what="the tick waiting")
        assert tick.returncode is None
    out, _ = await asyncio.wait_for(tick.communicate(), 30)
    assert tick.returncode == 0 and b"nothing to do" in out, out
    assert not (folder / "schedule.lock").exists()  # nothing in the schedule's folder to find


def test_a_chain_armed_by_an_earlier_version_still_ticks(tmp_path):
    """Chains and CronJobs armed before the ticks moved into their backends run the old module: it
    hands the arguments on (here to the SLURM tick, which finds no schedule and does nothing)."""
    folder = tmp_path / "schedules" / "gone-0123456789ab"
    folder.mkdir(parents=True)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "jupyter_gpu_env.schedules.tick",
            str(folder),
            "--due",
            "0",
            "--generation",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and "nothing to do" in done.stdout, done
    refused = subprocess.run(
        [sys.executable, "-m", "jupyter_gpu_env.schedules.tick", str(folder)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2 and "--due" in refused.stderr  # the SLURM tick's own usage error
