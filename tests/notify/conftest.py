"""The receivers of ``receivers.py`` as fixtures: each stopped after its test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .receivers import Hooks, Inbox, Tarpit


@pytest.fixture
def smtp_server() -> Iterator[Inbox]:
    """An SMTP server on 127.0.0.1 that takes a login (without TLS: loopback only)."""
    inbox = Inbox()
    yield inbox
    inbox.close()


@pytest.fixture
def webhook_server() -> Iterator[Hooks]:
    """An HTTP server on 127.0.0.1 that records every JSON POST (Slack's incoming webhooks' shape of URL)."""
    hooks = Hooks()
    yield hooks
    hooks.close()


@pytest.fixture
def tarpit() -> Iterator[Tarpit]:
    """A receiver on 127.0.0.1 that takes connections and answers nothing until released."""
    pit = Tarpit()
    yield pit
    pit.close()
