"""``Notifier``: told of every job that ends, it decides from the user's choices and the job's own
``notify`` whether and where to send word, and delivers it in the background.

A sweep's runs are one thing to the user: its word goes once, when its last run has ended, with how many
succeeded and failed. A scheduled run's names its schedule. Each delivery goes in its own slot, with its
timeout (:mod:`.lanes`: a receiver that hangs delays only what is sent to it). A delivery that fails is
logged and tried again a few times, each wait longer (its slot given back while it waits); nothing here
raises into the tracker that tells it, or changes a job. :meth:`Notifier.stop` cancels what is still
pending.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Literal

from ..models.automation.notifications import (
    Delivery,
    JobNotify,
    NotificationSettings,
    NotificationSettingsView,
    NotificationTest,
)
from ..models.automation.pipelines import Pipeline
from ..models.jobs import TERMINAL_STATES, Job
from ..models.sweeps import JobGroup
from . import email, message, webhook
from .email import DeliveryFailed, SmtpSettings
from .lanes import Lanes
from .settings import SettingsFile

log = logging.getLogger(__name__)

Channel = Literal["email", "webhook"]
ATTEMPTS = 4  # a failed delivery is tried this many times in all
BACKOFF = 5.0  # seconds before the second try; doubled before each later one
TOLD_SWEEPS = 1000  # sweeps remembered as told of (a sweep ends once, unless its runs are retried)


async def _no_schedule(schedule_id: str) -> str | None:
    return None


class Notifier:
    """``settings``: the user's choices; ``smtp``: the site's SMTP server (off without a host);
    ``base_url``: the server's public URL, ending in ``/`` (asked when a message is built: a server knows
    it once it listens); ``sweep_of``: a sweep's summary by id; ``schedule_name``: a schedule's name by
    id (None: unknown)."""

    def __init__(
        self,
        settings: SettingsFile,
        smtp: SmtpSettings,
        base_url: Callable[[], str],
        sweep_of: Callable[[str], Awaitable[JobGroup]],
        schedule_name: Callable[[str], Awaitable[str | None]] = _no_schedule,
        pipeline_of: Callable[[str], Awaitable[Pipeline]] | None = None,
        *,
        attempts: int = ATTEMPTS,
        backoff: float = BACKOFF,
        webhook_timeout: float = 20.0,
        lanes: Lanes | None = None,
    ) -> None:
        self.settings = settings
        self.smtp = smtp
        self.base_url = base_url
        self.sweep_of = sweep_of
        self.schedule_name = schedule_name
        self.pipeline_of = pipeline_of
        self.attempts = max(1, attempts)
        self.backoff = backoff
        self.webhook_timeout = webhook_timeout
        self.lanes = lanes or Lanes()
        self._pending: set[asyncio.Task[None]] = set()
        self._sweeps_told: OrderedDict[str, tuple[Any, ...]] = OrderedDict()
        self._sweep_lock = asyncio.Lock()
        self._stopped = False

    # ----- the user's choices -----

    async def get(self) -> NotificationSettingsView:
        """The user's choices, and whether this server sends e-mail."""
        current = await self.settings.get()
        return NotificationSettingsView(**current.model_dump(), email_available=self.smtp.enabled)

    async def put(self, choices: NotificationSettings) -> NotificationSettingsView:
        await self.settings.put(choices)
        return await self.get()

    # ----- ends -----

    def ended(self, job: Job) -> None:
        """``job``'s record has just ended (the tracker's ``on_ended``): decide and send in the background.
        Returns at once; never raises."""
        if self._stopped or job.state not in TERMINAL_STATES:
            return
        try:
            self._spawn(self._job_ended(job), f"job {job.id}")
        except RuntimeError:  # no running loop: nothing can be sent from here
            log.warning("the end of job %s was not notified: no event loop runs", job.id)

    def pending(self) -> int:
        """How many notifications are being decided or delivered."""
        return len(self._pending)

    async def stop(self) -> None:
        """Cancel what is pending and wait for it to end; later ends are ignored."""
        self._stopped = True
        tasks = list(self._pending)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self.lanes.close()

    def _spawn(self, work: Coroutine[Any, Any, None], what: str) -> None:
        task = asyncio.get_running_loop().create_task(self._guarded(work, what))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    @staticmethod
    async def _guarded(work: Coroutine[Any, Any, None], what: str) -> None:
        try:
            await work
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("notifying the end of %s failed", what)

    async def _job_ended(self, job: Job) -> None:
        if job.pipeline_id is not None and self.pipeline_of is not None:
            await self._node_ended(job, job.pipeline_id)
            return
        if job.group_id is not None:
            await self._run_ended(job, job.group_id)
            return
        targets = await self._targets(job.notify, job.state)
        if not targets:
            return
        schedule = None
        if job.schedule_id is not None:
            try:
                schedule = await self.schedule_name(job.schedule_id)
            except Exception:
                log.exception("the name of schedule %s could not be read", job.schedule_id)
        msg = message.job_message(job, self.base_url(), schedule)
        await self._deliver_all(targets, msg, f"job {job.id} ({job.name}, {job.state})")

    async def _run_ended(self, run: Job, sweep_id: str) -> None:
        """A run of a sweep ended: word goes once the whole sweep has, and once only (runs that end
        together are each looked at, one at a time)."""
        async with self._sweep_lock:
            sweep = await self.sweep_of(sweep_id)
            if sweep.state not in TERMINAL_STATES:
                return
            key = (sweep.finished_at, sweep.cancelled_at, tuple(sorted(sweep.counts.items())))
            if not self._first_time(sweep_id, key):
                return
        targets = await self._targets(run.notify, sweep.state)
        if targets:
            msg = message.sweep_message(sweep, self.base_url())
            await self._deliver_all(targets, msg, f"sweep {sweep.id} ({sweep.name}, {sweep.state})")

    async def _node_ended(self, job: Job, pipeline_id: str) -> None:
        """A job of a pipeline ended (or was skipped): word goes once the whole pipeline has, once only."""
        assert self.pipeline_of is not None
        async with self._sweep_lock:
            pipeline = await self.pipeline_of(pipeline_id)
            if pipeline.state not in TERMINAL_STATES:
                return
            key = (pipeline.finished_at, pipeline.cancelled_at, tuple(sorted(pipeline.counts.items())))
            if not self._first_time(f"pipeline {pipeline_id}", key):
                return
        targets = await self._targets(job.notify, pipeline.state)
        if targets:
            msg = message.pipeline_message(pipeline, self.base_url())
            await self._deliver_all(
                targets, msg, f"pipeline {pipeline.id} ({pipeline.name}, {pipeline.state})"
            )

    def _first_time(self, what: str, key: tuple[Any, ...]) -> bool:
        """Whether ``what`` ending as ``key`` says has not been told yet (and remember it is now)."""
        if self._sweeps_told.get(what) == key:
            return False
        self._sweeps_told[what] = key
        self._sweeps_told.move_to_end(what)
        if len(self._sweeps_told) > TOLD_SWEEPS:
            self._sweeps_told.popitem(last=False)
        return True

    async def _targets(self, notify: JobNotify | None, state: str) -> list[tuple[Channel, str]]:
        """Where word of an end in ``state`` goes: the job's own choices over the user's."""
        choices = await self.settings.get()
        own = notify or JobNotify()
        on = own.on or choices.on
        if on == "never" or (on == "failed" and state != "failed"):
            return []
        out: list[tuple[Channel, str]] = []
        address = own.email or choices.email
        if address and self.smtp.enabled:
            out.append(("email", address))
        hook = own.webhook_url or choices.webhook_url
        if hook:
            out.append(("webhook", hook))
        return out

    # ----- delivery -----

    async def _deliver_all(self, targets: list[tuple[Channel, str]], msg: message.Message, what: str) -> None:
        await asyncio.gather(*(self._deliver(channel, to, msg, what) for channel, to in targets))

    async def _deliver(self, channel: Channel, to: str, msg: message.Message, what: str) -> None:
        """Send, and on failure wait and try again, up to ``attempts`` times; log what happened."""
        where = _shown(channel, to)
        for attempt in range(1, self.attempts + 1):
            try:
                await self._send(channel, to, msg)
            except DeliveryFailed as e:
                if e.permanent or attempt == self.attempts:
                    tries = "1 try" if attempt == 1 else f"{attempt} tries"
                    log.warning("%s of %s not delivered to %s after %s: %s", channel, what, where, tries, e)
                    return
                wait = self.backoff * 2 ** (attempt - 1)
                log.info("%s of %s to %s failed (%s); trying again in %g s", channel, what, where, e, wait)
                await asyncio.sleep(wait)
            else:
                log.info("%s of %s delivered to %s", channel, what, where)
                return

    async def _send(self, channel: Channel, to: str, msg: message.Message) -> None:
        """Send once; whatever goes wrong is a :class:`DeliveryFailed`, so that each delivery is recorded as
        delivered or not, and none ends the others sent with it."""
        try:
            if channel == "email":
                await email.send(self.smtp, to, msg.subject, msg.text, self.lanes)
            else:
                await webhook.post(to, msg.payload, self.lanes, self.webhook_timeout)
        except (DeliveryFailed, asyncio.CancelledError):
            raise
        except Exception as e:
            log.exception("%s to %s failed unexpectedly", channel, _shown(channel, to))
            raise DeliveryFailed(f"sending failed unexpectedly ({type(e).__name__})", permanent=True) from e

    # ----- a test -----

    async def send_test(self) -> NotificationTest:
        """Send a test message to every configured destination, once each (no retries: someone waits),
        and say what happened to each."""
        choices = await self.settings.get()
        msg = message.test_message(self.base_url())
        targets: list[tuple[Channel, str]] = []
        if choices.email:
            targets.append(("email", choices.email))
        if choices.webhook_url:
            targets.append(("webhook", choices.webhook_url))
        deliveries = await asyncio.gather(*(self._try(channel, to, msg) for channel, to in targets))
        if not deliveries:
            words = "Nothing was sent: no e-mail address or webhook is set."
        else:
            ok = sum(d.delivered for d in deliveries)
            words = f"{ok} of {len(deliveries)} test messages delivered."
        return NotificationTest(deliveries=list(deliveries), message=words)

    async def _try(self, channel: Channel, to: str, msg: message.Message) -> Delivery:
        where = _shown(channel, to)
        if channel == "email" and not self.smtp.enabled:
            said = "Not sent: e-mail is off on this server (its administrator sets c.GpuEnvApp.smtp_host)."
            return Delivery(channel=channel, destination=where, delivered=False, message=said)
        try:
            await self._send(channel, to, msg)
        except DeliveryFailed as e:
            said = str(e)
            return Delivery(
                channel=channel, destination=where, delivered=False, message=said[:1].upper() + said[1:] + "."
            )
        return Delivery(channel=channel, destination=where, delivered=True, message="Delivered.")


def _shown(channel: Channel, to: str) -> str:
    return to if channel == "email" else webhook.shown(to)
