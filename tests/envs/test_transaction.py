"""Package changes are transactions: the environment is exactly as it was, or exactly the new one.

"Exactly as it was" is checked to the inode: every file, folder and link of the environment keeps its
inode number, size, mode, modification time and content. That also proves that no file shared by hard
link between the live environment and the copy being changed was written in place.
"""

from __future__ import annotations

import asyncio
import errno
import hashlib
import os
import subprocess
from pathlib import Path

import pytest
from helpers import Recorder

from jupyter_gpu_env.envs import transaction
from jupyter_gpu_env.envs.changes import history
from jupyter_gpu_env.envs.transaction import hardlink_copy, previous_states, swap_in
from jupyter_gpu_env.errors import Conflict, DiskFull
from jupyter_gpu_env.tasks import TaskManager


def snapshot(prefix: Path) -> dict[str, tuple]:
    """Every entry under ``prefix``: kind, inode, size, mode, mtime and (files) a hash of the content."""
    out = {}
    for root, dirs, files in os.walk(prefix):
        for name in dirs + files:
            path = Path(root, name)
            st = path.lstat()
            digest = ""
            if path.is_file() and not path.is_symlink():
                digest = hashlib.sha1(path.read_bytes()).hexdigest()
            out[str(path.relative_to(prefix))] = (st.st_mode, st.st_ino, st.st_size, st.st_mtime_ns, digest)
    return out


def temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".txn-" in p.name or ".swap-" in p.name)


def _python(prefix: Path, code: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(prefix / "bin" / "python"), "-c", code], capture_output=True, text=True)


async def test_a_change_swaps_in_whole_and_keeps_the_previous_state_untouched(service):
    await service.clone("demo", "txn")
    prefix = service.user_env_dir / "txn"
    before = snapshot(prefix)
    result = await service.change_packages("txn", ["tabulate"], [], change_id="c1")
    assert [p.split("-")[0] for p in result.report.installed] == ["tabulate"]
    assert _python(prefix, "import tabulate").returncode == 0
    assert history.holds(prefix, "c1") and history.read(prefix)[-1]["add"] == ["tabulate"]
    (kept,) = previous_states(prefix)
    assert snapshot(kept) == before  # the previous environment, to the inode
    assert temporaries(service.user_env_dir) == []
    assert "txn" in {e.name for e in await service.list()}
    assert not [e.name for e in await service.list() if e.name.startswith(".")]
    # A second change keeps only the newest previous state.
    await service.change_packages("txn", [], ["tabulate"], change_id="c2")
    (kept_again,) = previous_states(prefix)
    assert kept_again != kept and not kept.exists()
    assert _python(kept_again, "import tabulate").returncode == 0  # the state before c2 had it


@pytest.mark.parametrize(
    "when", ["Copying the environment aside", "Solving", "Installing packages", "Swapping"]
)
async def test_cancel_at_any_moment_leaves_the_environment_exactly_as_it_was(service, when):
    await service.clone("demo", "cancelme")
    prefix = service.user_env_dir / "cancelme"
    before = snapshot(prefix)
    seen: list[str] = []
    task: asyncio.Task | None = None

    def progress(fraction: float, message: str) -> None:
        seen.append(message)
        if message.startswith(when) and task is not None and not task.done():
            task.cancel()

    task = asyncio.ensure_future(
        service.change_packages("cancelme", ["tabulate"], [], report=Recorder(progress), change_id="late")
    )
    (outcome,) = await asyncio.gather(task, return_exceptions=True)
    assert any(m.startswith(when) for m in seen), seen
    if isinstance(outcome, asyncio.CancelledError):
        assert snapshot(prefix) == before and previous_states(prefix) == []
    else:  # cancelled while swapping: too late, the change is made whole and the task says so
        assert when == "Swapping" and history.holds(prefix, "late")
        assert snapshot(previous_states(prefix)[0]) == before
    assert temporaries(service.user_env_dir) == []
    assert not service.busy("cancelme")


async def test_a_failed_change_leaves_the_environment_exactly_as_it_was(service):
    await service.clone("demo", "failme")
    prefix = service.user_env_dir / "failme"
    before = snapshot(prefix)
    with pytest.raises(Conflict, match="python 3.9"):
        await service.change_packages("failme", ["python 3.9.*"], [])
    assert snapshot(prefix) == before and temporaries(service.user_env_dir) == []


async def test_a_running_kernel_keeps_working_across_a_change(service):
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager

    await service.clone("demo", "live")
    prefix = service.user_env_dir / "live"
    spec = await service.register_kernel("live")
    specs = KernelSpecManager(kernel_dirs=[str(Path(spec.resource_dir).parent)])
    km = AsyncKernelManager(kernel_name=spec.kernel_name, kernel_spec_manager=specs)
    await km.start_kernel()
    kc = km.client()
    kc.start_channels()

    async def run(code: str) -> str:
        out: list[str] = []
        reply = await kc.execute_interactive(
            code, timeout=60, output_hook=lambda m: out.append(m["content"].get("text", ""))
        )
        assert reply["content"]["status"] == "ok", reply["content"]
        return "".join(out)

    try:
        await kc.wait_for_ready(timeout=60)
        assert (await run("import sys, json; print(sys.prefix)")).strip() == str(prefix)
        await service.change_packages("live", ["tabulate"], [])
        # The same kernel, not restarted: what it has not imported yet comes from the environment as
        # it is now.
        assert (await run("import csv, tabulate; print(tabulate.__file__)")).startswith(str(prefix))
    finally:
        kc.stop_channels()
        await km.shutdown_kernel(now=True)


async def test_disk_full_during_a_change_says_so_and_keeps_the_environment(service, monkeypatch):
    await service.clone("demo", "full")
    prefix = service.user_env_dir / "full"
    before = snapshot(prefix)

    def no_space(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("jupyter_gpu_env.envs.transaction.hardlink_copy", no_space)
    with pytest.raises(DiskFull, match="is full") as err:
        await service.change_packages("full", ["tabulate"], [])
    assert err.value.status == 507
    assert snapshot(prefix) == before and temporaries(service.user_env_dir) == []


def test_hardlink_copy_shares_only_what_no_tool_rewrites(tmp_path):
    src = tmp_path / "src"
    (src / "conda-meta").mkdir(parents=True)
    (src / "lib").mkdir()
    (src / "conda-meta" / "pkg.json").write_text("{}")
    cache = tmp_path / "cache.so"
    cache.write_bytes(b"shared")
    os.link(cache, src / "lib" / "shared.so")
    (src / "lib" / "private.txt").write_text("written at install time")
    (src / "lib" / "x.pth").write_text("/somewhere")
    os.link(src / "lib" / "x.pth", tmp_path / "another-link.pth")
    (src / "lib" / "link").symlink_to("shared.so")
    dst = tmp_path / "dst"
    stats = hardlink_copy(src, dst)
    same = lambda rel: (src / rel).stat().st_ino == (dst / rel).stat().st_ino  # noqa: E731
    assert same("lib/shared.so")
    assert not same("conda-meta/pkg.json") and not same("lib/private.txt") and not same("lib/x.pth")
    assert os.readlink(dst / "lib" / "link") == "shared.so"
    assert stats.linked == 1 and stats.copied == 3


def test_swap_falls_back_to_two_renames_and_recovers_from_a_crash_between_them(tmp_path, monkeypatch):
    live, build = tmp_path / "env", tmp_path / ".env.txn-1"
    live.mkdir()
    (live / "old").touch()
    build.mkdir()
    (build / "new").touch()

    def unsupported(a, b):
        raise OSError(errno.EINVAL, "not here")

    monkeypatch.setattr(transaction, "exchange", unsupported)
    swap_in(build, live)
    assert (live / "new").exists() and (build / "old").exists()
    # A crash between the two renames leaves the environment aside: recover() puts it back.
    aside = tmp_path / ".env.swap-ab12"
    os.rename(live, aside)
    assert transaction.recover(live) and (live / "new").exists() and not aside.exists()
    assert not transaction.recover(live)


def test_exchange_is_atomic_where_the_filesystem_has_it(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "in-a").touch()
    transaction.exchange(a, b)
    assert (b / "in-a").exists() and not (a / "in-a").exists()


@pytest.mark.parametrize(
    "when", ["Copying the environment aside", "Solving", "Installing packages", "Swapping", "DONE"]
)
async def test_kill_9_at_any_moment_leaves_one_whole_environment_and_a_truthful_task(
    service, tmp_path, victims, when
):
    home = service.user_env_dir.parent
    await service.clone("demo", "victim")
    prefix = service.user_env_dir / "victim"
    before = snapshot(prefix)
    state = tmp_path / "tasks.json"
    victim = victims(home, "victim", state, add=["tabulate"], remove=[])
    victim.until(when)
    victim.kill()
    task_id = victim.task_id
    assert task_id

    await service.cleanup_stale()  # what the next server start does
    applied = history.holds(prefix, task_id)
    if applied:
        assert _python(prefix, "import tabulate").returncode == 0
    else:
        assert snapshot(prefix) == before
    assert when != "DONE" or applied
    assert temporaries(service.user_env_dir) == []
    assert _python(prefix, "import ipykernel").returncode == 0

    tasks = TaskManager(state, recover=service.interrupted_note)
    task = tasks.get(task_id)
    if when == "DONE":
        assert task.state == "succeeded"
    elif task.state == "succeeded":
        # Killed after "Swapping": the swap is done before the signal lands (its end on record or
        # not). A success is then the truth, and only then.
        assert when == "Swapping" and applied
        assert task.message == "Done" or "had been applied" in task.message, task.message
    else:
        assert task.state == "failed" and task.reason == "interrupted"
        assert task.message.startswith("Interrupted by a server restart.")
        said_applied = "had been applied" in task.message
        assert said_applied == applied, task.message


@pytest.mark.parametrize("when", ["READY", "APPLIED"])
async def test_an_undo_killed_is_told_as_it_ended_on_disk(service, tmp_path, victims, when):
    """Killed before its swap (READY) or after it, before its end was recorded (APPLIED): the restart
    looks at the environment and records what happened, an applied undo as succeeded."""
    home = service.user_env_dir.parent
    await service.clone("demo", "undone")
    prefix = service.user_env_dir / "undone"
    await service.change_packages("undone", ["tabulate"], [], change_id="added")
    state = tmp_path / "tasks.json"
    victim = victims(home, "undone", state, action="undo", pause=when)
    victim.until(when)
    victim.kill()
    task_id = victim.task_id
    assert task_id
    if when == "READY":  # as if killed between writing the undo's entry and the swap
        history.append(previous_states(prefix)[0], {"id": task_id, "kind": "undo"})

    await service.cleanup_stale()  # what the next server start does
    applied = _python(prefix, "import tabulate").returncode != 0
    assert applied == (when == "APPLIED") == history.holds(prefix, task_id)
    task = TaskManager(state, recover=service.interrupted_note).get(task_id)
    assert task.message.startswith("Interrupted by a server restart.")
    if applied:
        assert task.state == "succeeded" and "The undo had been applied" in task.message, task
        assert [c.id for c in (await service.history("undone")).changes] == [task_id]
    else:
        assert (task.state, task.reason) == ("failed", "interrupted") and "as it was" in task.message, task
        assert not any(history.holds(kept, task_id) for kept in previous_states(prefix))
        assert [c.id for c in (await service.history("undone")).changes] == ["added"]
    assert temporaries(service.user_env_dir) == []
