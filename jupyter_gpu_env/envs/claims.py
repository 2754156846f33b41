"""One operation at a time per environment name, in this server and across processes (the CLI); and
the proof that a temporary is being worked on by a live process.

A claim is taken in two steps: the name is reserved in this process synchronously (so that of twenty
concurrent requests for one name exactly one gets it, at once, without a thread hop), then an
exclusive ``flock`` is taken on ``<user_env_dir>/.gpu-env-locks/<name>.lock`` in a worker thread (so that a command
line working on the same name is seen, and the server's start does not sweep the CLI's temporaries).
The operating system drops the lock when its process dies, ``kill -9`` included, so a crash never
leaves a name claimed. Lock files are never deleted: removing one would race with its next user.

A temporary (a build ``.<name>.partial-<hex>``, a transaction's copy ``.<name>.txn-<hex>``) carries its
own proof of life: ``<temporary>.lock`` beside it, made and ``flock``-ed before the temporary is made and
held until it is gone (:func:`working_on`). A server's start sweeps what crashed processes left, and a
name's claim cannot tell it all: the name of a temporary is not always the name claimed (a publish
claims the user's environment and builds under its shared name), and a second server of the same user
(JupyterHub's named servers) may keep its claims elsewhere. The marker is checked by the temporary's
own name, in the folder it is in, so only what no live process works on is swept (:func:`worked_on`).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
from collections.abc import AsyncIterator
from pathlib import Path

from ..errors import Conflict


class Claim:
    """A held name; release it once the operation has ended (idempotent). A context manager."""

    def __init__(self, owner: Claims, name: str) -> None:
        self.owner = owner
        self.name = name
        self._fd: int | None = None
        self.released = False

    def release(self) -> None:
        if self.released:
            return
        self.released = True
        if self._fd is not None:
            os.close(self._fd)  # closing drops the flock
            self._fd = None
        self.owner._held.discard(self.name)

    def __enter__(self) -> Claim:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


LOCK_DIR = ".gpu-env-locks"


class Claims:
    def __init__(self, envs_dir: Path) -> None:
        self.root = envs_dir / LOCK_DIR
        self._held: set[str] = set()

    def held_here(self, name: str) -> bool:
        return name in self._held

    def reserve(self, name: str, busy_message: str) -> Claim:
        """Reserve ``name`` in this process, or Conflict(busy) at once; then :meth:`lock` it."""
        if name in self._held:
            raise Conflict(busy_message, reason="busy")
        self._held.add(name)
        return Claim(self, name)

    async def lock(self, claim: Claim, busy_message: str) -> None:
        """Take the cross-process lock of a reserved claim; releases it and raises Conflict if taken."""
        try:
            claim._fd = await asyncio.to_thread(self._flock, claim.name)
        except BaseException:
            claim.release()
            raise
        if claim._fd is None:
            claim.release()
            raise Conflict(busy_message, reason="busy")

    async def take(self, name: str, busy_message: str) -> Claim:
        claim = self.reserve(name, busy_message)
        await self.lock(claim, busy_message)
        return claim

    def _flock(self, name: str) -> int | None:
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.root / f"{name}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        return fd

    def locked_elsewhere(self, name: str) -> bool:
        """Blocking: does another process hold the lock of ``name``? (For the start's sweep.)"""
        return name in self._held or _locked(self.root / f"{name}.lock", os.O_RDWR | os.O_CLOEXEC)


# ----- a temporary's proof of life -----

_MARKER_OPEN = os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW


def marker_of(temporary: Path) -> Path:
    return temporary.with_name(f"{temporary.name}.lock")


def _mark(temporary: Path) -> int:
    """Make and lock the marker of ``temporary`` (before it exists); returns the held descriptor."""
    path = marker_of(temporary)
    while True:
        fd = os.open(path, _MARKER_OPEN | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            held, there = os.fstat(fd), os.stat(path, follow_symlinks=False)
            if (held.st_dev, held.st_ino) == (there.st_dev, there.st_ino):
                return fd
        except FileNotFoundError:
            pass  # a sweep removed it between our open and our lock (it was not held yet): again
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)


def _unmark(temporary: Path, fd: int) -> None:
    """The work on ``temporary`` is over (it is gone, or in place under its final name)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(marker_of(temporary))
    os.close(fd)  # only now: until the marker is gone, it says the temporary is worked on


@contextlib.asynccontextmanager
async def working_on(temporary: Path) -> AsyncIterator[None]:
    """Hold the proof that this process works on ``temporary`` for the block, which makes it and
    removes it (or renames it into place) before leaving."""
    marking = asyncio.ensure_future(asyncio.to_thread(_mark, temporary))
    try:
        fd = await asyncio.shield(marking)
    except asyncio.CancelledError:  # not left held until this process ends
        await asyncio.to_thread(_unmark, temporary, await marking)
        raise
    try:
        yield
    finally:
        await asyncio.shield(asyncio.to_thread(_unmark, temporary, fd))


def worked_on(temporary: Path) -> bool:
    """Blocking: does a live process (this one included) hold the marker of ``temporary``?"""
    return _locked(marker_of(temporary), _MARKER_OPEN)


def _locked(path: Path, flags: int) -> bool:
    """Blocking: does a live process hold an flock on ``path``? No when it is missing or unreadable."""
    try:
        fd = os.open(path, flags)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # also drops the lock we may just have taken
    return False


def drop_marker(temporary: Path) -> None:
    """Blocking: remove the marker of a temporary no live process works on (one held is left)."""
    try:
        fd = os.open(marker_of(temporary), _MARKER_OPEN)
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(marker_of(temporary))
    except BlockingIOError:
        pass
    finally:
        os.close(fd)
