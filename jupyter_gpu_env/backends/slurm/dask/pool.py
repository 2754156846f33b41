"""Workers as the tasks of SLURM job arrays: the keeper, in the scheduler's own batch job, submits
``worker.sbatch`` (written by the server) with ``sbatch --array``, lists the cluster's tasks with one
``squeue`` and cancels them with ``scancel``. Standard library only: it runs in the user's environment.

Workers that ``cluster.json``'s ``together`` started with the scheduler, as tasks of one ``srun`` step
in its own allocation, are listed as running under their names (``slurm-JOB-TASK``, the scheduler's
job's id and their task's), marked ``once``: the keeper counts one gone when it has left the scheduler.

``cluster.json``'s ``pool`` says how: ``script`` (worker.sbatch), ``job_name`` (every task of every
array the keeper submitted carries it), ``sbatch``/``squeue``/``scancel`` (the commands, as the server
runs them), ``slurm_conf`` (exported as SLURM_CONF when set) and ``timeout`` (seconds per command).

The SLURM launcher copies this module into each cluster's keeper package (``module``: ``pool_slurm``),
where the keeper's ``make_pool`` finds :func:`make`.
"""

from __future__ import annotations

import getpass
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING or __name__.startswith("jupyter_gpu_env."):  # read in place: tests, type checks
    from ....contracts.dask.keeper.commands import run
    from ....contracts.dask.keeper.files import Listed
else:  # copied beside the keeper into a cluster's folder (``gpuenv_dask/pool_slurm.py``)
    from .commands import run
    from .files import Listed

# A worker's name: its array task's id behind a word, since distributed's worker turns a name that int()
# reads (``123_4`` is 1234 to Python) into a number.
PREFIX = "slurm-"
# squeue's fields: the id (an array's pending tasks as one `ID_[2-4,7%5]`), the state, the node, the reason
FORMAT = "%i|%T|%N|%r"
QUEUED = frozenset({"PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD"})
RUNNING = frozenset({"RUNNING", "CONFIGURING", "SUSPENDED", "STOPPED", "SIGNALING", "RESIZING"})
_EMPTY = frozenset({"", "N/A", "(null)", "None", "n/a"})
_ARRAY = re.compile(r"^(\d+)_\[([0-9,\-]+)(?:%\d+)?\]$")
_TASK = re.compile(r"^\d+_\d+$")
# What a job started inside the scheduler's job must not inherit from it (sbatch reads SBATCH_* and
# SLURM_* input variables: the scheduler's own job's memory, CPUs or dependency would be the workers').
_DROP = ("SLURM_", "SBATCH_", "SALLOC_", "SRUN_", "SQUEUE_", "SCANCEL_")


def task_names(job_id: str) -> list[str]:
    """``123_4`` -> ``["slurm-123_4"]``; ``123_[0-2,5%4]`` -> ``["slurm-123_0", "slurm-123_1",
    "slurm-123_2", "slurm-123_5"]``; a job that is not an array task (not ours) -> ``[]``."""
    if _TASK.fullmatch(job_id):
        return [PREFIX + job_id]
    m = _ARRAY.fullmatch(job_id)
    if not m:
        return []
    names = []
    for part in m.group(2).split(","):
        low, _, high = part.partition("-")
        if low.isdigit() and (not high or high.isdigit()):
            names += [f"{PREFIX}{m.group(1)}_{i}" for i in range(int(low), int(high or low) + 1)]
    return names


def parse_listed(text: str) -> list[Listed]:
    """``squeue -h -o FORMAT`` lines -> one entry per task that is queued or running (ending ones are
    left out: a worker that retired is gone, and its replacement is due)."""
    out: list[Listed] = []
    for line in text.splitlines():
        parts = [p.strip() for p in line.split("|", 3)]
        if len(parts) != 4:
            continue
        job_id, state, node, reason = parts
        state = re.split(r"[\s+,]", state, maxsplit=1)[0].upper()
        if state in QUEUED:
            why = None if reason in _EMPTY else reason
            out += [Listed(n, "queued", reason=why) for n in task_names(job_id)]
        elif state in RUNNING:
            out += [Listed(n, "running", node=None if node in _EMPTY else node) for n in task_names(job_id)]
    return out


class SlurmPool:
    def __init__(self, folder: Path, spec: dict[str, Any], python: str) -> None:
        pool = spec["pool"]
        self.folder = folder
        self.script = str(pool["script"])
        self.job_name = str(pool["job_name"])
        self.sbatch = str(pool.get("sbatch") or "sbatch")
        self.squeue = str(pool.get("squeue") or "squeue")
        self.scancel = str(pool.get("scancel") or "scancel")
        self.timeout = float(pool.get("timeout") or 30)
        self.user = getpass.getuser()
        env = {k: v for k, v in os.environ.items() if not k.startswith(_DROP) or k == "SLURM_CONF"}
        if pool.get("slurm_conf"):
            env["SLURM_CONF"] = str(pool["slurm_conf"])
        self.env = env
        job = os.environ.get("SLURM_JOB_ID", "")
        count = int(spec.get("together") or 0) if job.isdigit() else 0
        self.together = [f"{PREFIX}{job}-{i}" for i in range(count)]

    async def _run(self, argv: list[str]) -> str:
        return await run(argv, self.timeout, env=self.env)

    async def submit(self, count: int) -> list[str]:
        if count <= 0:
            return []
        out = await self._run([self.sbatch, "--parsable", f"--array=0-{count - 1}", self.script])
        job_id = next((ln.split(";", 1)[0].strip() for ln in out.splitlines() if ln.strip()), "")
        if not job_id.isdigit():
            raise RuntimeError(f"sbatch printed no job id: {out.strip()[:200]!r}")
        return [f"{PREFIX}{job_id}_{i}" for i in range(count)]

    async def listed(self) -> list[Listed]:
        argv = [self.squeue, "-h", f"--user={self.user}", f"--name={self.job_name}", "-o", FORMAT]
        started_with_me = [Listed(n, "running", once=True) for n in self.together]
        return started_with_me + parse_listed(await self._run(argv))

    async def cancel(self, names: list[str]) -> None:
        # one of the allocation's tasks cannot be cancelled alone: the keeper retires it (it has joined)
        jobs = [n[len(PREFIX) :] if n.startswith(PREFIX) else n for n in names if n not in self.together]
        if jobs:
            await self._scancel(jobs)

    async def cancel_all(self) -> None:
        await self._scancel([f"--user={self.user}", f"--name={self.job_name}"])

    async def _scancel(self, args: list[str]) -> None:
        try:
            await self._run([self.scancel, *args])
        except RuntimeError as e:  # a task that ended meanwhile is not a failure
            if "invalid job id" not in str(e).lower() and "already completing" not in str(e).lower():
                raise


def make(folder: Path, spec: dict[str, Any], python: str) -> SlurmPool:
    """The keeper's pool for ``cluster.json``'s ``pool`` (what ``make_pool`` calls)."""
    return SlurmPool(folder, spec, python)
