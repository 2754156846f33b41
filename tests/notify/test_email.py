"""E-mail from any name a job can have: every header written valid (RFC 2047 encoded-words, folded), and
a message that cannot be made is a failed delivery, logged and answered, never lost in silence."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from helpers import job_record, wait_until

from jupyter_gpu_env.models.automation.notifications import NotificationSettings
from jupyter_gpu_env.models.sweeps import JobGroup
from jupyter_gpu_env.notify.email import SmtpSettings
from jupyter_gpu_env.notify.notifier import Notifier
from jupyter_gpu_env.notify.settings import SettingsFile

from .receivers import PASSWORD, USER, Inbox

BASE = "https://hub.example.org/user/alice/"

# What each name becomes in the subject: line breaks of every kind and control characters are one space
# there (a header is one line); everything else is kept as it was written.
NAMES = {
    "train\u2028v2": "train v2",  # LINE SEPARATOR: the API accepts it
    "train\u2029v2": "train v2",  # PARAGRAPH SEPARATOR
    "train\x85v2": "train v2",  # NEXT LINE
    "line\r\nBcc: eve@example.org": "line Bcc: eve@example.org",  # a record kept from before the checks
    "nul\x00esc\x1b[31m\x7fdel": "nul esc [31m del",
    "tab\tname": "tab name",
    "=?utf-8?q?spoof?=": "=?utf-8?q?spoof?=",  # looks like an encoded-word: must not be read as one
    "é" * 200: "é" * 200,  # the longest name, all of it non-ASCII: folded encoded-words
    "日本語の ジョブ \u202e": "日本語の ジョブ \u202e",
}


async def _no_sweep(sweep_id: str) -> JobGroup:
    raise AssertionError("no sweep here")


def notifier(tmp_path: Path, smtp: SmtpSettings, **kwargs: Any) -> Notifier:
    return Notifier(
        SettingsFile(tmp_path / "state" / "notifications.json"), smtp, lambda: BASE, _no_sweep, **kwargs
    )


def smtp_of(inbox: Inbox, **kwargs: Any) -> SmtpSettings:
    fields: dict[str, Any] = {"starttls": False, "sender": "gpu@example.org", "username": USER}
    return SmtpSettings("127.0.0.1", inbox.port, password=PASSWORD, **{**fields, **kwargs})


def _headers(raw: bytes) -> list[bytes]:
    return raw.split(b"\r\n\r\n", 1)[0].split(b"\r\n")


async def test_every_name_a_job_can_have_is_mailed_with_a_valid_subject(tmp_path, smtp_server):
    inbox: Inbox = await smtp_server.start()
    note = notifier(tmp_path, smtp_of(inbox), backoff=0.05)
    await note.put(NotificationSettings(email="alice@example.org", on="all"))
    try:
        ids = {f"j{i}": name for i, name in enumerate(NAMES)}
        for job_id, name in ids.items():
            note.ended(job_record(job_id, name=name, state="failed"))
        await wait_until(lambda: note.pending() == 0, what="the messages sent")
        assert len(inbox.messages) == len(NAMES)
        for mail, raw, recipients in zip(inbox.messages, inbox.raw, inbox.recipients, strict=True):
            job_id = mail.get_content().split("Job id: ", 1)[1].split()[0]
            assert mail["Subject"] == f'Job "{NAMES[ids[job_id]]}" failed'
            assert recipients == ["alice@example.org"] and mail["Bcc"] is None  # nothing smuggled in
            for line in _headers(raw):
                assert line.isascii() and len(line) <= 78, line  # RFC 5322's line, RFC 2047's words
    finally:
        await note.stop()


async def test_a_message_that_cannot_be_made_is_a_failed_delivery(tmp_path, smtp_server, caplog):
    """A sender the site configured with a line break in it: no message can be made. Each end says so in
    one warning (not retried: it would fail the same way), and a test says so in its answer."""
    inbox: Inbox = await smtp_server.start()
    note = notifier(tmp_path, smtp_of(inbox, sender="gpu@example.org\nBcc: eve@example.org"), backoff=0.05)
    await note.put(NotificationSettings(email="alice@example.org", on="all"))
    caplog.set_level(logging.INFO, logger="jupyter_gpu_env.notify")
    try:
        note.ended(job_record("j1", name="train", state="failed"))
        await wait_until(lambda: note.pending() == 0, what="the delivery given up")
        said = [(r.levelno, r.getMessage()) for r in caplog.records if r.name.startswith("jupyter_gpu_env")]
        ((level, words),) = said
        assert level == logging.WARNING and "email of job j1" in words, said
        assert "not delivered to alice@example.org" in words and "could not be made" in words
        assert "after 1 try" in words

        tried = await note.send_test()
        ((delivery),) = tried.deliveries
        assert not delivery.delivered and delivery.message.startswith("The message to alice@example.org")
        assert "could not be made" in delivery.message
        assert inbox.messages == []
    finally:
        await note.stop()
