"""The control channel between the server and a kernel host: signed requests, one reply each.

What the server asks of the host (interrupt the kernel, start it again inside the same allocation,
stop) crosses the network between the Jupyter server and a compute node, so every request is signed
with HMAC-SHA256 under the host's key (``kernel/host.json``, readable by the owner alone) and carries
a sequence number and the time it was sent: the host drops what is unsigned, replayed or stale.
Requests and replies are small JSON documents, parsed into models that bound every value.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

Op = Literal["status", "start", "signal", "expect", "stop"]
HostState = Literal["starting", "running", "exited", "stopping"]
# A request sent longer ago than this (or this far ahead of the host's clock) is refused as stale.
WINDOW_SECONDS = 30.0
MAX_MESSAGE = 4096


class Request(BaseModel):
    """``status``: how the kernel is; ``start``: a new kernel process (generation n+1) with the same
    ports and key; ``signal``: send ``signum`` to the kernel's process group; ``expect``: the kernel is
    about to exit (``restart``: it will be started again, so the job goes on); ``stop``: end the job."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    op: Op
    seq: int = Field(ge=1, le=1 << 62)  # increasing; a client numbers them from the clock
    sent_at: float = Field(ge=0)
    generation: int | None = Field(default=None, ge=1, le=1 << 20)
    signum: int | None = Field(default=None, ge=1, le=64)
    restart: bool | None = None
    why: str | None = Field(default=None, max_length=500)  # ``stop``: recorded as the job's message


class Reply(BaseModel):
    """The host's answer to the request numbered ``seq``: how the kernel is now."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    seq: int = Field(ge=1, le=1 << 62)
    ok: bool
    state: HostState
    generation: int = Field(ge=0, le=1 << 20)
    exit_code: int | None = Field(default=None, ge=-255, le=255)
    message: str = Field(default="", max_length=500)


def _sign(key: bytes, body: bytes) -> bytes:
    return hmac.new(key, body, hashlib.sha256).hexdigest().encode("ascii")


def pack(key: bytes, message: Request | Reply) -> list[bytes]:
    """The frames of ``message``: its signature, then its JSON body."""
    body = message.model_dump_json().encode("utf-8")
    return [_sign(key, body), body]


def _verified(key: bytes, frames: list[bytes]) -> bytes | None:
    if len(frames) != 2 or len(frames[1]) > MAX_MESSAGE:
        return None
    signature, body = frames
    return body if hmac.compare_digest(signature, _sign(key, body)) else None


class Verifier:
    """The host's side: accepts a request once, signed, in sequence and recent."""

    def __init__(self, key: bytes) -> None:
        self._key = key
        self._last_seq = 0

    def request(self, frames: list[bytes], now: float) -> Request | None:
        """The request in ``frames``, or None when it is unsigned, malformed, replayed or stale."""
        body = _verified(self._key, frames)
        if body is None:
            return None
        try:
            request = Request.model_validate(json.loads(body))
        except (ValueError, ValidationError):
            return None
        if request.seq <= self._last_seq or abs(now - request.sent_at) > WINDOW_SECONDS:
            return None
        self._last_seq = request.seq
        return request


def reply(key: bytes, frames: list[bytes]) -> Reply | None:
    """The client's side: the host's reply, or None when it is not signed by the host's key."""
    body = _verified(key, frames)
    if body is None:
        return None
    try:
        return Reply.model_validate(json.loads(body))
    except (ValueError, ValidationError):
        return None
