"""Real receivers on loopback for the notification tests: an SMTP server (aiosmtpd) and an HTTP server
that takes webhooks (tornado), both on this test's event loop, each on a port the system chose. The
fixtures are synchronous (pytest-jupyter runs the async tests): a test awaits ``start()``, and the
fixture stops the server after it."""

from __future__ import annotations

import asyncio
import json
import socket
from email import message_from_bytes, policy
from email.message import EmailMessage
from typing import Any

from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword
from tornado.httpserver import HTTPServer
from tornado.netutil import bind_sockets
from tornado.web import Application, RequestHandler

USER, PASSWORD = "gpu-env", "s3cret"


class Inbox:
    """What the SMTP server received: each message parsed, with its envelope's recipients."""

    def __init__(self) -> None:
        self.messages: list[EmailMessage] = []
        self.raw: list[bytes] = []  # each message as it came, to check what was written on the wire
        self.recipients: list[list[str]] = []
        self.logins: list[str] = []
        # Bound now, so that a server's configuration can name the port before the test starts serving.
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self.port: int = self._socket.getsockname()[1]
        self._server: asyncio.Server | None = None

    async def start(self) -> Inbox:
        self._server = await asyncio.get_running_loop().create_server(
            lambda: SMTP(self, authenticator=self.authenticate, auth_require_tls=False, hostname="localhost"),
            sock=self._socket,
        )
        return self

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
        self._socket.close()

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.raw.append(envelope.original_content or envelope.content)
        parsed = message_from_bytes(envelope.content, policy=policy.default)
        assert isinstance(parsed, EmailMessage)
        self.messages.append(parsed)
        self.recipients.append(list(envelope.rcpt_tos))
        return "250 Message accepted for delivery"

    def authenticate(self, server: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> AuthResult:
        ok = isinstance(data, LoginPassword) and (data.login, data.password) == (
            USER.encode(),
            PASSWORD.encode(),
        )
        if ok:
            self.logins.append(data.login.decode())
        return AuthResult(success=ok)


class Hooks:
    """What the webhook receiver was sent; ``answers`` are the statuses it gives, in turn (then 200)."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self.content_types: list[str] = []
        self.answers: list[int] = []
        self.port = 0
        self._server: HTTPServer | None = None

    async def start(self) -> Hooks:
        sockets = bind_sockets(0, "127.0.0.1")
        self.port = sockets[0].getsockname()[1]
        self._server = HTTPServer(Application([(r"/(.*)", HookHandler, {"hooks": self})]))
        self._server.add_sockets(sockets)
        return self

    def close(self) -> None:
        if self._server is not None:
            self._server.stop()

    def url(self, path: str = "/hooks/T000/B000/XXXX") -> str:
        return f"http://127.0.0.1:{self.port}{path}"


class HookHandler(RequestHandler):
    def initialize(self, hooks: Hooks) -> None:
        self.hooks = hooks

    def post(self, _: str) -> None:
        self.hooks.received.append(json.loads(self.request.body))
        self.hooks.content_types.append(self.request.headers.get("Content-Type", ""))
        status = self.hooks.answers.pop(0) if self.hooks.answers else 200
        self.set_status(status)
        self.finish("ok" if status == 200 else "try later")


class Tarpit:
    """A receiver that hangs: it takes each connection and answers nothing (or, with ``drip``, sends it
    again and again, ``every`` seconds: an SMTP greeting that never ends) until :meth:`release`, which
    closes them all. ``connections`` counts those it took, ``closed`` those that have ended (the client
    gave up, or the release)."""

    def __init__(self, drip: bytes = b"", every: float = 0.2) -> None:
        self.drip, self.every = drip, every
        self.connections = 0
        self.closed = 0
        self.port = 0
        self._released = asyncio.Event()
        self._server: asyncio.Server | None = None

    async def start(self) -> Tarpit:
        self._server = await asyncio.start_server(self._hold, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def url(self, path: str = "/hooks/T000/B000/HUNG") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def release(self) -> None:
        self._released.set()

    def close(self) -> None:
        self.release()
        if self._server is not None:
            self._server.close()

    @property
    def open(self) -> int:
        return self.connections - self.closed

    async def _hold(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        waits = [asyncio.ensure_future(reader.read()), asyncio.ensure_future(self._released.wait())]
        if self.drip:
            waits.append(asyncio.ensure_future(self._dripping(writer)))
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiting in waits:
                waiting.cancel()
            writer.close()
            self.closed += 1

    async def _dripping(self, writer: asyncio.StreamWriter) -> None:
        while True:
            writer.write(self.drip)
            await writer.drain()
            await asyncio.sleep(self.every)  # the receiver's pace, not the test's synchronisation
