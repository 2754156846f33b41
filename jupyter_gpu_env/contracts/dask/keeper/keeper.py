"""The keeper, preloaded into a cluster's scheduler: it keeps the workers ``cluster.json`` and
``scale.json`` ask for (a count, or adaptive bounds around the scheduler's own target), replaces those
that retire at their lifetime or die, shuts everything down on ``stop``, on SIGTERM or when the scheduler
closes for being idle, and writes ``state.json`` for the server. It runs where the scheduler runs, so the
cluster goes on when the Jupyter server stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
import importlib.util
import logging
import os
import platform
import socket
import sys
import time
from pathlib import Path
from typing import Any

from distributed.diagnostics.plugin import SchedulerPlugin

from .files import read_json, write_json
from .pools import Listed, make_pool

log = logging.getLogger("gpuenv_dask.keeper")

STATE_FORMAT = 1
MAX_SPANS = 2000  # the newest worker spans in state.json; older ones are summed in closed_seconds
MAX_PROBLEMS = 20
MAX_PENDING_SHOWN = 100
SCALE_DOWN_TICKS = 3  # adaptive: the target must stay lower this many ticks before workers retire


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


class Keeper:
    def __init__(self, scheduler: Any, folder: Path) -> None:
        self.scheduler = scheduler
        self.folder = folder
        self.spec: dict[str, Any] = read_json(folder / "cluster.json") or {}
        python = self.spec.get("python") or os.environ.get("GPU_ENV_DASK_PYTHON") or sys.executable
        self.pool = make_pool(folder, self.spec, python)
        self.workers: int | None = self.spec.get("workers")
        self.adapt: dict[str, int] | None = self.spec.get("adapt")
        if self.workers is None and self.adapt is None:
            self.workers = 1
        self.generation = -1
        self.interval = float(self.spec.get("interval_seconds", 2.0))
        self.connect_timeout = float(self.spec.get("connect_timeout_seconds", 300))
        self.started_at = time.time()
        self.started_total = 0
        self._ticked = False
        self.spans: dict[str, list[float | None]] = {}  # worker name -> [joined, left]
        self.closed_seconds = 0.0
        self.seen_running: dict[str, float] = {}  # pool name -> when first seen running, not joined
        self.problems: list[str] = []
        self.requested = 0
        self.low_ticks = 0
        self.pending: list[Listed] = []
        self.once: set[str] = set()  # workers started in the scheduler's allocation (Listed.once)
        self._write_due = False
        self.state = "running"
        self.reason: str | None = None
        self.task: asyncio.Task[None] | None = None
        self.closing: asyncio.Task[Any] | None = None
        if importlib.util.find_spec("bokeh") is None:
            self.problem(
                "The environment has no bokeh, so the cluster has no dashboard; add bokeh (3.1 or later) "
                "to the environment to see it."
            )
        self.versions = {
            "python": platform.python_version(),
            "distributed": _version("distributed"),
            "dask_cuda": _version("dask-cuda") if self.spec.get("worker", {}).get("cuda") else None,
        }

    # ----- life -----

    def start(self) -> None:
        self.scheduler.add_plugin(_Spans(self), name="gpuenv-keeper-spans")
        self.task = asyncio.get_running_loop().create_task(self._loop())

    async def _loop(self) -> None:
        while self.state == "running":
            try:
                await self.tick()
            except asyncio.CancelledError:
                raise
            except Exception as e:  # a failing batch command must not end the keeping
                log.exception("keeper tick failed")
                self.problem(f"Keeping the workers failed: {e}")
                self.write()
            if self.state != "running":
                return
            await asyncio.sleep(self.interval)

    async def tick(self) -> None:
        if (self.folder / "stop").exists():
            await self.shut("stopped", "Shut down by its user.")
            return
        self._read_scale()
        listed = await self.pool.listed()
        self.once |= {w.name for w in listed if w.once}
        # one of the allocation's workers that left (retired, died) is gone for good: replaced by a job
        listed = [w for w in listed if not (w.once and self._left(w.name))]
        if not self._ticked:
            self.started_total += len(listed)  # workers the launcher started with the scheduler
        self._ticked = True
        joined = self._joined_pool_names(listed)
        self.pending = [w for w in listed if w.name not in joined]
        running = len(self._joined())
        # a worker near its lifetime is replaced before it goes, so its data has somewhere to move
        staying = running - self._leaving()
        target = self._target(staying + len(self.pending))
        self.requested = target
        have = staying + len(self.pending)
        if have < target:
            names = await self.pool.submit(target - have)
            self.started_total += len(names)
            self.pending += [Listed(n, "queued") for n in names]
        elif have > target:
            await self._shrink(have - target)
        self._watch_starting()
        self.write()

    async def shut(self, reason: str, message: str) -> None:
        """Everything ended: pending workers cancelled, running ones retired, the scheduler closed."""
        if self.state != "running":
            return
        self.state, self.reason = "stopping", message
        self.write()
        with contextlib.suppress(Exception):
            await self.pool.cancel_all()
        with contextlib.suppress(Exception):
            await self.scheduler.retire_workers(list(self.scheduler.workers), close_workers=True)
        self.state = "stopped"
        self.reason = message
        self.write(ended=reason)
        # closed from its own task: the teardown it runs then must not cancel this one mid-close
        self.closing = asyncio.get_running_loop().create_task(self.scheduler.close(reason=f"gpuenv-{reason}"))

    async def teardown(self) -> None:
        """The scheduler is closing (idle, SIGTERM, or our own shut): leave no worker behind."""
        if self.state == "stopped":
            return
        if self.task is not None:
            self.task.cancel()
        idle = self.scheduler.idle_since and time.time() - self.scheduler.idle_since >= (
            self.scheduler.idle_timeout or float("inf")
        )
        reason, message = (
            ("idle", f"Shut down after {int(self.scheduler.idle_timeout)} s unused.")
            if idle
            else ("terminated", "The scheduler was stopped.")
        )
        self.state, self.reason = "stopped", message
        with contextlib.suppress(Exception):
            await self.pool.cancel_all()
        self.write(ended=reason)

    # ----- what to keep -----

    def _read_scale(self) -> None:
        try:
            scale = read_json(self.folder / "scale.json")
        except ValueError as e:
            self.problem(f"scale.json is unreadable: {e}")
            return
        if not isinstance(scale, dict) or int(scale.get("generation", -1)) <= self.generation:
            return
        self.generation = int(scale["generation"])
        self.workers, self.adapt = scale.get("workers"), scale.get("adapt")
        self.low_ticks = 0

    def _target(self, have: int) -> int:
        if self.adapt is None:
            return int(self.workers or 0)
        low, high = int(self.adapt.get("minimum", 0)), int(self.adapt["maximum"])
        wanted = max(low, min(high, int(self.scheduler.adaptive_target())))
        if wanted < have:
            self.low_ticks += 1
            if self.low_ticks < SCALE_DOWN_TICKS:
                return have
        else:
            self.low_ticks = 0
        return wanted

    async def _shrink(self, excess: int) -> None:
        # queued ones first (they hold nothing), the newest first; then those starting; then running ones
        # retired gracefully, their data moved to the others
        queued = [w for w in self.pending if w.state == "queued"][::-1]
        cancel = (queued + [w for w in self.pending if w.state != "queued"])[:excess]
        if cancel:
            await self.pool.cancel([w.name for w in cancel])
            gone = {w.name for w in cancel}
            self.pending = [w for w in self.pending if w.name not in gone]
        rest = excess - len(cancel)
        if rest > 0 and getattr(self.pool, "retires_through_scheduler", False):
            # the batch system retires workers itself, through the scheduler (the Dask operator's
            # worker group): a worker retired here would be restarted by its Deployment
            await self.pool.cancel(self._joined()[:rest])
        elif rest > 0:
            addresses = self.scheduler.workers_to_close(n=rest)[:rest]
            if len(addresses) < rest:
                addresses = list(self.scheduler.workers)[:rest]
            await self.scheduler.retire_workers(addresses, close_workers=True)

    def _leaving(self) -> int:
        """Joined workers that may retire at their lifetime before a replacement could join: from the
        earliest moment distributed may retire one (lifetime - stagger) less a lead of one stagger."""
        life = self.spec.get("lifetime") or {}
        lifetime, stagger = float(life.get("lifetime", 0)), float(life.get("stagger", 0))
        if lifetime <= 0 or getattr(self.pool, "retires_through_scheduler", False):
            return 0  # the operator's Deployment restarts a retired worker itself
        due = lifetime - stagger - max(10.0, stagger)
        now = time.time()
        joined = set(self._joined()) - self.once  # the allocation's workers never retire early
        return sum(
            1
            for name, (start, end) in self.spans.items()
            if end is None and name in joined and start is not None and now - start >= due
        )

    def _left(self, name: str) -> bool:
        span = self.spans.get(name)
        return span is not None and span[1] is not None

    def _joined(self) -> list[str]:
        return [str(ws.name) for ws in self.scheduler.workers.values()]

    def _joined_pool_names(self, listed: list[Listed]) -> set[str]:
        joined = set(self._joined())
        # dask-cuda names one worker per GPU after its job: "<name>-<gpu>"
        return {w.name for w in listed if w.name in joined or any(j.startswith(f"{w.name}-") for j in joined)}

    def _watch_starting(self) -> None:
        now = time.time()
        starting = {w.name for w in self.pending if w.state == "running"}
        self.seen_running = {n: t for n, t in self.seen_running.items() if n in starting}
        for w in self.pending:
            if w.state != "running":
                continue
            first = self.seen_running.setdefault(w.name, now)
            if now - first >= self.connect_timeout and first > 0:
                where = f" on {w.node}" if w.node else ""
                self.problem(
                    f"Worker {w.name} has run{where} for {int(now - first)} s without joining the scheduler "
                    f"at {self.scheduler.address}: check that the workers' nodes can reach it (firewall, "
                    f"network interface); its log is in workers/."
                )
                self.seen_running[w.name] = -1.0  # said once

    def problem(self, text: str) -> None:
        """Said once while it lasts: the same words again only move its time."""
        stamped = f"{time.strftime('%H:%M:%S')} {text}"
        if self.problems and self.problems[-1].split(" ", 1)[-1] == text:
            self.problems = [*self.problems[:-1], stamped]
            return
        self.problems = [*self.problems, stamped][-MAX_PROBLEMS:]

    # ----- what the server reads -----

    def joined(self, name: str) -> None:
        self.spans[name] = [time.time(), None]
        if len(self.spans) > MAX_SPANS:
            oldest = next((k for k, v in self.spans.items() if v[1] is not None), None)
            if oldest is not None:
                start, end = self.spans.pop(oldest)
                self.closed_seconds += float(end or 0) - float(start or 0)
        versions = self._worker_distributed(name)
        mine = self.versions["distributed"]
        if versions and mine and versions != mine:
            self.problem(f"Worker {name} runs distributed {versions}, the scheduler {mine}.")
        # the server learns of it now, not at the next tick (dask-cuda names a worker "<job>-<gpu>")
        self.pending = [w for w in self.pending if w.name != name and not name.startswith(f"{w.name}-")]
        self._write_soon()

    def _write_soon(self) -> None:
        """state.json within a moment: workers joining together are written once, not once each."""
        if self._write_due or self.state != "running":
            return
        self._write_due = True

        def now() -> None:
            self._write_due = False
            if self.state == "running":
                self.write()

        asyncio.get_running_loop().call_later(0.05, now)

    def left(self, name: str) -> None:
        span = self.spans.get(name)
        if span is not None and span[1] is None:
            span[1] = time.time()

    def _worker_distributed(self, name: str) -> str | None:
        for ws in self.scheduler.workers.values():
            if str(ws.name) == name:
                packages = (getattr(ws, "versions", None) or {}).get("packages", {})
                found = packages.get("distributed")
                return str(found) if found else None
        return None

    def write(self, ended: str | None = None) -> None:
        now = time.time()
        dashboard = None
        server = getattr(self.scheduler, "http_server", None)
        if server is not None:
            dashboard = getattr(server, "port", None)
        worker_seconds = self.closed_seconds + sum(
            (end or now) - start for start, end in self.spans.values() if start is not None
        )
        state = {
            "format": STATE_FORMAT,
            "updated": now,
            "started": self.started_at,
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "address": self.scheduler.address,
            "dashboard_port": dashboard,
            "state": self.state,
            "ended": ended,
            "message": self.reason,
            "generation": self.generation,
            "requested": self.requested,
            "running": len(self._joined()),
            "pending": [
                {
                    "name": w.name,
                    "state": "starting" if w.state == "running" else "queued",
                    "reason": w.reason,
                }
                for w in self.pending[:MAX_PENDING_SHOWN]
            ],
            "pending_count": len(self.pending),
            "in_allocation": sum(1 for n in self.once if not self._left(n)),
            "started_total": self.started_total,
            "spans": [[name, start, end] for name, (start, end) in self.spans.items()],
            "worker_seconds": worker_seconds,
            "idle_since": self.scheduler.idle_since,
            "versions": self.versions,
            "problems": self.problems,
        }
        try:
            write_json(self.folder / "state.json", state)
        except OSError:
            log.exception("could not write state.json")


class _Spans(SchedulerPlugin):
    """When each worker joined and left, for worker-hours and version checks. The scheduler calls
    remove_worker after forgetting the worker, so its name is kept here by address."""

    def __init__(self, keeper: Keeper) -> None:
        self.keeper = keeper
        self.names: dict[str, str] = {}

    def add_worker(self, scheduler: Any, worker: str) -> None:
        ws = scheduler.workers.get(worker)
        name = str(ws.name) if ws is not None else worker
        self.names[worker] = name
        self.keeper.joined(name)

    def remove_worker(self, scheduler: Any, worker: str, **kwargs: Any) -> None:
        self.keeper.left(self.names.pop(worker, worker))


_keeper: Keeper | None = None


async def dask_setup(scheduler: Any) -> None:
    global _keeper
    _keeper = Keeper(scheduler, Path(os.environ["GPU_ENV_DASK_FOLDER"]))
    _keeper.start()


async def dask_teardown(scheduler: Any) -> None:
    if _keeper is not None:
        await _keeper.teardown()
