"""The SLURM backend's Dask clusters: the scheduler a batch job (``scheduler.sbatch``), the workers the
job arrays its keeper submits (``worker.sbatch``, ``pool.py``). Every command goes through
the backend's controller (its command paths, timeout, environment and SLURM_CONF)."""

from __future__ import annotations

import asyncio
import getpass
import logging
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ....contracts.dask import folder as cluster_folder
from ....contracts.dask.folder import add_pool_module
from ....contracts.dask.spec import ClusterSpec, Network
from ....errors import Conflict, InvalidRequest, Unavailable
from ....models.backends import BackendInfo
from ....models.jobs import JobRequest
from ....models.resources import Resources
from ...base import check_against_info
from ...dask import ClusterRef, DaskSettings, PendingPlace, Placement, SchedulerSeen, Started
from .. import parse
from ..controller import SlurmController
from ..script import SbatchOptions
from ..words import ENDED_WORDS, QUEUED_STATES, RUNNING_STATES, ceil_minutes, pending_words
from . import pool as keeper_pool
from . import script
from .pool import PREFIX as PREFIX_OF_TASK

log = logging.getLogger(__name__)

STOP_GRACE = 30.0  # seconds the keeper has to retire its workers before everything is cancelled
GONE_WITHIN = 120.0  # seconds SLURM has, after scancel, to end every job of the cluster
# squeue's fields for a cluster's jobs: the job's name comes before the reason (the only free text)
FORMAT = "%i|%T|%P|%N|%j|%r"


@dataclass(frozen=True)
class Row:
    job_id: str
    state: str
    partition: str | None
    node: str | None
    name: str
    reason: str | None


def parse_rows(text: str) -> list[Row]:
    """``squeue --noheader --array --format=FORMAT`` lines -> rows (one per array task)."""
    rows = []
    for line in text.splitlines():
        parts = [p.strip() for p in line.split("|", 5)]
        if len(parts) != 6 or not parts[0]:
            continue
        job_id, state, partition, node, name, reason = parts
        rows.append(
            Row(
                job_id,
                state.split("+", 1)[0].split(",", 1)[0].upper(),
                partition or None,
                None if node in ("", "(null)", "N/A") else node,
                name,
                None if reason in ("", "None", "(null)", "N/A") else reason,
            )
        )
    return rows


def seen_from(
    rows: Sequence[Row], clusters: Sequence[ClusterRef], places: dict[str, parse.Standing]
) -> dict[str, SchedulerSeen]:
    """Each cluster's scheduler (its job, by the handle) and its pending workers' places, from the rows."""
    out = {}
    for c in clusters:
        workers_name = script.workers_job_name(c.id)
        pending = tuple(
            PendingPlace(
                PREFIX_OF_TASK + r.job_id, places[r.job_id].position if r.job_id in places else None, r.reason
            )
            for r in rows
            if r.name == workers_name and r.state in QUEUED_STATES
        )
        mine = next((r for r in rows if r.job_id == c.handle), None)
        if mine is None:
            out[c.id] = SchedulerSeen(state="gone", workers=pending)
        elif mine.state in QUEUED_STATES:
            place = places.get(mine.job_id)
            out[c.id] = SchedulerSeen(
                state="queued",
                place=place.position if place else None,
                reason=pending_words(mine.reason),
                workers=pending,
            )
        elif mine.state in RUNNING_STATES:
            out[c.id] = SchedulerSeen(state="running", host=mine.node, workers=pending)
        else:
            words = ENDED_WORDS.get(mine.state, ("", f"SLURM says the scheduler's job is {mine.state}."))[1]
            out[c.id] = SchedulerSeen(state="ended", reason=words, workers=pending)
    return out


def _partition(partitions: Sequence[parse.Partition], name: str | None) -> parse.Partition | None:
    """The partition a job goes to: the one named, else SLURM's default."""
    wanted = name or next((p.name for p in partitions if p.default), None)
    return next((p for p in partitions if p.name == wanted), None)


class _Slurm(Protocol):
    """What the launcher uses of its backend (:class:`..backend.SlurmBackend`, which makes it)."""

    controller: SlurmController

    def info(self) -> BackendInfo: ...

    def validate(self, request: JobRequest) -> None: ...

    def site_options(self, python: str, partition: str | None) -> SbatchOptions: ...


class SlurmLauncher:
    name = "slurm"

    def __init__(self, backend: _Slurm, settings: DaskSettings) -> None:
        self.backend = backend
        self.settings = settings
        self.controller = backend.controller
        self.network = Network.on(settings.interface)

    # ----- before anything is made -----

    def check(self, placement: Placement, walltime_seconds: int) -> None:
        """The queue and each worker's resources against what the backend offers (its own checks)."""
        if placement.image:
            raise Conflict(
                "Dask clusters on SLURM run in an environment, not from a packed image: choose the image's "
                "environment.",
                reason="images_unsupported",
            )
        resources = Resources(
            cpus=placement.cpus,
            memory=placement.memory_bytes,
            gpus=placement.gpus,
            mig_profile=placement.mig_profile,
            time_limit=ceil_minutes(walltime_seconds),
        )
        request = JobRequest.model_construct(queue=placement.queue, resources=resources)
        self.backend.validate(request)
        info = self.backend.info()
        # before the backend's first sinfo it knows no queue: SLURM then judges the queue at sbatch
        known = request if info.queues else request.model_copy(update={"queue": None})
        check_against_info(info, known)

    def _options(self, spec: ClusterSpec, placement: Placement) -> SbatchOptions:
        if spec.python is None:
            raise Conflict("A Dask cluster on SLURM needs an environment's Python.", reason="no_python")
        return self.backend.site_options(spec.python, placement.queue)

    def pool(self, spec: ClusterSpec, placement: Placement, folder: Path) -> dict[str, Any]:
        """Writes ``worker.sbatch`` into ``folder`` (being built aside: the script names ``spec.folder``);
        the keeper submits it with the commands the server uses, from the scheduler's node."""
        try:
            text = script.worker_script(spec, placement, self._options(spec, placement))
        except ValueError as e:
            raise InvalidRequest(f"{e}.", reason="invalid_request") from None
        (folder / script.WORKER_SCRIPT).write_text(text)
        commands = self.controller.commands
        return {
            "kind": "slurm",
            "module": add_pool_module(folder, "pool_slurm", Path(keeper_pool.__file__)),
            "script": str(Path(spec.folder) / script.WORKER_SCRIPT),
            "job_name": script.workers_job_name(spec.id),
            "sbatch": commands["sbatch"],
            "squeue": commands["squeue"],
            "scancel": commands["scancel"],
            "slurm_conf": self.controller.slurm_conf,
            "timeout": self.controller.timeout,
        }

    # ----- the scheduler's job -----

    async def together(self, spec: ClusterSpec, placement: Placement) -> int:
        """Every worker, where the cluster is of a fixed size and its workers' CPUs, memory and whole
        GPUs, with the scheduler's memory, fit one node of the queue (as sinfo says now); else none.
        A MIG slice per worker or dask-cuda's worker keeps jobs of their own: their per-task binding
        within one step is not the same at every site."""
        n = spec.workers or 0
        if not self.settings.one_allocation or spec.adapt is not None or n < 1:
            return 0
        if placement.mig_profile or placement.image or spec.worker.cuda:
            return 0
        options = self._options(spec, placement)
        node = _partition(await self.controller.sinfo(), options.partition)
        if node is None or not node.up:
            return 0
        cpus = n * script.worker_cpus(spec, placement)
        memory = n * script.worker_memory(spec, placement) + script.SCHEDULER_MEMORY
        gpus = n * int(placement.gpus or 0)
        fits = cpus <= node.max_cpus and memory <= node.max_memory_mb * (1 << 20) and gpus <= node.max_gpus
        if node.max_time_seconds is not None and spec.walltime_seconds > node.max_time_seconds:
            return 0
        return n if fits else 0

    async def start(self, spec: ClusterSpec, placement: Placement, folder: Path) -> Started:
        if spec.together:
            return await self._start_together(spec, placement, folder)
        options = self._options(spec, placement)
        # the scheduler lives as long as the server allows, within its partition's limit
        partitions = await self.controller.sinfo()
        node = _partition(partitions, options.partition)
        limit = node.max_time_seconds if node is not None else None
        seconds = min(self.settings.scheduler_walltime_seconds, limit or sys.maxsize)
        try:
            text = script.scheduler_script(spec, options, seconds, self.network)
        except ValueError as e:
            raise InvalidRequest(f"{e}.", reason="invalid_request") from None
        path = folder / script.SCHEDULER_SCRIPT
        await asyncio.to_thread(path.write_text, text)
        # The first workers go in with the scheduler, not after it: they wait for its address file
        # (up to their death timeout), so both jobs start together; the keeper finds them by name.
        first = spec.workers if spec.workers is not None else (spec.adapt or {}).get("minimum", 0)
        array = await self._submit_workers(folder / script.WORKER_SCRIPT, first) if first else None
        try:
            return Started(handle=await self.controller.sbatch(path, "Dask scheduler"))
        except BaseException:
            if array is not None:
                await self.controller.scancel(array)
            raise

    async def _start_together(self, spec: ClusterSpec, placement: Placement, folder: Path) -> Started:
        """The scheduler and ``spec.together`` workers as one batch job (``script.allocation_script``)."""
        sbatch = self.controller.commands["sbatch"]
        srun = str(Path(sbatch).with_name("srun")) if Path(sbatch).is_absolute() else "srun"
        try:
            text = script.allocation_script(
                spec, placement, self._options(spec, placement), self.network, srun=srun
            )
        except ValueError as e:
            raise InvalidRequest(f"{e}.", reason="invalid_request") from None
        path = folder / script.SCHEDULER_SCRIPT
        await asyncio.to_thread(path.write_text, text)
        return Started(handle=await self.controller.sbatch(path, "Dask cluster"))

    async def _submit_workers(self, path: Path, count: int) -> str:
        """``count`` workers as one job array, as the keeper submits them; its SLURM id."""
        argv = [self.controller.commands["sbatch"], "--parsable", f"--array=0-{count - 1}", str(path)]
        res = await self.controller.run(argv, check=False)
        if res.returncode != 0:
            said = parse.sbatch_error(res.stderr or res.stdout)
            raise Conflict(f"SLURM refused the Dask workers: {said}", reason="slurm_refused")
        try:
            return parse.parse_sbatch_parsable(res.stdout)
        except ValueError as e:
            raise Unavailable(str(e), reason="slurm_unavailable") from None

    async def _squeue(self, names: Sequence[str], *, states: str | None = None) -> list[Row]:
        argv = [self.controller.commands["squeue"], "--noheader", "--array", f"--name={','.join(names)}"]
        argv += [f"--states={states}"] if states else []
        res = await self.controller.run([*argv, f"--format={FORMAT}"], check=False)
        if res.returncode != 0:
            raise Unavailable(f"squeue failed: {res.output or res.returncode}", reason="slurm_unavailable")
        return parse_rows(res.stdout)

    async def observe(self, clusters: Sequence[ClusterRef]) -> dict[str, SchedulerSeen]:
        """One squeue for every cluster's jobs (ended ones too, until SLURM forgets them); where some
        wait, one more for their places among every user's pending jobs of their partitions."""
        if not clusters:
            return {}
        names = [
            n for c in clusters for n in (script.scheduler_job_name(c.id), script.workers_job_name(c.id))
        ]
        rows = await self._squeue(names, states="all")
        waiting = [r for r in rows if r.state in QUEUED_STATES]
        places = {}
        if waiting:
            partitions = {r.partition for r in waiting if r.partition is not None}
            places = await self.controller.standings({r.job_id for r in waiting}, partitions)
        return seen_from(rows, clusters, places)

    async def stop(self, cluster: ClusterRef) -> None:
        """``stop`` for the keeper (it retires the workers and closes the scheduler), then scancel of
        whatever is left by the cluster's names; returns once squeue lists none of its jobs."""
        names = [script.scheduler_job_name(cluster.id), script.workers_job_name(cluster.id)]
        await asyncio.to_thread(cluster_folder.request_stop, cluster.folder)
        deadline = time.monotonic() + STOP_GRACE
        while time.monotonic() < deadline:  # SLURM's jobs ending: no event to wait on
            rows = await self._squeue(names)
            if not any(r.job_id == cluster.handle for r in rows):
                break
            await asyncio.sleep(1.0)
        deadline = time.monotonic() + GONE_WITHIN
        while rows := await self._squeue(names):
            if time.monotonic() >= deadline:
                raise Unavailable(
                    f"SLURM still lists {len(rows)} jobs of Dask cluster {cluster.id} "
                    f"({', '.join(r.job_id for r in rows[:5])}) {GONE_WITHIN:.0f} s after scancel.",
                    reason="slurm_unavailable",
                )
            if any(r.state != "COMPLETING" for r in rows):
                await self._scancel_named(names)
            await asyncio.sleep(1.0)

    async def _scancel_named(self, names: Sequence[str]) -> None:
        """``scancel --name`` of each name, this user's jobs only."""
        for name in names:
            argv = [self.controller.commands["scancel"], f"--user={getpass.getuser()}", f"--name={name}"]
            res = await self.controller.run(argv, check=False)
            if res.returncode != 0:
                log.info("scancel of Dask cluster jobs said: %s", res.output.strip()[-300:])
