"""A webhook: one JSON POST to an http(s) URL, with a timeout, in its receiver's slot and through the
deliveries' own HTTP client (:mod:`.lanes`)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from tornado.httpclient import HTTPClientError, HTTPRequest

from .email import DeliveryFailed
from .lanes import Lanes, webhook_receiver

USER_AGENT = "jupyter-gpu-env notifications"


def shown(url: str) -> str:
    """A webhook's URL as logs and answers show it: scheme and host only. Its path is often the secret
    (Slack's and Mattermost's incoming webhooks are)."""
    parts = urlsplit(url)
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:  # not a port number: shown as written
        port = ":" + parts.netloc.rsplit(":", 1)[-1][:10]
    return f"{parts.scheme}://{parts.hostname or ''}{port}/…"


async def post(url: str, payload: dict[str, Any], lanes: Lanes, seconds: float = 20.0) -> None:
    """POST ``payload`` as JSON to ``url`` within ``seconds`` in all; any answer but 2xx raises
    :class:`DeliveryFailed`."""
    if urlsplit(url).scheme.lower() not in ("http", "https"):
        raise DeliveryFailed(f"{shown(url)} is not an http(s) URL", permanent=True)
    request = HTTPRequest(
        url,
        method="POST",
        body=json.dumps(payload),
        headers={"Content-Type": "application/json", "User-Agent": USER_AGENT},
        connect_timeout=seconds,
        request_timeout=seconds,
        follow_redirects=False,
    )
    try:
        async with lanes.slot(webhook_receiver(url)):
            # request_timeout bounds the whole request, the host name's lookup included.
            await lanes.http().fetch(request)
    except HTTPClientError as e:
        if e.code == 599:  # tornado's code for no answer at all: timed out, or the connection closed
            raise DeliveryFailed(f"the webhook {shown(url)} did not answer: {e.message}") from e
        said = ""
        if e.response is not None and e.response.body:
            said = ": " + e.response.body[:200].decode("utf-8", "replace").strip()
        raise DeliveryFailed(f"the webhook {shown(url)} answered {e.code}{said}") from e
    except OSError as e:
        raise DeliveryFailed(f"the webhook {shown(url)} could not be reached: {e}") from e
    except (ValueError, UnicodeError) as e:  # a URL tornado cannot use: a bad port, an unencodable host
        raise DeliveryFailed(f"the webhook {shown(url)} cannot be used: {e}", permanent=True) from e
