import asyncio
import json

import pytest
from helpers import body
from tornado.httpclient import HTTPClientError

from jupyter_gpu_env.errors import Conflict, InvalidRequest, NotFound
from jupyter_gpu_env.tasks import Outcome, TaskContext, TaskManager


class Steps:
    """Drives an operation one report at a time, so that a test reads the task between reports.

    The operation calls ``await steps.reported()`` after each report and waits there until the test,
    having read what a client would see, calls ``steps.next()``.
    """

    def __init__(self) -> None:
        self._reports: asyncio.Queue[None] = asyncio.Queue()
        self._go: asyncio.Queue[None] = asyncio.Queue()

    async def reported(self) -> None:
        self._reports.put_nowait(None)
        await self._go.get()

    async def wait_report(self) -> None:
        await asyncio.wait_for(self._reports.get(), 10)

    def next(self) -> None:
        self._go.put_nowait(None)


async def test_progress_log_and_result():
    tasks = TaskManager()
    steps = Steps()

    async def op(ctx: TaskContext):
        ctx.progress(0.5, "halfway")
        ctx.log("line one")
        await steps.reported()
        return {"name": "clone"}

    t = tasks.start("clone", "Clone", op)
    try:
        await steps.wait_report()
        mid = tasks.get(t.id)
        assert (mid.state, mid.progress, mid.message, mid.log_tail) == (
            "running",
            0.5,
            "halfway",
            ["line one"],
        )
        steps.next()
        done = await tasks.wait(t.id)
    finally:
        await tasks.stop()  # nothing left waiting if an assertion failed
    assert (done.state, done.progress, done.result) == ("succeeded", 1.0, {"name": "clone"})
    assert done.message == "halfway"  # the operation's last word stays
    assert done.finished_at >= done.created_at


async def test_progress_a_client_sees_never_goes_backwards_and_ends_at_one():
    """What a client polling the task sees after each report: monotonic progress, the latest message."""
    tasks = TaskManager()
    steps = Steps()
    reports = [(0.3, "Solving"), (0.7, "Linking"), (0.2, "Verifying"), (0.9, None)]

    async def op(ctx: TaskContext):
        for fraction, message in reports:
            ctx.progress(fraction, message)
            await steps.reported()
        return None

    t = tasks.start("x", "x", op)
    seen = []
    try:
        assert tasks.get(t.id).progress == 0.0
        for _ in reports:
            await steps.wait_report()
            now = tasks.get(t.id)
            seen.append((now.state, now.progress, now.message))
            steps.next()
        done = await tasks.wait(t.id)
    finally:
        await tasks.stop()  # nothing left waiting if an assertion failed
    assert seen == [
        ("running", 0.3, "Solving"),
        ("running", 0.7, "Linking"),
        ("running", 0.7, "Verifying"),  # a late, lower fraction does not move the bar back
        ("running", 0.9, "Verifying"),  # no message: the last one stays
    ]
    fractions = [p for _, p, _ in seen] + [done.progress]
    assert fractions == sorted(fractions)
    assert (done.state, done.progress) == ("succeeded", 1.0)


async def test_service_error_fails_the_task_with_its_message():
    tasks = TaskManager()

    async def op(ctx):
        raise InvalidRequest("package 'nope' is not in the channels", reason="unsolvable")

    t = await tasks.wait(tasks.start("install", "Install", op).id)
    assert (t.state, t.reason) == ("failed", "unsolvable")
    assert "nope" in t.message


async def test_cancel_runs_cleanup_and_records_cancelled():
    tasks = TaskManager()
    started, cleaned = asyncio.Event(), asyncio.Event()

    async def op(ctx):
        started.set()
        try:
            await asyncio.sleep(60)
        finally:
            cleaned.set()

    t = tasks.start("clone", "Clone", op)
    await started.wait()  # cancelled once it runs: its cleanup must run
    ended = await tasks.cancel(t.id)
    assert ended.state == "cancelled"
    assert cleaned.is_set()
    with pytest.raises(Conflict):
        await tasks.cancel(t.id)


async def test_unknown_task_is_not_found():
    with pytest.raises(NotFound):
        TaskManager().get("nope")


async def test_a_task_is_on_record_from_its_start_and_a_restart_shows_it_interrupted(tmp_path):
    state = tmp_path / "tasks.json"
    first = TaskManager(state)

    async def quick(ctx):
        return 42

    done = await first.wait(first.start("pack", "Pack", quick).id)
    started = asyncio.Event()

    async def slow(ctx):
        started.set()  # the operation runs only once its task is on record
        await asyncio.sleep(60)

    running = first.start("clone", "Clone", slow)
    changing = first.start("install", "Change", slow)
    await started.wait()
    # What a crash (kill -9) leaves: the file as written while the tasks ran.
    crashed = state.read_bytes()
    await first.stop()
    state.write_bytes(crashed)

    second = TaskManager(
        state,
        recover=lambda t: (
            Outcome("The change had been applied.", applied=True) if t.kind == "install" else None
        ),
    )
    assert second.get(done.id).result == 42
    revived = second.get(running.id)
    assert revived.state == "failed" and revived.reason == "interrupted"
    assert revived.message == "Interrupted by a server restart. Nothing it was building was kept."
    applied = second.get(changing.id)  # its work was done: it succeeded, though it could not say so
    assert (applied.state, applied.reason, applied.progress) == ("succeeded", None, 1.0)
    assert applied.message == "Interrupted by a server restart. The change had been applied."


async def test_concurrent_saves_never_fail_and_the_newest_wins(tmp_path):
    state = tmp_path / "tasks.json"
    tasks = TaskManager(state)

    async def op(ctx):
        return ctx.task_id

    ids = [tasks.start("x", "x", op).id for _ in range(30)]
    results = [await tasks.wait(i) for i in ids]
    assert all(r.state == "succeeded" for r in results)
    saved = {t["id"]: t["state"] for t in json.loads(state.read_text())}
    assert all(saved[i] == "succeeded" for i in ids)
    assert not [p for p in tmp_path.iterdir() if p.name != "tasks.json"]  # no temporary left


async def test_only_recent_finished_tasks_are_kept():
    tasks = TaskManager(keep=3)

    async def op(ctx):
        return None

    ids = [tasks.start("x", "x", op).id for _ in range(5)]
    for i in ids:
        await tasks.wait(i)
    tasks.start("x", "x", op)
    assert len(tasks.list()) <= 4


async def test_rest_follow_and_cancel(api, jp_serverapp):
    tasks = jp_serverapp.web_app.settings["gpu_env_services"].tasks
    steps = Steps()

    async def op(ctx):
        ctx.progress(0.25, "working")
        await steps.reported()
        ctx.progress(0.6, "further")
        await steps.reported()
        await asyncio.sleep(60)  # the rest of a long operation: it is cancelled

    t = tasks.start("clone", "Clone 'a' as 'b'", op)
    await steps.wait_report()
    got = await body(await api("tasks", t.id))
    assert (got["state"], got["progress"], got["message"]) == ("running", 0.25, "working")
    steps.next()
    await steps.wait_report()
    got = await body(await api("tasks", t.id))
    assert (got["state"], got["progress"], got["message"]) == ("running", 0.6, "further")
    listed = (await body(await api("tasks")))["tasks"]
    assert listed[0]["id"] == t.id and listed[0]["progress"] == 0.6
    steps.next()
    cancelled = await body(await api("tasks", t.id, method="DELETE"))
    assert cancelled["state"] == "cancelled"
    assert cancelled["progress"] == 0.6  # where it was when it stopped
    with pytest.raises(HTTPClientError) as e:
        await api("tasks", t.id, method="DELETE")
    assert e.value.code == 409
    with pytest.raises(HTTPClientError) as e:
        await api("tasks", "does-not-exist")
    assert e.value.code == 404
