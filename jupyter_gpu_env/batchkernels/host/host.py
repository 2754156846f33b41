"""The kernel host: what a batch kernel's job runs on its node (``python -m jupyter_gpu_env.runner``
hands it a job.json of kind ``kernel``).

It starts the kernel (``kernel.NodeKernel``), writes ``kernel/host.json`` once the kernel answers, and
serves the server's signed control channel (``contracts.batchkernel.wire``): ``status``, ``signal``
(an interrupt reaches the kernel's process group here), ``expect`` (the kernel is about to exit for a
restart or a shutdown), ``start`` (the next generation, same ports and key: no new queue wait) and
``stop``. A kernel that exits on its own does not end the job: the server decides, and a host that
hears nothing from the server for ``orphan_timeout`` ends the job itself, so a lost server never holds
a GPU. SIGTERM (a cancel, the walltime, a preemption) and the job's time limit end it too. Like the
runner, it beats a heartbeat, samples the GPUs and writes ``status.json`` last.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import signal
import socket
import threading
import time
from pathlib import Path
from typing import Any

import zmq
import zmq.asyncio

from ...contracts import jobfiles
from ...contracts.batchkernel import wire
from ...contracts.batchkernel.files import FORMAT, HOST_JSON, make_kernel_dir, write_private_json
from ...gpu.jobuse import GpuUseSampler
from ...jobs.runner.runtime import RunnerError, beat, kernel_for, start_gpu_sampler, write_status
from .kernel import NodeKernel

log = logging.getLogger("jupyter_gpu_env.kernelhost")

ORPHAN_TIMEOUT = 300.0
WALLTIME_SLACK = 15.0  # a SIGTERM this close to the time limit is the walltime's
Outcome = tuple[str, str, str]


def bind_address(session: dict[str, Any]) -> str:
    """Where the kernel and the control channel listen: this machine only (the local backend), the
    site's named interface's first IPv4 address, or the node's address the server reaches (``bind:
    hostname``, a cluster's compute node). RunnerError where the named interface has none."""
    if session.get("bind", "loopback") == "loopback":
        return "127.0.0.1"
    interface = session.get("interface")
    if isinstance(interface, str) and interface:
        import psutil

        found = [a.address for a in psutil.net_if_addrs().get(interface, []) if a.family == socket.AF_INET]
        if not found:
            raise RunnerError(
                "no_interface",
                f"This node ({socket.gethostname()}) has no IPv4 address on the interface '{interface}' "
                "(c.BatchKernels.interface) that the kernel is to listen on.",
            )
        return str(found[0])
    return socket.gethostbyname(socket.gethostname())


class KernelHost:
    def __init__(self, folder: Path, job: dict[str, Any]) -> None:
        self.folder = folder
        self.job = job
        session = job.get("kernel_session") or {}
        self.session = session if isinstance(session, dict) else {}
        self.ip = ""  # bound in run(), where a node that cannot is told in the job's status
        self.orphan_timeout = float(self.session.get("orphan_timeout") or ORPHAN_TIMEOUT)
        cwd = job.get("cwd")
        self.cwd = cwd if isinstance(cwd, str) and os.path.isdir(cwd) else str(folder)
        self.started_at = time.time()
        self.limit: float | None = None
        self.key = secrets.token_hex(32)
        self.kernel: NodeKernel | None = None
        self.expected: bool | None = None  # a kernel exit announced by `expect` (True: a restart)
        self.outcome: Outcome | None = None
        self.stopped = asyncio.Event()
        self.last_word = time.monotonic()
        self._beat = threading.Event()
        self.gpu_sampler: GpuUseSampler | None = None

    # ----- the job's life -----

    async def run(self) -> Outcome:
        self.ip = bind_address(self.session)
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1):
            loop.add_signal_handler(signum, self._on_signal, signum)
        threading.Thread(target=beat, args=(self.folder, self._beat), name="heartbeat", daemon=True).start()
        self.gpu_sampler = start_gpu_sampler(self.folder, self.job)
        limit = self.limit = jobfiles.time_limit_of(self.job, os.environ)
        if limit:
            loop.call_later(float(limit), self.end, ("failed", "time_limit", _time_up(int(limit))))
        make_kernel_dir(self.folder)
        self.kernel = NodeKernel(self.folder, kernel_for(self.folder, self.job), self.ip, self.cwd)
        await self.kernel.start()
        context = zmq.asyncio.Context()
        router = context.socket(zmq.ROUTER)
        router.linger = 0
        port = router.bind_to_random_port(f"tcp://{self.ip}")
        write_private_json(
            self.folder / "kernel" / HOST_JSON,
            {
                "format": FORMAT,
                "host": self.ip,
                "control_port": port,
                "pid": os.getpid(),
                "started_at": self.started_at,
                "key": self.key,
            },
        )
        log.info("kernel %s ready on %s (control port %d)", self.kernel.generation, self.ip, port)
        try:
            await self._serve(router)
        finally:
            router.close(0)
            context.term()
            await self.kernel.stop()
        assert self.outcome is not None
        return self.outcome

    def end(self, outcome: Outcome) -> None:
        """End the job with ``outcome`` (the first one given stands)."""
        if self.outcome is None:
            self.outcome = outcome
            log.info("stopping: %s", outcome[2])
        self.stopped.set()

    async def _serve(self, router: zmq.asyncio.Socket) -> None:
        verifier = wire.Verifier(self.key.encode("ascii"))
        while not self.stopped.is_set():
            if time.monotonic() - self.last_word > self.orphan_timeout:
                self.end(("cancelled", "server_gone", _orphaned(self.orphan_timeout)))
                break
            if not await router.poll(500):
                continue
            frames = await router.recv_multipart()
            identity, body = frames[0], frames[1:]
            request = verifier.request(body, time.time())
            if request is None:
                log.warning("a control message was refused: unsigned, replayed or stale")
                continue
            self.last_word = time.monotonic()
            answer = await self._answer(request)
            await router.send_multipart([identity, *wire.pack(self.key.encode("ascii"), answer)])

    async def _answer(self, request: wire.Request) -> wire.Reply:
        kernel = self.kernel
        assert kernel is not None
        message = ""
        if request.op == "signal" and request.signum is not None:
            await kernel.signal(request.signum)
        elif request.op == "expect":
            self.expected = bool(request.restart)
        elif request.op == "start":
            if await kernel.exit_code() is None:
                return await self._reply(
                    request, False, "The kernel is still running: it is not started twice."
                )
            await kernel.start()
            self.expected = None
            message = f"Kernel started again (generation {kernel.generation})."
            log.info("%s", message)
        elif request.op == "stop":
            self.end(("succeeded", "shut_down", request.why or "Shut down from JupyterLab."))
        return await self._reply(request, True, message)

    async def _reply(self, request: wire.Request, ok: bool, message: str) -> wire.Reply:
        kernel = self.kernel
        assert kernel is not None
        code = await kernel.exit_code()
        state: wire.HostState = (
            "stopping" if self.stopped.is_set() else "exited" if code is not None else "running"
        )
        return wire.Reply(
            seq=request.seq, ok=ok, state=state, generation=kernel.generation, exit_code=code, message=message
        )

    # ----- signals, and the end -----

    def _on_signal(self, signum: int) -> None:
        if (self.folder / jobfiles.CANCEL_MARK).exists() or signum == signal.SIGINT:
            self.end(("cancelled", "cancelled", "Cancelled by the user."))
        elif self.limit and time.time() - self.started_at >= self.limit - WALLTIME_SLACK:
            # The scheduler's walltime, which it counts from the allocation (before this process
            # started) and enforces on its own clock: a few seconds before our own timer.
            self.end(("failed", "time_limit", _time_up(int(self.limit))))
        else:
            # SLURM and Kubernetes stop a job with SIGTERM at its walltime, a preemption or a node
            # drain; a kernel job is never requeued (its kernel's state would be lost anyway).
            self.end(("failed", "ended_by_scheduler", "The batch system stopped the kernel's job."))

    def finish(self, outcome: Outcome) -> int:
        """Write status.json (last: readers then treat the log as complete); the exit code."""
        self._beat.set()
        gpu = self.gpu_sampler.stop() if self.gpu_sampler is not None else None
        code = 0 if outcome[0] == "succeeded" else 1
        write_status(self.folder, outcome, code, self.started_at, gpu)
        return code


def _time_up(limit: int) -> str:
    from ...models.resources import format_time_limit

    return f"The kernel's job reached its time limit of {format_time_limit(limit)}."


def _orphaned(seconds: float) -> str:
    return (
        f"No word from the Jupyter server for {seconds:.0f} s: the kernel's job ended itself so that it "
        "does not hold its GPU for nothing."
    )


def run_host(folder: Path, job: dict[str, Any]) -> int:
    """Host the kernel of the job in ``folder`` until the job ends; the process's exit code."""
    host = KernelHost(folder, job)
    try:
        outcome = asyncio.run(host.run())
    except RunnerError as e:
        outcome = ("failed", e.reason, e.message)
    except Exception as e:  # anything unforeseen still ends in a status, never a silent death
        log.exception("the kernel host failed")
        outcome = ("failed", "runner_error", f"The kernel host failed: {type(e).__name__}: {e}")
    return host.finish(outcome)


def main(folder: Path, job: dict[str, Any]) -> None:
    """The process's entry (from ``python -m jupyter_gpu_env.runner FOLDER``): its log to stdout, line
    by line, as the runner's; exits with the job's code without interpreter teardown (ZeroMQ's context
    would wait on a dead kernel's sockets)."""
    logging.basicConfig(level=logging.INFO, format="[%(asctime)s] %(message)s", datefmt="%H:%M:%S")
    code = run_host(folder, job)
    logging.shutdown()
    os._exit(code)
