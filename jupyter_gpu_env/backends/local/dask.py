"""The local backend's clusters: the scheduler a detached process on this machine, its workers the
keeper's processes beside it (``keeper.pools.LocalPool``); all of them, and the dashboard, listen on
loopback only, behind the cluster's mutual TLS (another user of this machine reaches loopback too)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psutil

from ... import proc
from ...contracts.dask.spec import LOG, SCHEDULER_JSON, ClusterSpec, Network, scheduler_args, scheduler_env
from ...errors import Conflict
from ..base import Backend
from ..dask import ClusterRef, DaskSettings, Placement, SchedulerSeen, Started

STOP_GRACE = 20.0  # seconds the keeper has to retire its workers before everything is killed
_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


class LocalLauncher:
    name = "local"
    network = Network(loopback=True)

    def __init__(self, backend: Backend, settings: DaskSettings) -> None:
        self.backend = backend
        self.settings = settings

    def check(self, placement: Placement, walltime_seconds: int) -> None:
        if placement.mig_profile:
            raise Conflict(
                "The local backend cannot give a worker its own MIG slice; ask for whole GPUs, or use "
                "SLURM or Kubernetes.",
                reason="resources_unavailable",
            )
        if placement.image:
            raise Conflict(
                "The local backend cannot run a cluster from a packed image; choose its environment.",
                reason="images_unsupported",
            )
        have = len(self._gpu_ids()) if placement.gpus else 0
        if placement.gpus and placement.gpus > have:
            raise Conflict(
                f"Each worker asks for {placement.gpus} GPUs; this machine has {have}.",
                reason="resources_unavailable",
            )

    def pool(self, spec: ClusterSpec, placement: Placement, folder: Path) -> dict[str, Any]:
        if not placement.gpus:
            return {"kind": "local"}
        return {"kind": "local", "gpu_ids": self._gpu_ids(), "gpus_per_worker": placement.gpus}

    def _gpu_ids(self) -> list[str]:
        """The GPUs this server may hand out: those CUDA_VISIBLE_DEVICES names, else all it counts."""
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        if visible is not None:
            return [g.strip() for g in visible.split(",") if g.strip()]
        return [str(i) for i in range(self.backend.info().limits.max_gpus or 0)]

    def _env(self, spec: ClusterSpec, placement: Placement) -> dict[str, str]:
        env = dict(os.environ)
        env.update(scheduler_env(Path(spec.folder)))
        env["PYTHONUNBUFFERED"] = "1"
        if not placement.gpus:
            env["CUDA_VISIBLE_DEVICES"] = ""  # a worker that asked for no GPU must not take one here
        if placement.cpus:
            for var in _THREAD_VARS:
                env[var] = "1"  # dask's threads are the parallelism; nested BLAS threads oversubscribe
        return env

    async def together(self, spec: ClusterSpec, placement: Placement) -> int:
        """None: every process starts at once here anyway, with no queue to wait in."""
        return 0

    async def start(self, spec: ClusterSpec, placement: Placement, folder: Path) -> Started:
        if spec.python is None:
            raise Conflict("A local cluster needs an environment's Python.", reason="no_python")
        argv = [
            spec.python,
            *scheduler_args(folder, spec.idle_timeout_seconds, self.network),
        ]
        pid = await asyncio.to_thread(
            proc.spawn_detached, argv, cwd=folder, env=self._env(spec, placement), stdout_path=folder / LOG
        )
        return Started(handle=str(pid))

    async def observe(self, clusters: Sequence[ClusterRef]) -> dict[str, SchedulerSeen]:
        def look() -> dict[str, SchedulerSeen]:
            seen = {}
            for c in clusters:
                alive = _scheduler_of(c)
                seen[c.id] = (
                    SchedulerSeen(state="running", host="127.0.0.1")
                    if alive
                    else SchedulerSeen(state="ended")
                )
            return seen

        return await asyncio.to_thread(look)

    async def stop(self, cluster: ClusterRef) -> None:
        """The keeper retires its workers and closes; whatever is left after the grace is killed:
        the scheduler's group, and every worker process whose command names this cluster's folder."""
        deadline = time.monotonic() + STOP_GRACE
        while time.monotonic() < deadline:  # another process's end: no event to wait on
            if await asyncio.to_thread(_scheduler_of, cluster) is None:
                break
            await asyncio.sleep(0.25)
        await asyncio.to_thread(_kill_all, cluster)


# How long a child this server started may not yet bear the scheduler's command line: until its exec
# ends it bears the server's, and for an instant after the kernel releases the parent, none at all (measured
# under load: 133 of 5,012 reads right after a start found /proc/PID/cmdline empty).
_LAUNCH_WINDOW = 10.0


def _scheduler_of(c: ClusterRef) -> psutil.Process | None:
    """The live scheduler of ``c``, believed while its command names the cluster's scheduler file, or
    while it is a child this process started moments ago (as a local job's runner is believed)."""
    if c.handle is None or not c.handle.isdigit():
        return None
    try:
        p = psutil.Process(int(c.handle))
        if p.status() == psutil.STATUS_ZOMBIE:
            return None
        if str(c.folder / SCHEDULER_JSON) in p.cmdline():
            return p
        if p.ppid() == os.getpid() and time.time() - p.create_time() < _LAUNCH_WINDOW:
            return p
    except psutil.Error:
        pass
    return None


def _members(c: ClusterRef) -> list[psutil.Process]:
    """Every process of this user whose command names the cluster's scheduler file: scheduler, workers."""
    marker = str(c.folder / SCHEDULER_JSON)
    found = []
    for p in psutil.process_iter(["pid", "uids", "cmdline"]):
        with contextlib.suppress(psutil.Error):
            if p.info["uids"] and p.info["uids"].real == os.getuid() and marker in (p.info["cmdline"] or []):
                found.append(p)
    return found


def _kill_all(c: ClusterRef) -> None:
    members = _members(c)
    for p in members:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(p.pid, signal.SIGKILL) if os.getpgid(p.pid) == p.pid else p.kill()
    psutil.wait_procs(members, timeout=10)
