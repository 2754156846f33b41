import asyncio
import json

import pytest
from tornado.httpclient import HTTPClientError

from jupyter_gpu_env.errors import Conflict, InvalidRequest, NotFound
from jupyter_gpu_env.tasks import TaskContext, TaskManager


async def test_progress_log_and_result():
    tasks = TaskManager()
    gate = asyncio.Event()

    async def op(ctx: TaskContext):
        ctx.progress(0.5, "halfway")
        ctx.log("line one")
        await gate.wait()
        return {"name": "clone"}

    t = tasks.start("clone", "Clone", op)
    await asyncio.sleep(0.01)
    mid = tasks.get(t.id)
    assert (mid.state, mid.progress, mid.message, mid.log_tail) == ("running", 0.5, "halfway", ["line one"])
    gate.set()
    done = await tasks.wait(t.id)
    assert (done.state, done.progress, done.result) == ("succeeded", 1.0, {"name": "clone"})
    assert done.finished_at >= done.created_at


async def test_progress_never_goes_backwards():
    tasks = TaskManager()

    async def op(ctx):
        ctx.progress(0.7)
        ctx.progress(0.2)
        return None

    t = tasks.start("x", "x", op)
    assert (await tasks.wait(t.id)).state == "succeeded"


async def test_service_error_fails_the_task_with_its_message():
    tasks = TaskManager()

    async def op(ctx):
        raise InvalidRequest("package 'nope' is not in the channels", reason="unsolvable")

    t = await tasks.wait(tasks.start("install", "Install", op).id)
    assert (t.state, t.reason) == ("failed", "unsolvable")
    assert "nope" in t.message


async def test_cancel_runs_cleanup_and_records_cancelled():
    tasks = TaskManager()
    cleaned = asyncio.Event()

    async def op(ctx):
        try:
            await asyncio.sleep(60)
        finally:
            cleaned.set()

    t = tasks.start("clone", "Clone", op)
    await asyncio.sleep(0.01)
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
        state, recover=lambda t: "The change had been applied." if t.kind == "install" else None
    )
    assert second.get(done.id).result == 42
    revived = second.get(running.id)
    assert revived.state == "failed" and revived.reason == "interrupted"
    assert revived.message == "Interrupted by a server restart. Nothing it was building was kept."
    assert second.get(changing.id).message == "Interrupted by a server restart. The change had been applied."


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

    async def op(ctx):
        ctx.progress(0.25, "working")
        await asyncio.sleep(60)

    t = tasks.start("clone", "Clone 'a' as 'b'", op)
    await asyncio.sleep(0.01)
    got = json.loads((await api("tasks", t.id)).body)
    assert (got["state"], got["progress"], got["message"]) == ("running", 0.25, "working")
    listed = json.loads((await api("tasks")).body)["tasks"]
    assert listed[0]["id"] == t.id
    cancelled = json.loads((await api("tasks", t.id, method="DELETE")).body)
    assert cancelled["state"] == "cancelled"
    with pytest.raises(HTTPClientError) as e:
        await api("tasks", t.id, method="DELETE")
    assert e.value.code == 409
    with pytest.raises(HTTPClientError) as e:
        await api("tasks", "does-not-exist")
    assert e.value.code == 404
