"""What runs on the node: ``python -m jupyter_gpu_env.runner JOB_FOLDER``.

Every backend (local process, SLURM, Kubernetes) starts this same program, so it depends only on the
job folder and installed packages. It executes ``input.ipynb`` with papermill, writing the output notebook
that job.json names (after the job and its parameters) cell by cell, ``progress.json`` after each cell, a ``heartbeat`` every few seconds and, last,
``status.json``. SIGTERM (cancel) and the time limit stop it the same way: kill the kernel, let papermill
save what ran, record why. Its stdout and stderr are the job's log; the backend captures them.

An opportunistic job may be stopped for other work and started again (see :mod:`.attempts`): then the
signal is a preemption, not a cancel, and the runner records the attempt instead of a final status.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from ...contracts import jobfiles
from ...gpu.jobuse import GpuUseSampler
from .attempts import Attempt, begin_attempt, record_attempt
from .runtime import RunnerError as _RunnerError
from .runtime import beat, kernel_for, load_job, start_gpu_sampler, write_status

log = logging.getLogger("jupyter_gpu_env.runner")

# After SIGTERM, how long the runner may take to save and record before it exits regardless. The local
# backend's SIGKILL comes later (its kill grace), so the status is written first.
STOP_GRACE = 5.0
ENGINE_NAME = "gpu-env-runner"
EXIT_CODES = {"succeeded": 0, "failed": 1, "cancelled": 143}
EXIT_RUNNER_ERROR = 2
# A preempted attempt: not an end; the backend starts the job again (a Kubernetes podFailurePolicy
# ignores this code, so it does not count against the Job's retries).
EXIT_PREEMPTED = jobfiles.EXIT_PREEMPTED
# Set by a backend's script to where it opened the job's packed image (backends/slurm/script.py sets it).

Outcome = tuple[str, str | None, str]  # state, reason, message


class _Stop(Exception):
    """Raised into papermill's cell loop when the job must stop (cancel, time limit)."""


class Runner:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.started_at = time.time()
        self.stop_outcome: Outcome | None = None
        self.kernel_pgid: int | None = None
        self.cells_total = 0
        self._injected_index: int | None = None  # where papermill puts the parameters it injects
        self._finish_lock = threading.Lock()
        self._finished = False
        self._heartbeat_stop = threading.Event()
        self.gpu_sampler: GpuUseSampler | None = None
        self.attempt: Attempt | None = None
        self.cells_done = 0

    # ----- what the process does -----

    def run(self) -> int:
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)
        signal.signal(signal.SIGUSR1, self._on_preempt)
        threading.Thread(
            target=beat, args=(self.folder, self._heartbeat_stop), name="heartbeat", daemon=True
        ).start()
        try:
            job = self._load_job()
            self.attempt = begin_attempt(self.folder, job, self.started_at)
            self.gpu_sampler = start_gpu_sampler(self.folder, job)
            outcome, extra = self._execute(job)
        except _RunnerError as e:
            outcome, extra = ("failed", e.reason, e.message), {}
        except Exception as e:  # anything unforeseen still ends in a status, never a silent death
            log.exception("the runner failed")
            outcome, extra = ("failed", "runner_error", f"The runner failed: {type(e).__name__}: {e}"), {}
        return self.finish(outcome, extra)

    def _load_job(self) -> dict[str, Any]:
        return load_job(self.folder)

    def _execute(self, job: dict[str, Any]) -> tuple[Outcome, dict[str, Any]]:
        kernel_name = kernel_for(self.folder, job)
        limit = jobfiles.time_limit_of(job, os.environ)
        if limit:
            timer = threading.Timer(float(limit), self._time_up, args=(int(limit),))
            timer.daemon = True
            timer.start()
        cwd = job.get("cwd")
        if not cwd or not os.path.isdir(cwd):
            cwd = str(self.folder)

        # Imported here: papermill takes a second or two to import, and a bad job.json should fail fast.
        import nbformat
        import papermill
        from papermill.exceptions import PapermillExecutionError

        from .papermill_engine import register_engine

        register_engine(ENGINE_NAME, self)
        nb = nbformat.read(self.folder / jobfiles.INPUT, as_version=4)  # type: ignore[no-untyped-call]  # nbformat has no type hints
        parameters = dict(job.get("parameters") or {})
        if self.attempt is not None:
            parameters.update(self.attempt.parameters)
        if isinstance(job.get("upstream"), dict):  # a pipeline node: its parents' folders and results
            from .upstream import upstream_values

            parameters["upstream"] = upstream_values(job["upstream"])
        self._count_cells(nb, injected=bool(parameters))
        self.write_progress(0)
        if self.stop_outcome:
            return self.stop_outcome, {}
        log.info(
            "running %s with kernel %s in %s", job.get("notebook_path", jobfiles.INPUT), kernel_name, cwd
        )
        try:
            papermill.execute_notebook(
                _literal(self.folder / jobfiles.INPUT),
                _literal(self.folder / jobfiles.output_name(job)),
                parameters=parameters or None,
                engine_name=ENGINE_NAME,
                kernel_name=kernel_name,
                log_output=True,
                progress_bar=False,
                cwd=cwd,
                start_timeout=int(job.get("start_timeout", 120)),
            )
        except PapermillExecutionError as e:
            if self.stop_outcome:
                return self.stop_outcome, {}
            inj = self._injected_index
            cell = e.cell_index + 1 - (1 if inj is not None and e.cell_index > inj else 0)
            message = f"{e.ename}: {e.evalue} (cell {cell} of the notebook)"
            return ("failed", "cell_error", message), {"ename": e.ename, "evalue": e.evalue, "cell": cell}
        except Exception as e:
            if self.stop_outcome:  # the kernel we killed surfaces as DeadKernelError, or _Stop from a hook
                return self.stop_outcome, {}
            name = type(e).__name__
            reason = "kernel_not_found" if name == "NoSuchKernel" else "runner_error"
            log.exception("execution failed")
            return ("failed", reason, f"{name}: {e}"), {}
        if self.stop_outcome:
            return self.stop_outcome, {}
        return ("succeeded", None, "All cells ran."), {}

    def finish(self, outcome: Outcome, extra: dict[str, Any] | None = None) -> int:
        """Write status.json once (the main thread and the stop timer may race here); return the exit code.
        A preempted attempt writes no status: it records the attempt, and the job goes on later."""
        state, reason, message = outcome
        code = EXIT_RUNNER_ERROR if reason == "runner_error" else EXIT_CODES.get(state, 1)
        with self._finish_lock:
            if self._finished:
                return code
            self._finished = True
            self._heartbeat_stop.set()
            gpu = self.gpu_sampler.stop() if self.gpu_sampler is not None else None
            if state == "preempted" and self.attempt is not None:
                log.info("attempt %d %s: %s", self.attempt.number, reason, message)
                try:
                    record_attempt(self.folder, self.attempt, reason, message, self.cells_done, gpu)
                except OSError as e:
                    log.error("could not record the attempt: %s", e)
                return EXIT_PREEMPTED
            write_status(self.folder, outcome, code, self.started_at, gpu, extra)
        return code

    # ----- stopping -----

    def _on_signal(self, signum: int, frame: object) -> None:
        """SIGTERM: a cancel, unless the job may be resumed and no one asked to cancel it (then the
        scheduler is stopping it for other work, as SLURM and Kubernetes do with SIGTERM)."""
        if self.attempt is not None and self.attempt.resumable and not self.attempt.cancel_requested():
            self._on_preempt(signum, frame)
            return
        self.request_stop(("cancelled", "cancelled", "Cancelled by the user."))

    def _on_preempt(self, signum: int, frame: object) -> None:
        """SIGUSR1 (SLURM's signal ahead of a preemption), or SIGTERM to a resumable job."""
        if self.attempt is None or not self.attempt.resumable or self.attempt.cancel_requested():
            self.request_stop(("cancelled", "cancelled", "Cancelled by the user."))
            return
        self.request_stop(
            ("preempted", "preempted", "Stopped for other work; the job is requeued and resumes.")
        )

    def _time_up(self, limit: int) -> None:
        from ...models.resources import format_time_limit

        self.request_stop(
            ("failed", "time_limit", f"The job ran past its time limit of {format_time_limit(limit)}.")
        )

    def request_stop(self, outcome: Outcome) -> None:
        """Stop from a signal handler or a timer thread: no locks here, only flags and kill()."""
        if self.stop_outcome is not None:
            return
        self.stop_outcome = outcome
        log.warning("stopping: %s", outcome[2])
        self.kill_kernel()
        timer = threading.Timer(STOP_GRACE, self._force_exit)
        timer.daemon = True
        timer.start()

    def _force_exit(self) -> None:
        assert self.stop_outcome is not None
        os._exit(self.finish(self.stop_outcome))

    def kill_kernel(self) -> None:
        # The kernel runs in its own session (jupyter_client starts it so); killing its group also
        # takes whatever it started (data loader workers, MPI ranks).
        if self.kernel_pgid is None:
            return
        try:
            os.killpg(self.kernel_pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def check_stop(self) -> None:
        if self.stop_outcome is not None:
            raise _Stop(self.stop_outcome[2])

    def kernel_started(self, pgid: int | None, process: Any = None) -> None:
        self.kernel_pgid = pgid
        for stream in (getattr(process, "stdout", None), getattr(process, "stderr", None)):
            if stream is not None:
                threading.Thread(target=_relay_kernel_output, args=(stream,), daemon=True).start()
        if self.stop_outcome is not None:  # the signal came while the kernel was starting
            self.kill_kernel()
            raise _Stop(self.stop_outcome[2])

    # ----- progress and heartbeat -----

    def _count_cells(self, nb: Any, injected: bool) -> None:
        code = sum(1 for c in nb.cells if c.get("cell_type") == "code")
        # papermill adds a cell after the `parameters` cell (or at the top), or replaces an
        # `injected-parameters` cell left by an earlier papermill run.
        adds = injected and jobfiles.first_tagged_cell(nb, "injected-parameters") < 0
        if adds:
            self._injected_index = jobfiles.first_tagged_cell(nb, "parameters") + 1
        self.cells_total = code + (1 if adds else 0)

    def cell_done(self, nb: Any, index: int) -> None:
        """After papermill finishes cell ``index`` of the running (parameterized) notebook; a cell whose
        kernel was killed to stop the job did not finish."""
        if self.stop_outcome is not None:
            return
        done = sum(1 for c in nb.cells[: index + 1] if c.get("cell_type") == "code")
        self.write_progress(done)

    def write_progress(self, done: int) -> None:
        self.cells_done = done
        try:
            jobfiles.write_json_atomic(
                self.folder / jobfiles.PROGRESS, {"cells_done": done, "cells_total": self.cells_total}
            )
        except OSError as e:
            log.warning("could not write progress: %s", e)


# What the kernel process says about itself that concerns no one reading a batch job's log: the
# runner talks to its own kernel on this machine only.
_KERNEL_NOISE = ("running over TCP without encryption",)


def _relay_kernel_output(stream: Any) -> None:
    """Copy the kernel process's own output to the log, each line marked as the kernel's."""
    for raw in iter(stream.readline, b""):
        line = raw.decode("utf-8", "replace").rstrip()
        if line and not any(noise in line for noise in _KERNEL_NOISE):
            print(f"[kernel] {line}", file=sys.stderr, flush=True)


class _OneLine(logging.Filter):
    """papermill logs each output with its final newline; the log handler adds one more."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = record.msg.rstrip("\n")
        return bool(record.msg) or bool(record.args)


def _literal(path: Path) -> str:
    """papermill formats paths with the parameters (``{name}``); escape braces a folder may contain."""
    return str(path).replace("{", "{{").replace("}", "}}")


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m jupyter_gpu_env.runner JOB_FOLDER", file=sys.stderr)
        sys.exit(EXIT_RUNNER_ERROR)
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(line_buffering=True)  # the log is followed live
    logging.basicConfig(level=logging.INFO, format="[%(asctime)s] %(message)s", datefmt="%H:%M:%S")
    for handler in logging.getLogger().handlers:
        handler.addFilter(_OneLine())
    folder = Path(args[0]).resolve()
    if not folder.is_dir():
        print(f"runner: {folder} is not a job folder", file=sys.stderr)
        sys.exit(EXIT_RUNNER_ERROR)
    code = Runner(folder).run()
    # Everything is saved and recorded. Skip interpreter teardown: after a killed kernel, ZeroMQ's
    # context waits seconds for sockets to a dead peer, and a cancel should end promptly.
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
