"""The slots deliveries go out in, so that none waits on another's receiver.

At most ``per_receiver`` deliveries are in flight to one receiver (a webhook's scheme, host and port; the
SMTP server) and ``total`` in all, each with its own timeout: a receiver that hangs holds only its own
few slots, and deliveries to the others go on. The blocking work of a delivery (smtplib, a host name's
lookup) runs on threads of the deliveries' own: asyncio's default executor is the whole server's (every
``to_thread``), six threads on a small machine, which a few SMTP servers that never answer would take.
Webhooks go through an HTTP client of their own with a connection for every slot: tornado's shared one
runs ten requests at once, and the eleventh waited behind ten that hung.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

from tornado.netutil import Resolver
from tornado.simple_httpclient import SimpleAsyncHTTPClient

TOTAL = 32  # deliveries in flight at once, to every receiver together
PER_RECEIVER = 2  # ... and to any one receiver

T = TypeVar("T")


@dataclass
class _Lane:
    turn: asyncio.Semaphore
    users: int = 0


class Lanes:
    """The deliveries' slots, threads and HTTP client; :meth:`close` when the notifier stops."""

    def __init__(self, total: int = TOTAL, per_receiver: int = PER_RECEIVER) -> None:
        self.total = max(1, total)
        self.per_receiver = max(1, min(per_receiver, self.total))
        self._slots = asyncio.Semaphore(self.total)
        self._lanes: dict[str, _Lane] = {}
        # As many threads as slots: a delivery holds its slot until its thread has returned, so one is
        # always free for the next.
        self._threads = ThreadPoolExecutor(self.total, thread_name_prefix="gpu-env-delivery")
        self._http: SimpleAsyncHTTPClient | None = None

    @asynccontextmanager
    async def slot(self, receiver: str) -> AsyncIterator[None]:
        """Hold one of ``receiver``'s slots, then one of all: in that order, so that deliveries waiting
        behind a hung receiver hold none of the slots the others need."""
        lane = self._lanes.get(receiver)
        if lane is None:
            lane = self._lanes[receiver] = _Lane(asyncio.Semaphore(self.per_receiver))
        lane.users += 1
        try:
            async with lane.turn, self._slots:
                yield
        finally:
            lane.users -= 1
            if not lane.users:  # a receiver is remembered while something is sent to it, no longer
                del self._lanes[receiver]

    async def in_thread(self, work: Callable[[], T]) -> T:
        """``work`` (blocking) run on the deliveries' own threads; call it with a slot held."""
        return await asyncio.get_running_loop().run_in_executor(self._threads, work)

    def http(self) -> SimpleAsyncHTTPClient:
        """The deliveries' HTTP client, made on first use (on the running loop, as tornado wants)."""
        if self._http is None:
            self._http = SimpleAsyncHTTPClient(
                force_instance=True, max_clients=self.total, resolver=_ThreadResolver(lanes=self)
            )
        return self._http

    def close(self) -> None:
        """Close the HTTP client and let the threads go (one still in a delivery ends with it)."""
        if self._http is not None:
            self._http.close()
            self._http = None
        self._threads.shutdown(wait=False, cancel_futures=True)


def webhook_receiver(url: str) -> str:
    """Which receiver a webhook's URL names: its scheme, host and port."""
    parts = urlsplit(url)
    try:
        port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    except ValueError:  # not a port number: the delivery will say so; its lane is its host as written
        return f"{parts.scheme.lower()}://{parts.netloc.lower()}"
    return f"{parts.scheme.lower()}://{(parts.hostname or '').lower()}:{port}"


class _ThreadResolver(Resolver):
    """A webhook's host name looked up on the deliveries' threads: tornado's own resolver uses the
    server's default executor, where a name server that does not answer would hold its threads."""

    def initialize(self, lanes: Lanes) -> None:
        self.lanes = lanes

    async def resolve(
        self, host: str, port: int, family: socket.AddressFamily = socket.AF_UNSPEC
    ) -> list[tuple[int, Any]]:
        def lookup() -> list[tuple[int, Any]]:
            found = socket.getaddrinfo(host, port, family, socket.SOCK_STREAM)
            return [(fam, address) for fam, _, _, _, address in found]

        return await self.lanes.in_thread(lookup)
