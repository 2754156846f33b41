"""One batch kernel's life on the server's side: its job submitted, waited for while it queues, met
once the kernel host on the node says the kernel answers, and then asked (interrupt, restart in the
same allocation, stop) through the host's control channel. The provisioner maps Jupyter's calls onto
these verbs; the job machinery records and accounts the session as it does any job."""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from pathlib import Path
from typing import Any

from ..contracts.batchkernel import files
from ..errors import Conflict
from ..jobs.service import JobService
from ..jobs.sessions import SessionAsk, SessionJobs
from ..models.jobs import TERMINAL_STATES, Job
from ..system.offloop import python_work
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
        self._met = False
        self.restarts = 0

    @property
    def connected(self) -> bool:
        """Whether the kernel has been met (its start answered) and the session has not ended."""
        return self._met and not self.ended

    def adopt(self, job: Job) -> None:
        """Take back the session of ``job``, kept running while the server restarted: :meth:`start`
        then meets its kernel instead of submitting a job."""
        self.job = job

    async def start(self) -> dict[str, Any]:
        """Submit the job and wait until its kernel answers: the kernel's connection info. A job that
        ends first, waits past the launch timeout, or cannot be met raises with why, in words; its job
        is cancelled then, so that a start that failed holds no allocation."""
        if self.job is None:  # else taken back: its job runs already
            self.job = await SessionJobs(self._jobs).submit(self._ask)
        try:
            info = await self._meet(self._jobs.folder_of(self.job))
        except BaseException as e:
            if not self.ended:  # the job may run on, with nobody to use it
                self.ended = True
                why = str(e) if isinstance(e, RuntimeError) else "Its start was given up."
                await self._cancel("start_failed", f"The kernel could not be started: {why}")
            raise
        self._met = True
        return info

    async def _meet(self, folder: Path) -> dict[str, Any]:
        assert self.job is not None
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
                if self._host is None:
                    host = await python_work(files.read_host, folder)
                    if host is not None and await self._where_it_runs(host.host, job):
                        self._host = HostClient(host)  # one client, kept: not one socket per round
                if self._host is not None:
                    connection = await python_work(files.read_connection, folder)
                    if connection is not None and await self._answers():
                        return connection.info()
            if time.monotonic() > deadline:
                await self._give_up(job)
            await asyncio.sleep(self._poll)

    async def _answers(self) -> bool:
        assert self._host is not None
        try:
            return (await self._host.request("status")).state == "running"
        except HostUnreachable:  # a slow node: asked again next round, until the launch timeout
            return False

    async def _where_it_runs(self, address: str, job: Job) -> bool:
        """Whether the host's own word on its address (host.json, in the job's folder) agrees with where
        the backend says the job runs: loopback for a loopback session, else an address of the node
        the backend saw (not yet seen: not yet). A site-named interface's address is the site's word."""
        session = self._ask.kernel_session
        if session.get("bind", "loopback") == "loopback":
            if address != "127.0.0.1":
                raise RuntimeError(f"its host says it listens on {address}, not on this machine's loopback")
            return True
        if session.get("interface"):
            return True
        if not job.node:
            return False
        known = await python_work(_addresses, job.node)
        if address not in known:
            raise RuntimeError(
                f"its host says it listens on {address}, which is not an address of {job.node}, where its "
                "job runs; where the nodes' names resolve to addresses the server cannot reach, name the "
                "interface to listen on (c.BatchKernels.interface)"
            )
        return True

    async def _give_up(self, job: Job) -> None:
        minutes = self._launch_timeout / 60
        why = f"Waited {minutes:g} min for the kernel's job to start ({_waiting_words(job)}); cancelled it."
        self.ended = True
        await self._cancel("launch_timeout", why)
        raise RuntimeError(why)

    async def _cancel(self, reason: str, why: str) -> None:
        assert self.job is not None
        try:
            await self._jobs.cancel(self.job.id, (reason, why))
        except Conflict:  # it ended meanwhile
            pass

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


def _addresses(node: str) -> set[str]:
    """The node's name and the addresses it resolves to here."""
    try:
        return {node} | {str(info[4][0]) for info in socket.getaddrinfo(node, None, socket.AF_INET)}
    except OSError:
        return {node}


def _waiting_words(job: Job) -> str:
    if job.state == "running":
        return "starting the kernel on its node"
    place = f", {job.queue_position}. in '{job.queue_name}'" if job.queue_position and job.queue_name else ""
    reason = f": {job.pending_reason}" if job.pending_reason else ""
    return f"waiting in the queue{place}{reason}"
