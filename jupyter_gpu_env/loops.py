"""Background loops a service runs between its ``start()`` and ``stop()``: each calls its ``tick`` every
``interval`` seconds, and a tick that fails is logged without ending its loop.

The job poller is one (:class:`.service.JobService` adds it); a feature with a timer of its own (a
schedule firing runs, say) adds another with :meth:`Loops.add` rather than starting a task nobody stops.

:class:`Refresher` is the other kind of background work: a refresh started when someone asks for an
answer that has grown stale (what a backend offers), never two at once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from .tasks import cancel_and_wait

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Loop:
    name: str
    interval: float
    tick: Callable[[], Awaitable[None]]


class Loops:
    """Named periodic ticks; started and stopped together."""

    def __init__(self) -> None:
        self._loops: list[_Loop] = []
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._running = False

    def add(self, name: str, interval: float, tick: Callable[[], Awaitable[None]]) -> None:
        """Call ``tick`` every ``interval`` seconds from :meth:`start` (at once when already started)."""
        if any(loop.name == name for loop in self._loops):
            raise ValueError(f"a loop named {name!r} is already added")
        loop = _Loop(name, interval, tick)
        self._loops.append(loop)
        if self._running:
            self._start(loop)

    @property
    def names(self) -> list[str]:
        return [loop.name for loop in self._loops]

    @property
    def running(self) -> list[str]:
        """The loops whose task runs now."""
        return [name for name, task in self._tasks.items() if not task.done()]

    def start(self) -> None:
        self._running = True
        for loop in self._loops:
            if loop.name not in self._tasks:
                self._start(loop)

    async def stop(self) -> None:
        self._running = False
        tasks, self._tasks = self._tasks, {}
        for task in tasks.values():
            await cancel_and_wait(task)

    def _start(self, loop: _Loop) -> None:
        self._tasks[loop.name] = asyncio.get_running_loop().create_task(
            self._run(loop), name=f"gpu-env-{loop.name}"
        )

    @staticmethod
    async def _run(loop: _Loop) -> None:
        while True:
            await asyncio.sleep(loop.interval)
            try:
                await loop.tick()
            except Exception:  # one bad round must not end the loop
                log.exception("the %s loop failed this round", loop.name)


class Refresher:
    """Runs ``refresh`` in the background when :meth:`ask` finds ``stale()`` true and none is running."""

    def __init__(self, refresh: Callable[[], Coroutine[Any, Any, None]], stale: Callable[[], bool]) -> None:
        self._refresh = refresh
        self._stale = stale
        self.task: asyncio.Task[None] | None = None

    def ask(self) -> None:
        if not self._stale() or (self.task is not None and not self.task.done()):
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # a worker thread: the next call on the loop refreshes
        self.task = loop.create_task(self._refresh())

    async def close(self) -> None:
        await cancel_and_wait(self.task, quiet=True)
