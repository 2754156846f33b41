"""A child process started ahead of need: it loads its libraries while nobody waits, then its request.

The conda worker (py-rattler) and the image packer (conda-pack) each take 0.05-0.15 s to start a Python
and import, more on a busy or slow disk; a server keeps one of each ready, so that an operation starts at
once. The child's side of the contract: import first, then wait for the request on stdin, and leave on
end-of-file (the server is gone) or after a while without a request.
"""

from __future__ import annotations

import asyncio
import logging
import select
import sys
from collections.abc import Mapping, Sequence

from .. import proc
from ..errors import GpuEnvError

log = logging.getLogger(__name__)

IDLE_SECONDS = 900  # a spare nobody asked for in this time leaves


def read_request(idle: float = IDLE_SECONDS) -> bytes | None:
    """The child's side: wait for the whole request on stdin; None when the server closed the pipe
    without one (it stopped, or died) or after ``idle`` seconds without one."""
    ready, _, _ = select.select([sys.stdin], [], [], idle)
    if not ready:
        return None
    return sys.stdin.buffer.read() or None


class SpareProcess:
    """Starts ``argv`` (with :func:`proc.start`'s options) for each operation, keeping one started ahead
    once :meth:`warm_up` has been called (a server does; a command-line run does not)."""

    def __init__(
        self,
        argv: Sequence[str],
        what: str,
        *,
        env: Mapping[str, str] | None = None,
        rlimits: Mapping[int, tuple[int, int]] | None = None,
        nice: int = 0,
        tethered: bool = False,
    ) -> None:
        self.argv = list(argv)
        self.what = what
        self._options = {"env": env, "rlimits": rlimits, "nice": nice, "tethered": tethered}
        self._spare: proc.Started | None = None
        self._spare_loop: asyncio.AbstractEventLoop | None = None  # a child is its event loop's
        self._spawning: asyncio.Task[None] | None = None
        self._keep = False

    async def _start(self) -> proc.Started:
        return await proc.start(self.argv, **self._options)  # type: ignore[arg-type]

    async def warm_up(self) -> None:
        """Keep one started from now on."""
        self._keep = True
        if self._usable():
            return
        try:
            self._spare = await self._start()
            self._spare_loop = asyncio.get_running_loop()
        except GpuEnvError as e:  # a missing program says so again when an operation needs it
            log.warning("could not start a spare %s: %s", self.what, e.message)

    def _usable(self) -> bool:
        spare = self._spare
        return spare is not None and spare.alive and self._spare_loop is asyncio.get_running_loop()

    async def _spawned(self) -> None:
        """Let a spare being started finish starting (milliseconds): cancelled halfway, its process
        would be started but held by nobody."""
        if self._spawning is not None and not self._spawning.done():
            await asyncio.shield(self._spawning)

    async def take(self) -> proc.Started:
        """The spare if it is still there, else a new process. Call :meth:`replenish` once the
        operation is over (not before: the next spare would take CPU from this one)."""
        await self._spawned()
        usable = self._usable()
        spare, self._spare = self._spare, None
        if spare is not None and usable:
            return spare
        return await self._start()

    def replenish(self) -> None:
        """Start the next spare in the background, if one is kept."""
        if self._keep and (self._spawning is None or self._spawning.done()):
            self._spawning = asyncio.ensure_future(self.warm_up())

    async def close(self) -> None:
        """Stop the spare and keep none from now on."""
        self._keep = False
        await self._spawned()
        usable = self._usable()
        spare, self._spare = self._spare, None
        if spare is not None and usable:
            await spare.stop(kill_grace=1.0)
