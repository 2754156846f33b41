"""Deliveries never wait on each other: each goes in its receiver's slot (a webhook's host, the SMTP
server: a few at a time each) with its own timeout, and none takes a thread of the server's. Receivers
that hang are real servers on loopback that take the connection and answer nothing."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from helpers import job_record, wait_until

from jupyter_gpu_env.models.automation.notifications import JobNotify, NotificationSettings
from jupyter_gpu_env.models.sweeps import JobGroup
from jupyter_gpu_env.notify.email import SmtpSettings
from jupyter_gpu_env.notify.lanes import Lanes, webhook_receiver
from jupyter_gpu_env.notify.notifier import Notifier
from jupyter_gpu_env.notify.settings import SettingsFile

from .receivers import Hooks, Tarpit

BASE = "https://hub.example.org/user/alice/"
HUNG = 12  # more than tornado's shared HTTP client runs at once (10)
MANY = 40  # more than asyncio's default executor has threads on any machine (32 at most)


async def _no_sweep(sweep_id: str) -> JobGroup:
    raise AssertionError("no sweep here")


def notifier(tmp_path: Path, smtp: SmtpSettings, **kwargs: Any) -> Notifier:
    settings = SettingsFile(tmp_path / "state" / "notifications.json")
    return Notifier(settings, smtp, lambda: BASE, _no_sweep, attempts=1, **kwargs)


def hung_smtp(pit: Tarpit, timeout: float) -> SmtpSettings:
    return SmtpSettings("127.0.0.1", pit.port, starttls=False, sender="gpu@example.org", timeout=timeout)


async def test_a_hung_webhook_delays_only_deliveries_to_itself(tmp_path, webhook_server, tarpit, caplog):
    hooks: Hooks = await webhook_server.start()
    pit: Tarpit = await tarpit.start()
    note = notifier(tmp_path, SmtpSettings(""), webhook_timeout=120)
    await note.put(NotificationSettings(on="all"))
    caplog.set_level(logging.INFO, logger="jupyter_gpu_env.notify")
    try:
        for i in range(HUNG):
            note.ended(job_record(f"hung{i}", state="failed", notify=JobNotify(webhook_url=pit.url())))
        await wait_until(lambda: pit.connections, what="the hung receiver reached")

        note.ended(job_record("healthy", state="failed", notify=JobNotify(webhook_url=hooks.url())))
        await wait_until(lambda: hooks.received, within=10, what="the healthy receiver's delivery")
        assert hooks.received[0]["props"]["jupyter-gpu-env"]["id"] == "healthy"
        # The hung receiver holds its own few slots; the rest of its deliveries wait for them.
        assert pit.open == pit.connections == note.lanes.per_receiver

        pit.release()  # it closes every connection, now and later: each delivery fails once, in turn
        await wait_until(lambda: note.pending() == 0, what="every delivery to the hung receiver ended")
        assert pit.connections == HUNG
        gave_up = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert len(gave_up) == HUNG and all("did not answer" in words for words in gave_up), gave_up
    finally:
        await note.stop()


async def test_hung_smtp_deliveries_take_none_of_the_servers_threads(tmp_path, webhook_server, tarpit):
    """Forty e-mails to an SMTP server that never greets: the server's own threads stay free, a webhook
    goes at once, and stopping the notifier cuts the hung connections."""
    hooks: Hooks = await webhook_server.start()
    pit: Tarpit = await tarpit.start()
    note = notifier(tmp_path, hung_smtp(pit, timeout=120))
    await note.put(NotificationSettings(email="alice@example.org", on="all"))
    try:
        for i in range(MANY):
            note.ended(job_record(f"mail{i}", state="failed"))
        await wait_until(lambda: pit.connections, what="the hung SMTP server reached")

        free = await asyncio.wait_for(asyncio.to_thread(lambda: "free"), 10)  # the server's to_thread
        assert free == "free"
        note.ended(job_record("hook", state="failed", notify=JobNotify(webhook_url=hooks.url())))
        await wait_until(lambda: hooks.received, within=10, what="the webhook sent beside hung e-mail")
        assert pit.open == pit.connections == note.lanes.per_receiver
    finally:
        await asyncio.wait_for(note.stop(), 10)
    await wait_until(lambda: pit.open == 0, within=10, what="the hung connections cut")


async def test_an_smtp_server_that_never_finishes_is_given_up_at_the_timeout(tmp_path):
    """It sends one more line of its greeting every tenth of a second: every read is quick, the whole
    never ends. The delivery fails at its timeout, and its connection is closed."""
    pit = await Tarpit(drip=b"220-still here\r\n", every=0.1).start()
    note = notifier(tmp_path, hung_smtp(pit, timeout=1.0))
    await note.put(NotificationSettings(email="alice@example.org"))
    try:
        tried = await asyncio.wait_for(note.send_test(), 20)
        (delivery,) = tried.deliveries
        assert not delivery.delivered
        assert delivery.message == f"The SMTP server 127.0.0.1:{pit.port} did not finish within 1 s."
        await wait_until(lambda: pit.open == 0, within=10, what="its connection closed")
    finally:
        await note.stop()
        pit.close()


async def test_deliveries_waiting_for_a_hung_receiver_hold_none_of_the_shared_slots():
    """Three slots in all, two a receiver: six deliveries to one that hangs hold two, and the third slot
    is there for another receiver at once."""
    lanes = Lanes(total=3, per_receiver=2)
    released = asyncio.Event()
    held: list[str] = []

    async def deliver(receiver: str) -> None:
        async with lanes.slot(receiver):
            held.append(receiver)
            await released.wait()

    hung = [asyncio.create_task(deliver("http://a.example.org:80")) for _ in range(6)]
    try:
        await wait_until(lambda: len(held) == 2, what="the hung receiver's two slots taken")
        async with asyncio.timeout(5), lanes.slot("http://b.example.org:80"):
            assert len(held) == 2
    finally:
        released.set()
        await asyncio.gather(*hung)
        lanes.close()
    assert len(held) == 6


def test_a_webhooks_receiver_is_its_scheme_host_and_port():
    assert webhook_receiver("https://Chat.Example.org/hooks/abc") == "https://chat.example.org:443"
    assert webhook_receiver("http://chat.example.org/hooks/x") == "http://chat.example.org:80"
    assert webhook_receiver("http://127.0.0.1:8065/hooks/x") == "http://127.0.0.1:8065"
    assert webhook_receiver("http://host:99999999/x") == "http://host:99999999"
