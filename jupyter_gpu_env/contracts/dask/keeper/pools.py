"""Where the keeper's workers come from: one ``Pool`` per backend kind, named by ``cluster.json``'s ``pool``.

A pool starts workers, lists the ones it started that still exist (queued or running in the batch
system), and cancels them. It knows nothing of Dask: the keeper matches what it lists against the
workers that joined the scheduler, by name (each worker is started with ``--name`` = its pool name).
"""

from __future__ import annotations

import asyncio
import importlib
import os
import re
import signal
import subprocess
from pathlib import Path
from typing import Any, Protocol

from .files import Listed, read_json, write_json

__all__ = ["Listed", "LocalPool", "Pool", "make_pool"]


class Pool(Protocol):
    async def submit(self, count: int) -> list[str]:
        """Ask for ``count`` more workers; their names."""

    async def listed(self) -> list[Listed]:
        """The workers started and not ended, in one query."""

    async def cancel(self, names: list[str]) -> None:
        """Cancel these (queued ones, or running ones that never joined)."""

    async def cancel_all(self) -> None:
        """Cancel every worker of the cluster, queued or running."""


class LocalPool:
    """Workers as processes on the scheduler's machine, each in its own session, recorded by pid in
    ``pool-local.json`` (the server's stop reads it to end any the keeper could not)."""

    RECORD = "pool-local.json"

    def __init__(self, folder: Path, spec: dict[str, Any], python: str) -> None:
        self.folder = folder
        self.argv = [python, *spec["worker_args"]]
        self.record = folder / self.RECORD
        saved = read_json(self.record) or {}
        self.pids: dict[str, int] = {str(k): int(v) for k, v in saved.get("pids", {}).items()}
        self.counter = int(saved.get("counter", 0))
        # GPU workers share this machine's GPUs: each gets its own, by CUDA_VISIBLE_DEVICES
        self.gpu_ids: list[str] = [str(g) for g in spec["pool"].get("gpu_ids", [])]
        self.per_worker = int(spec["pool"].get("gpus_per_worker", 0))
        self.gpus: dict[str, list[str]] = {str(k): list(v) for k, v in saved.get("gpus", {}).items()}

    def _save(self) -> None:
        write_json(self.record, {"pids": self.pids, "counter": self.counter, "gpus": self.gpus})

    def _free_gpus(self) -> list[str] | None:
        """GPUs for one more worker (None: none left), or [] for a worker without GPUs."""
        if not self.per_worker:
            return []
        taken = {g for name, ids in self.gpus.items() if name in self.pids for g in ids}
        free = [g for g in self.gpu_ids if g not in taken]
        return free[: self.per_worker] if len(free) >= self.per_worker else None

    async def submit(self, count: int) -> list[str]:
        return await asyncio.to_thread(self._spawn, count)

    def _spawn(self, count: int) -> list[str]:
        names = []
        logs = self.folder / "workers"
        logs.mkdir(exist_ok=True)
        for _ in range(count):
            gpus = self._free_gpus()
            if gpus is None:
                break  # every GPU is a running worker's; the keeper asks again when one ends
            self.counter += 1
            name = f"local-{self.counter}"
            env = dict(os.environ, CUDA_VISIBLE_DEVICES=",".join(gpus)) if self.per_worker else None
            if gpus:
                self.gpus[name] = gpus
            with open(logs / f"{name}.log", "ab", buffering=0) as out:
                child = subprocess.Popen(  # noqa: S603 - argv list
                    [*self.argv, "--name", name],
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    cwd=self.folder,
                    start_new_session=True,
                    close_fds=True,
                )
            self.pids[name] = child.pid
            names.append(name)
        self._save()
        return names

    async def listed(self) -> list[Listed]:
        return await asyncio.to_thread(self._alive)

    def _alive(self) -> list[Listed]:
        alive = {}
        for name, pid in self.pids.items():
            try:
                # reap our own children; one that is not ours (after a restart of the keeper) is probed
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = 0 if _exists(pid) else pid
            if done == 0:
                alive[name] = pid
        if alive != self.pids:
            self.pids = alive
            self.gpus = {name: ids for name, ids in self.gpus.items() if name in alive}
            self._save()
        return [Listed(name, "running") for name in alive]

    async def cancel(self, names: list[str]) -> None:
        for name in names:
            pid = self.pids.get(name)
            if pid is not None:
                _kill_group(pid)

    async def cancel_all(self) -> None:
        await self.cancel(list(self.pids))


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        pass


# Pool kinds in modules of their own, as "module:Class" of this package.
def make_pool(folder: Path, spec: dict[str, Any], python: str) -> Pool:
    """The pool ``spec["pool"]`` names: the local one here, any other from the module its backend's
    launcher copied beside this one (``pool["module"]``, say ``pool_slurm``), by that module's ``make``."""
    pool = spec["pool"]
    if pool["kind"] == "local":
        return LocalPool(folder, spec, python)
    module = pool.get("module")
    if not isinstance(module, str) or not re.fullmatch(r"pool_[a-z0-9_]+", module):
        raise ValueError(f"worker pool kind {pool['kind']!r} names no pool module")
    made: Pool = importlib.import_module(f".{module}", __package__).make(folder, spec, python)
    return made
