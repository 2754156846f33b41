"""One operation at a time per environment name, in this server and across processes (the CLI).

A claim is taken in two steps: the name is reserved in this process synchronously (so that of twenty
concurrent requests for one name exactly one gets it, at once, without a thread hop), then an
exclusive ``flock`` is taken on ``<user_env_dir>/.gpu-env-locks/<name>.lock`` in a worker thread (so that a command
line working on the same name is seen, and the server's start does not sweep the CLI's temporaries).
The operating system drops the lock when its process dies, ``kill -9`` included, so a crash never
leaves a name claimed. Lock files are never deleted: removing one would race with its next user.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
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
        if name in self._held:
            return True
        try:
            fd = os.open(self.root / f"{name}.lock", os.O_RDWR | os.O_CLOEXEC)
        except FileNotFoundError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)  # also drops the lock we may just have taken
        return False
