"""One batch kernel's life on the server's side: its job submitted, waited for while it queues, met
once the kernel host on the node says the kernel answers, and then asked (interrupt, restart in the
same allocation, stop) through the host's control channel. The provisioner maps Jupyter's calls onto
these verbs; the job machinery records and accounts the session as it does any job."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from ..contracts.batchkernel import files
from ..errors import Conflict
from ..jobs.service import JobService
from ..jobs.sessions import SessionAsk, SessionJobs
from ..models.jobs import TERMINAL_STATES, Job
from .control import HostClient, HostUnreachable

log = logging.getLogger(__name__)

POLL_INTERVAL = 0.5
LAUNCH_TIMEOUT = 1800.0


class KernelSession:
    def __init__(
        self,
        jobs: JobService,
        ask: SessionAsk,
        *,
        poll_interval: float = POLL_INTERVAL,
        launch_timeout: float = LAUNCH_TIMEOUT,
    ) -> None:
        self._jobs = jobs
        self._ask = ask
        self._poll = poll_interval
        self._launch_timeout = launch_timeout
        self.job: Job | None = None
        self._host: HostClient | None = None
        self.ended = False
        self.restarts = 0

    @property
    def connected(self) -> bool:
        return self._host is not None and not self.ended

    def adopt(self, job: Job) -> None:
        """Take back the session of ``job``, kept running while the server restarted: :meth:`start`
        then meets its kernel instead of submitting a job."""
        self.job = job

    async def start(self) -> dict[str, Any]:
        """Submit the job and wait until its kernel answers: the kernel's connection info. A job that
        ends first, or waits past the launch timeout (then cancelled), raises with why, in words."""
        if self.job is None:  # else taken back: its job runs already
            self.job = await SessionJobs(self._jobs).submit(self._ask)
        folder = self._jobs.folder_of(self.job)
        deadline = time.monotonic() + self._launch_timeout
        said = ""
        while True:
            job = self.job = await self._jobs.get(self.job.id)
            if job.state in TERMINAL_STATES:
                self.ended = True
                raise RuntimeError(f"The kernel's job {job.state} before its kernel answered: {job.message}")
            words = _waiting_words(job)
            if words != said:
                log.info("batch kernel %s: %s", job.id, words)
                said = words
            if job.state == "running":
                host = files.read_host(folder) if self._host is None else None
                if host is not None:
                    self._host = HostClient(host)  # one client, kept: not one socket per round
                if self._host is not None:
                    connection = files.read_connection(folder)
                    if connection is not None and (await self._host.request("status")).state == "running":
                        return connection.info()
            if time.monotonic() > deadline:
                await self._give_up(job)
            await asyncio.sleep(self._poll)

    async def _give_up(self, job: Job) -> None:
        minutes = self._launch_timeout / 60
        why = f"Waited {minutes:g} min for the kernel's job to start ({_waiting_words(job)}); cancelled it."
        try:
            await self._jobs.cancel(job.id, ("launch_timeout", why))
        except Conflict:  # it ended meanwhile
            pass
        self.ended = True
        raise RuntimeError(why)

    async def start_again(self) -> dict[str, Any]:
        """The kernel's next generation in the same allocation (no queue): the same connection info."""
        reply = await self._ask_host("start")
        self.restarts += 1
        if not reply.ok:
            raise RuntimeError(reply.message or "The kernel host did not start the kernel again.")
        assert self.job is not None
        connection = files.read_connection(self._jobs.folder_of(self.job))
        if connection is None:
            raise RuntimeError("The kernel host lost the kernel's connection file.")
        return connection.info()

    async def exit_code(self) -> int | None:
        """None while the kernel runs; how it ended, or 1 once its host or job is gone."""
        if self.ended:
            return 1
        try:
            reply = await self._ask_host("status")
        except HostUnreachable:
            assert self.job is not None
            job = await self._jobs.get(self.job.id)
            if job.state in TERMINAL_STATES:
                self.ended = True
                return 1
            return None  # a slow answer is not a dead kernel: the job's record decides
        return reply.exit_code if reply.state != "running" else None

    async def signal(self, signum: int) -> None:
        if not self.ended:
            await self._ask_host("signal", signum=signum)

    async def expect(self, restart: bool) -> None:
        if not self.ended:
            await self._ask_host("expect", restart=restart)

    async def end(self, why: str = "Shut down from JupyterLab.") -> None:
        """Stop the job (its host writes its end); cancel it where the host does not answer, or while
        it still waits (nothing is left queued)."""
        if self.ended or self.job is None:
            return
        self.ended = True
        try:
            await self._ask_host("stop", why=why)
        except HostUnreachable:
            try:
                await self._jobs.cancel(self.job.id, ("shut_down", why))
            except Conflict:
                pass
        finally:
            self.let_go()

    def let_go(self) -> None:
        """Forget the host without stopping it (the server stops and keeps its kernels)."""
        if self._host is not None:
            self._host.close()

    async def _ask_host(self, op: Any, **fields: Any) -> Any:
        if self._host is None:
            raise HostUnreachable("the kernel host has not been met yet")
        return await self._host.request(op, **fields)


def _waiting_words(job: Job) -> str:
    if job.state == "running":
        return "starting the kernel on its node"
    place = f", {job.queue_position}. in '{job.queue_name}'" if job.queue_position and job.queue_name else ""
    reason = f": {job.pending_reason}" if job.pending_reason else ""
    return f"waiting in the queue{place}{reason}"
