"""The local backend's runners as processes: which live process is a job's runner, and signalling it.

A pid is believed only while it is the runner of the job's folder (its command line names the folder and
it leads its own session), so that a pid file the job's own code rewrote can neither keep a job
"running" nor aim a signal at another process.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import psutil

from ... import proc
from ...contracts import jobfiles
from ...models.jobs import Job
from ..base import Observation

log = logging.getLogger(__name__)

# A pid file that still says "launching" this long after the launch began means the server died
# between writing it and starting the runner.
LAUNCH_TIMEOUT = 30.0
HOST = "127.0.0.1"  # where a local job runs, as its observation says (``Observation.host``)


def recorded_pid(job: Job) -> int | None:
    """The runner's pid as the server recorded it at the launch."""
    bid = job.backend_job_id
    return int(bid) if bid is not None and bid.isdigit() else None


def runner_started(pid: int, folder: Path) -> float | None:
    """When the runner of ``folder`` started, while ``pid`` is that runner."""
    p = runner_of(pid, folder)
    try:
        return None if p is None else float(p.create_time())
    except psutil.Error:
        return None


def find_runner(folder: Path) -> int | None:
    """The pid of a live runner of ``folder`` found among all processes, when no pid can be believed:
    a session leader whose command line is ``... -m jupyter_gpu_env.runner FOLDER``."""
    for p in psutil.process_iter(["cmdline", "status"]):
        try:
            argv = p.info["cmdline"] or []
            if (
                p.info["status"] != psutil.STATUS_ZOMBIE
                and argv[-1:] == [str(folder)]
                and "jupyter_gpu_env.runner" in argv
                and os.getsid(p.pid) == p.pid
            ):
                return int(p.pid)
        except (psutil.Error, OSError):
            continue
    return None


def believable(info: jobfiles.PidFile | None) -> bool:
    """Could a launcher of ours have written this pid file? Each names its runner, or its launch."""
    return info is not None and (info.pid is not None or info.launching_at is not None)


def runner_of(pid: int, folder: Path) -> psutil.Process | None:
    """The live process ``pid`` when it is the runner of ``folder``: it leads its own session and its
    command line is ``... -m jupyter_gpu_env.runner FOLDER`` (or ``nice`` about to become that).

    Or a child this server started moments ago: between its fork and its exec a child still bears the
    server's command line (and, before its ``setsid``, its session). A job's own code cannot make one:
    what it starts are the runner's descendants, not the server's children."""
    try:
        p = psutil.Process(pid)
        if p.status() == psutil.STATUS_ZOMBIE:
            return None
        if p.ppid() == os.getpid() and time.time() - p.create_time() < LAUNCH_TIMEOUT:
            return p
        argv = p.cmdline()
        if os.getsid(pid) == pid and "jupyter_gpu_env.runner" in argv and argv[-1:] == [str(folder)]:
            return p
    except (psutil.Error, OSError):
        pass
    return None


def pid_alive(pid: int) -> bool:
    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False


def signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)  # the runner leads its own session: its group is everything it started


def launch_runner(
    folder: Path, argv: list[str], env: dict[str, str], nice: int, devices: list[str]
) -> Observation:
    """Start the runner of ``folder`` detached, unless another process has claimed the job first."""
    # Claim the job first, exclusively: of two processes polling the same store (the server
    # and a CLI), only one starts it; and a server that dies before the pid is written
    # leaves a trace, not a job that a restart would start a second time.
    if not _claim(folder) and not (_clear_stray(folder) and _claim(folder)):
        return Observation(state="running")
    pid = proc.spawn_detached(argv, cwd=folder, env=env, stdout_path=folder / jobfiles.LOG, nice=nice)
    started = time.time()
    try:
        create_time = psutil.Process(pid).create_time()
    except psutil.Error:
        create_time = None  # already gone: its status.json (or its absence) tells the rest
    jobfiles.write_json_atomic(
        folder / jobfiles.PID,
        {"pid": pid, "create_time": create_time, "started_at": started, "devices": devices},
    )
    return Observation(state="running", backend_job_id=str(pid), started_at=started, host=HOST)


def _claim(folder: Path) -> bool:
    """Write the launch's pid file if there is none, whole or not at all (linked into place), so that
    another process never reads a claim half-written and takes it for a stray one."""
    path = folder / jobfiles.PID
    draft = folder / f".{jobfiles.PID}.{os.getpid()}-{time.monotonic_ns()}"
    draft.write_text(json.dumps({"pid": None, "launching_at": time.time()}))
    try:
        os.link(draft, path)
        return True
    except FileExistsError:
        return False
    except OSError:  # a filesystem without hard links: create exclusively, then fill
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            return False
        with os.fdopen(fd, "w") as f:
            f.write(draft.read_text())
        return True
    finally:
        draft.unlink(missing_ok=True)


async def stop_within(pid: int, grace: float, folder: Path | None) -> None:
    """SIGKILL the group of ``pid`` (already sent SIGTERM) when it has not ended within ``grace``
    seconds; for a cancel, take ``folder``'s pid file away once the runner is gone."""
    if not await _ended_within(pid, grace, 0.2):
        signal_group(pid, signal.SIGKILL)
        await _ended_within(pid, 10.0, 0.05)  # a killed group is reaped at once: a bound, not a wait
    if folder is not None and not pid_alive(pid):
        await asyncio.to_thread(clear_ended, folder)


async def _ended_within(pid: int, seconds: float, every: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        await asyncio.sleep(every)
    return not pid_alive(pid)


def _clear_stray(folder: Path) -> bool:
    """Take away a pid file no launcher of ours wrote (damaged, or naming neither runner nor launch:
    another job's code may write into a queued job's folder) while no runner of the folder lives;
    True when it is gone. A claim another process made meanwhile is kept."""
    if find_runner(folder) is not None or not _take_away(folder, believable):
        return False
    log.warning("%s: a runner.pid no launch wrote was removed before the job started", folder)
    return True


def clear_ended(folder: Path) -> None:
    """Take away the pid file of a job that has ended, unless it names a live runner of the folder:
    nothing in the folder of an ended job says a runner lives."""

    def live(info: jobfiles.PidFile | None) -> bool:
        return info is not None and info.pid is not None and runner_of(info.pid, folder) is not None

    _take_away(folder, live)


def _take_away(folder: Path, keep: Callable[[jobfiles.PidFile | None], bool]) -> bool:
    """Remove ``folder``'s pid file unless ``keep`` says otherwise of it (None: damaged); True when it
    is gone. It is moved aside before it is read, so a claim another process made meanwhile is put
    back, never removed."""
    path = folder / jobfiles.PID
    aside = folder / f".{jobfiles.PID}.aside-{os.getpid()}-{time.monotonic_ns()}"
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    try:
        try:
            info = jobfiles.read_model(aside, jobfiles.PidFile, jobfiles.MAX_SMALL)
        except jobfiles.Damaged:
            info = None
        if keep(info):
            with contextlib.suppress(FileExistsError):
                os.link(aside, path)
            return False
        return True
    finally:
        aside.unlink(missing_ok=True)
