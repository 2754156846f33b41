"""A schedule's lock: one change of a schedule at a time, in this server and across the processes that
share its folder (the SLURM chain's tick and a CronJob's pod making a run, another Jupyter server, the
command line).

It is ``<schedules>/.locks/<folder name>.lock``, beside the schedules' folders and not in them. A run's
notebook works in ``<schedule>/runs/<run>/`` with the user's own rights: a ``schedule.lock`` two folders
above it, where this lock once was, is the first thing a run's code looking for "its schedule's lock"
finds, and a run that held it stalled every change of its schedule and, through the threads that waited,
the whole server. The tick and the server find this one from the schedule folder's path
(:func:`lock_path`); nothing in a run's tree names it, and a run has no reason to look beside its
schedule's folder.

The tick, a process of its own, waits for the lock as long as it takes (:func:`locked`). The server
waits only so long, and parks no thread (asyncio's default executor has a handful, shared by every
request): its operations on one schedule queue on an asyncio lock, and the file lock is tried without
blocking, again after a growing pause, until a deadline of a few seconds (:class:`ScheduleLocks`); then
the request is a 409 ``busy`` that says what holds the lock and what to do.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import time
import weakref
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

from ...errors import Conflict

LOCKS = ".locks"
WAIT = 5.0  # seconds a request waits for a schedule's lock before it is answered busy
_FIRST_PAUSE, _LONGEST_PAUSE = 0.01, 0.5
_FLAGS = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC


def lock_path(folder: Path) -> Path:
    """The lock of the schedule whose folder is ``folder``."""
    return folder.parent / LOCKS / f"{folder.name}.lock"


def _open(folder: Path) -> int:
    path = lock_path(folder)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    return os.open(path, _FLAGS, 0o600)


@contextlib.contextmanager
def locked(folder: Path) -> Iterator[None]:
    """Hold the schedule's lock, waiting as long as it takes: for the tick, a process of its own."""
    fd = _open(folder)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing lets go of the flock


def _try(folder: Path) -> int | None:
    """The lock taken without waiting (its descriptor, closing it lets go), or None: it is held."""
    fd = _open(folder)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return fd
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise


def _let_go(attempt: asyncio.Future[int | None]) -> None:
    if not attempt.cancelled() and attempt.exception() is None and (fd := attempt.result()) is not None:
        os.close(fd)


@contextlib.asynccontextmanager
async def bounded(lock: asyncio.Lock, wait: float, busy: str) -> AsyncIterator[None]:
    """Hold an asyncio lock, waiting for it ``wait`` seconds at most: then a 409 ``busy`` saying ``busy``."""
    try:
        async with asyncio.timeout(max(wait, 0)):
            await lock.acquire()
    except TimeoutError:
        raise Conflict(busy, reason="busy") from None
    try:
        yield
    finally:
        lock.release()


class ScheduleLocks:
    """The server's side of the schedules' locks: one operation per schedule at a time, every wait bounded."""

    def __init__(self, wait: float = WAIT) -> None:
        self.wait = wait
        # A schedule's in-process lock lives while someone holds or waits for it.
        self._here: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()

    @contextlib.asynccontextmanager
    async def hold(self, schedule_id: str, folder: Path, name: str) -> AsyncIterator[None]:
        """Hold the schedule's lock, in this process and across processes, or raise Conflict(busy)."""
        deadline = time.monotonic() + self.wait
        here = self._here.setdefault(schedule_id, asyncio.Lock())
        in_process = (
            f"Schedule '{name}' is busy: another change to it is under way in this server. Nothing was "
            "changed: try again when it has ended."
        )
        async with bounded(here, self.wait, in_process):
            fd = await self._flock(folder, name, deadline)
            try:
                yield
            finally:
                os.close(fd)

    async def _flock(self, folder: Path, name: str, deadline: float) -> int:
        pause = _FIRST_PAUSE
        while True:
            # Each try is one call that does not block, on a thread (a lock on shared storage is a
            # round trip); a try still going when the request is cancelled lets go of what it takes.
            future = asyncio.get_running_loop().run_in_executor(None, _try, folder)
            try:
                fd = await asyncio.shield(future)
            except asyncio.CancelledError:
                future.add_done_callback(_let_go)
                raise
            if fd is not None:
                return fd
            left = deadline - time.monotonic()
            if left <= 0:
                who = await asyncio.to_thread(holder, lock_path(folder))
                raise Conflict(_busy(name, who, self.wait), reason="busy")
            await asyncio.sleep(min(pause, left))  # a back-off between tries, not a wait for an event
            pause = min(pause * 2, _LONGEST_PAUSE)


def timer_busy(name: str) -> str:
    """What a request that waited too long for the server's timer (a round of it) is told."""
    return (
        f"Schedule '{name}' is busy: this server's timer is starting and adopting the schedules' runs. "
        "Nothing was changed: try again in a moment."
    )


def _busy(name: str, who: str | None, wait: float) -> str:
    by = who or "a process on another machine, or one this server cannot see"
    return (
        f"Schedule '{name}' is busy: its lock has been held for more than {wait:g} s by {by}. The job that "
        "starts its runs on the cluster holds it while it submits a run, and another Jupyter server or a "
        "`jupyter gpu-env` command while it changes this schedule. Nothing was changed: try again in a "
        "minute; if it stays busy, see what holds the lock, and end it if it is stuck."
    )


def holder(path: Path) -> str | None:
    """The process of this machine that holds the flock on ``path``, from Linux's /proc/locks: "process
    1234 (its command line)"; None when none is seen (on shared storage it may be on another node)."""
    try:
        st = os.stat(path)
        with open("/proc/locks", "rb") as f:
            table = f.read(4 << 20).decode(errors="replace")
    except OSError:
        return None
    device = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for line in table.splitlines():
        fields = line.split()  # "1: FLOCK  ADVISORY  WRITE 1234 fe:00:5678 0 EOF"; a waiter has "->"
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == device and fields[4].isdigit():
            pid = fields[4]
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    command = f.read(4096).replace(b"\0", b" ").decode(errors="replace").strip()
            except OSError:
                command = ""
            return f"process {pid}" + (f" ({command[:200]})" if command else "")
    return None
