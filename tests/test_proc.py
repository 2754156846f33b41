import asyncio
import os
import subprocess
import sys

import psutil
import pytest
from helpers import wait_until, wait_until_sync

from jupyter_gpu_env import proc
from jupyter_gpu_env.errors import CommandFailed, CommandTimeout, Conflict


async def test_runs_argv_and_captures_output():
    r = await proc.run([sys.executable, "-c", "import sys; print('out'); print('err', file=sys.stderr)"])
    assert r.returncode == 0
    assert r.stdout == "out\n"
    assert r.stderr == "err\n"


async def test_shell_strings_are_refused():
    with pytest.raises(TypeError):
        await proc.run("echo hi; rm -rf /")  # type: ignore[arg-type]


async def test_arguments_are_never_interpreted_by_a_shell(tmp_path):
    marker = tmp_path / "pwned"
    r = await proc.run(["echo", f"$(touch {marker})", ";", "ls"])
    assert r.stdout.strip() == f"$(touch {marker}) ; ls"
    assert not marker.exists()


async def test_nonzero_exit_raises_with_output():
    with pytest.raises(CommandFailed) as e:
        await proc.run([sys.executable, "-c", "import sys; print('boom', file=sys.stderr); sys.exit(7)"])
    assert e.value.returncode == 7
    assert "boom" in e.value.message


async def test_check_false_returns_the_code():
    r = await proc.run([sys.executable, "-c", "raise SystemExit(3)"], check=False)
    assert r.returncode == 3


async def test_missing_program_is_a_conflict():
    with pytest.raises(Conflict) as e:
        await proc.run(["definitely-not-a-tool-xyz"])
    assert e.value.reason == "tool_missing"


async def test_line_callback_sees_lines_as_they_come():
    seen = []

    async def on_line(line):
        seen.append(line)

    await proc.run([sys.executable, "-c", "print('a'); print('b')"], on_stdout=on_line)
    assert seen == ["a", "b"]


async def test_timeout_kills_the_whole_process_group(tmp_path):
    pidfile = tmp_path / "child.pid"
    code = (
        "import subprocess, sys, time;"
        f"c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']);"
        f"open({str(pidfile)!r}, 'w').write(str(c.pid)); time.sleep(60)"
    )
    with pytest.raises(CommandTimeout):
        await proc.run([sys.executable, "-c", code], timeout=1.5, kill_grace=1)
    grandchild = int(pidfile.read_text())
    # The group had SIGTERM at the timeout, SIGKILL a second later; the grandchild (asleep for a
    # minute) ends long before then unless it was left out.
    await wait_until(lambda: not _alive(grandchild), within=5, what=f"grandchild {grandchild} ending")


async def _a_cancelled_run_ends_its_child(tmp_path, **options) -> None:
    """Cancel ``proc.run`` (with ``options``) of a child that would sleep a minute: the child is gone."""
    pidfile = tmp_path / "pid"
    code = f"import os, time; open({str(pidfile)!r}, 'w').write(str(os.getpid())); time.sleep(60)"
    task = asyncio.ensure_future(proc.run([sys.executable, "-c", code], kill_grace=1, **options))
    await wait_until(lambda: pidfile.exists() and pidfile.read_text(), within=10, what="the child starting")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not _alive(int(pidfile.read_text()))


async def test_cancel_terminates_the_child(tmp_path):
    await _a_cancelled_run_ends_its_child(tmp_path)


async def test_stdin_is_passed():
    r = await proc.run([sys.executable, "-c", "import sys; print(sys.stdin.read().upper())"], stdin=b"hello")
    assert r.stdout.strip() == "HELLO"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); look at its state.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


async def test_carriage_returns_split_progress_updates():
    seen = []
    code = "import sys; sys.stderr.write('10%\\r50%\\r100%\\ndone\\n')"
    r = await proc.run([sys.executable, "-c", code], on_stderr=seen.append)
    assert seen == ["10%", "50%", "100%", "done"]
    assert r.stderr == "10%\r50%\r100%\ndone\n"


async def test_rlimits_bound_the_child(tmp_path):
    import resource

    target = tmp_path / "big"
    code = f"open({str(target)!r}, 'wb').write(b'x' * 100_000)"
    with pytest.raises(CommandFailed):
        await proc.run([sys.executable, "-c", code], rlimits={resource.RLIMIT_FSIZE: (10_000, 10_000)})
    assert target.stat().st_size <= 10_000


def test_a_tethered_child_and_all_it_started_end_when_its_starter_is_killed(tmp_path):
    """A server (here a small process) runs a command tethered and is killed with SIGKILL: the command,
    and the process the command started, end with it, instead of going on as orphans."""
    pids = tmp_path / "pids"
    command = (
        "import subprocess, sys, time;"
        "c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']);"
        f"open({str(pids)!r}, 'w').write(f'{{c.pid}}'); time.sleep(600)"
    )
    server = (
        "import asyncio, sys\n"
        "from jupyter_gpu_env import proc\n"
        "async def main():\n"
        f"    await proc.run([sys.executable, '-c', {command!r}], tethered=True)\n"
        "asyncio.run(main())\n"
    )
    starter = subprocess.Popen([sys.executable, "-c", server])
    try:
        wait_until_sync(lambda: pids.exists() and pids.read_text(), within=30, what="the command starting")
        family = psutil.Process(starter.pid).children(recursive=True)
        grandchild = int(pids.read_text())
        assert grandchild in {p.pid for p in family} and len(family) == 3  # tether, command, its child
    finally:
        starter.kill()
        starter.wait()
    wait_until_sync(
        lambda: not any(_alive(p.pid) for p in family), within=10, what="the tethered family ending"
    )


async def test_a_tethered_child_answers_as_it_would_untethered(tmp_path):
    done = await proc.run([sys.executable, "-c", "import sys; print(input()); sys.exit(3)"], stdin=b"hi\n",
                          check=False, tethered=True)  # fmt: skip
    assert (done.returncode, done.stdout) == (3, "hi\n")
    with pytest.raises(Conflict, match="not found"):
        await proc.run(["gpu-env-no-such-program"], tethered=True)
    await _a_cancelled_run_ends_its_child(tmp_path, tethered=True)


async def test_a_tethered_command_whose_tether_is_killed_alone_ends_too():
    """asyncio kills only the process it started when a transport is dropped (a clone cancelled while
    its worker was starting): that is the tether, and its command was left holding the caller's pipes,
    so the CLI waited on them for ever (the fresh-clone run hung so). The command ends with its tether,
    and stopping what is left of the group is harmless."""
    import psutil

    started = await proc.start(["sleep", "300"], tethered=True)
    tether = psutil.Process(started.process.pid)
    command = (await wait_until(tether.children, what="the tethered command"))[0]
    tether.kill()
    await wait_until(lambda: not _alive(command.pid), what="the command ending with its tether")
    await asyncio.wait_for(started.stop(kill_grace=1.0), 20)


async def test_no_child_carries_the_sites_secrets(tmp_path, monkeypatch):
    """Set again in this process after the server took it, or handed in a child's own environment, the
    SMTP password reaches no child: run, started or detached; the other variables do."""
    monkeypatch.setenv("GPU_ENV_SMTP_PASSWORD", "s3cret")
    monkeypatch.setenv("GPU_ENV_TEST_KEPT", "kept")
    show = [
        sys.executable,
        "-c",
        "import os; print(os.environ.get('GPU_ENV_SMTP_PASSWORD'), os.environ.get('GPU_ENV_TEST_KEPT'))",
    ]
    assert (await proc.run(show)).stdout == "None kept\n"
    given = {**os.environ, "GPU_ENV_TEST_KEPT": "given"}
    assert (await proc.run(show, env=given)).stdout == "None given\n"
    assert (await proc.run(show, env=proc.own_package_env())).stdout == "None kept\n"
    started = await proc.start(show, tethered=True)
    assert (await started.finish()).stdout == "None kept\n"

    out = tmp_path / "out.txt"
    proc.spawn_detached(show, cwd=tmp_path, env=None, stdout_path=out)
    await wait_until(lambda: out.read_text() == "None kept\n", what=lambda: f"out.txt: {out.read_text()!r}")
    proc.spawn_detached(show, cwd=tmp_path, env=given, stdout_path=out)
    await wait_until(lambda: out.read_text() == "None kept\nNone given\n", what=lambda: repr(out.read_text()))
