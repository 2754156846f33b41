"""The receivers of ``receivers.py`` as fixtures: each stopped after its test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .receivers import USER, Hooks, Inbox, Tarpit


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


@pytest.fixture
def smtp_settings(smtp_server: Inbox, tmp_path: Path) -> dict[str, Any]:
    """The server's ``GpuEnvApp`` settings that send its email through ``smtp_server`` as ``USER``, its state
    under tmp_path (the password is each test's to give, or not)."""
    return {
        "state_dir": str(tmp_path / "state"),
        "smtp_host": "127.0.0.1",
        "smtp_port": smtp_server.port,
        "smtp_starttls": False,
        "smtp_sender": "gpu@example.org",
        "smtp_username": USER,
    }
