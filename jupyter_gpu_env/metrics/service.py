"""``MetricsService``: the collector put into Jupyter Server's registry (prometheus_client's default
``REGISTRY``, which its /metrics serves) while the server runs, and the ledger read into it by the
server's ``metrics`` timer, on a database connection and thread of its own.

One collector serves a process: a second server started in the same process (tests start many) takes
the registration over, and a stopped one removes only its own.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from prometheus_client import REGISTRY, CollectorRegistry

from ..jobs.store import JobStore
from ..models.gpu import GpuSnapshot
from ..tasks import cancel_and_wait
from .collector import GpuEnvCollector
from .records import MetricsRecords

log = logging.getLogger(__name__)

_registered: dict[int, GpuEnvCollector] = {}  # id(registry) -> the collector this process put there


class MetricsService:
    def __init__(
        self,
        store: JobStore,
        latest: Callable[[], GpuSnapshot | None],
        *,
        user: str | None = None,
        registry: CollectorRegistry = REGISTRY,
    ) -> None:
        self.records = MetricsRecords(store.path)
        self.collector = GpuEnvCollector(latest, user)
        self.registry = registry
        self._reading = asyncio.Lock()  # one reading at a time, each after the one before
        self._first: asyncio.Task[None] | None = None

    async def refresh(self) -> None:
        """Read the ledger (off the event loop) and make it what the next scrape serves."""
        async with self._reading:
            earlier = self.collector.totals
            self.collector.totals = (await self.records.read(earlier)).after(earlier)

    async def _first_reading(self) -> None:
        try:
            await self.refresh()
        except Exception:  # the timer reads again
            log.exception("reading the job records for /metrics failed")

    async def start(self) -> None:
        """Register the collector and start the first reading, in the background: the server's start
        does not wait for it, and until it is done /metrics carries the live series only."""
        key = id(self.registry)
        earlier = _registered.pop(key, None)
        if earlier is not None:
            log.warning("another server of this process had registered its metrics; this one's replace them")
            self.registry.unregister(earlier)
        try:
            self.registry.register(self.collector)
        except ValueError as e:  # another package registered one of our names
            log.warning("the extension's metrics are not served on /metrics: %s", e)
            return
        _registered[key] = self.collector
        self._first = asyncio.ensure_future(self._first_reading())

    async def stop(self) -> None:
        await cancel_and_wait(self._first, quiet=True)
        key = id(self.registry)
        if _registered.get(key) is self.collector:
            del _registered[key]
            self.registry.unregister(self.collector)
        await asyncio.to_thread(self.records.close)
