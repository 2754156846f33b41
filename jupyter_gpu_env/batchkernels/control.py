"""The server's end of a kernel host's control channel: one signed request at a time, each answered
or given up after a timeout (a node that is gone answers nothing; the caller decides what that means).

The key comes from the host's own ``kernel/host.json`` in the job's folder, which only the owner can
read: the key never crosses the network. Requests are numbered from the clock in microseconds, so a
new client (the server restarted) never reuses a number the host has already seen.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import zmq
import zmq.asyncio

from ..contracts.batchkernel import wire
from ..contracts.batchkernel.files import HostFile

REQUEST_TIMEOUT = 5.0


class HostUnreachable(Exception):
    """The host did not answer in time, or its answer was not signed with its key."""


class HostClient:
    def __init__(self, host: HostFile, context: zmq.asyncio.Context | None = None) -> None:
        self._key = host.key.encode("ascii")
        self._context = context or zmq.asyncio.Context.instance()
        self._address = f"tcp://{host.host}:{host.control_port}"
        self._socket: zmq.asyncio.Socket | None = None
        self._lock = asyncio.Lock()
        self._seq = 0

    async def request(self, op: wire.Op, *, within: float = REQUEST_TIMEOUT, **fields: Any) -> wire.Reply:
        """Send ``op`` and wait for its reply; :class:`HostUnreachable` after ``within`` seconds."""
        async with self._lock:  # one request in flight: replies come back in order
            socket = self._connect()
            self._seq = max(self._seq + 1, int(time.time() * 1e6))
            request = wire.Request(op=op, seq=self._seq, sent_at=time.time(), **fields)
            await socket.send_multipart(wire.pack(self._key, request))
            deadline = time.monotonic() + within
            while (left := deadline - time.monotonic()) > 0:
                if not await socket.poll(int(left * 1000)):
                    break
                reply = wire.reply(self._key, await socket.recv_multipart())
                if reply is not None and reply.seq == request.seq:
                    return reply
                # A late answer to a request given up on, or noise: not this one's.
            # The socket may hold a late reply now: start afresh next time.
            self.close()
            raise HostUnreachable(
                f"the kernel host at {self._address} did not answer '{op}' within {within:g} s"
            )

    def _connect(self) -> zmq.asyncio.Socket:
        if self._socket is None:
            self._socket = self._context.socket(zmq.DEALER)
            self._socket.linger = 0
            self._socket.connect(self._address)
        return self._socket

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close(0)
            self._socket = None
