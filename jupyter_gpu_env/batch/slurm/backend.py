"""The SLURM backend: ``sbatch`` of the runner, one ``squeue`` per poll for all active jobs, ``scancel``.

A job's folder is on a filesystem the nodes share. The backend writes ``job.sbatch`` there (built by
script.py) and submits it; the runner on the node writes progress, heartbeat, log and, last,
``status.json``. observe.py reads those files together with squeue's (or scontrol's) word on the job;
parse.py reads SLURM's output; options.py declares ``c.SlurmBackend.*``.

Every command goes through the subprocess seam (proc.run) with a timeout, so nothing blocks the event
loop; file reads run in a worker thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from traitlets import TraitError

from ... import proc
from ...errors import CommandTimeout, Conflict, GpuEnvError, InvalidRequest, NotFound, Unavailable
from ...models.backends import BackendInfo, ResourceLimits
from ...models.cluster import CapacityRow, ClusterCapacity
from ...models.jobs import Job, JobRequest
from ...models.resources import MIG_PROFILE_RE
from ...tasks import cancel_and_wait
from .. import jobfiles
from ..backend import GroupSubmission, Observation
from . import parse, script
from .observe import JOB_ID_FILE, observe, read_folders, read_id
from .options import SlurmOptions

log = logging.getLogger(__name__)

# Variables of the server's environment that must not reach sbatch (and, through --export=ALL, the job):
# a server running inside a SLURM allocation would pass its own job's settings on as the new job's.
_DROP_PREFIXES = ("SLURM_", "SBATCH_", "SALLOC_", "SRUN_", "SQUEUE_", "SINFO_", "SCONTROL_", "SCANCEL_")
_DROP_VARS = frozenset({"CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "ROCR_VISIBLE_DEVICES"})
_SCONTROL_AT_ONCE = 4  # scontrol calls in flight for jobs squeue no longer lists (rare: after a long outage)


@dataclass(frozen=True)
class _Cluster:
    partitions: list[parse.Partition]
    at: float


class SlurmBackend(SlurmOptions):
    """Runs jobs on a SLURM cluster with sbatch; job folders must be on a filesystem the nodes share."""

    def __init__(self, name: str | None = None, **kwargs: Any) -> None:
        super().__init__(name, **kwargs)
        if self.image_runtime == "apptainer" and not self.image_container:
            raise TraitError("image_runtime 'apptainer' needs image_container (the .sif the runner runs in)")
        self._cluster: _Cluster | None = None
        self._cluster_error: str | None = None
        self._info_task: asyncio.Task[None] | None = None
        self._info_lock = asyncio.Lock()
        self._info_tried = -float("inf")
        self._cancel_requested: set[str] = set()
        self._ended_at: dict[str, float] = {}  # job id -> when SLURM was first seen done without a status
        self._capacity: ClusterCapacity | None = None

    # ----- what it offers -----

    def info(self) -> BackendInfo:
        """From the last ``sinfo`` (refreshed in the background when older than ``info_ttl``) and the settings."""
        self._refresh_info_soon()
        return self._info()

    def _info(self) -> BackendInfo:
        known = self._cluster.partitions if self._cluster else []
        offered = [p for p in known if not self.partitions or p.name in self.partitions]
        queues = list(self.partitions) or [p.name for p in known]
        default = self.default_partition or next((p.name for p in offered if p.default), None)
        if default is None and queues:
            default = queues[0]
        limits = ResourceLimits()
        mig: list[str] = []
        supports_gpus = True  # until sinfo says otherwise
        if offered:
            times = [p.max_time_seconds for p in offered]
            limits = ResourceLimits(
                max_cpus=max(p.max_cpus for p in offered) or None,
                max_memory_bytes=(max(p.max_memory_mb for p in offered) << 20) or None,
                max_gpus=max(p.max_gpus for p in offered),
                max_time_limit_seconds=None if None in times else max(t or 0 for t in times),
            )
            supports_gpus = any(p.max_gpus for p in offered)
            types = set().union(*(p.gpu_types for p in offered))
            mig = sorted(t for t in types if MIG_PROFILE_RE.fullmatch(t))
        notes = [
            "Runs the notebook with SLURM (sbatch); job folders must be on a filesystem the nodes share.",
            "SLURM checks each request when it is submitted; what it refuses is shown with its own message.",
        ]
        if not supports_gpus:
            notes.append("No partition offered here has GPUs (gres gpu).")
        elif self.gpu_type:
            notes.append(f"Whole GPUs are requested as gres gpu:{self.gpu_type}:N.")
        if self.image_runtime:
            notes.append(f"Packed images are opened on the node with {self.image_runtime}.")
        else:
            notes.append(
                "Packed images are off for this backend (set c.SlurmBackend.image_runtime once the nodes "
                "have apptainer or squashfuse)."
            )
        if self._cluster_error:
            notes.append(f"SLURM could not be asked for its partitions: {self._cluster_error}")
        return BackendInfo(
            name=self.name,
            kind=self.kind,
            queues=queues,
            default_queue=default,
            limits=limits,
            mig_profiles=mig,
            supports_images=bool(self.image_runtime),
            supports_gpus=supports_gpus,
            enforced=["cpus", "memory", "gpus", "time_limit"],
            notes=notes,
        )

    def _refresh_info_soon(self) -> None:
        # Once per info_ttl, answered or not: a controller that is down is not asked on every page load.
        if time.monotonic() - self._info_tried < self.info_ttl:
            return
        if self._info_task is not None and not self._info_task.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # a worker thread: the next call on the loop refreshes
        self._info_task = loop.create_task(self.refresh_info())

    async def refresh_info(self) -> None:
        """Ask ``sinfo`` for the partitions and their per-node limits; keep the last answer on failure."""
        async with self._info_lock:
            self._info_tried = time.monotonic()
            try:
                res = await self._run(
                    [self.commands["sinfo"], "--noheader", f"--format={parse.SINFO_FORMAT}"]
                )
            except GpuEnvError as e:
                self._cluster_error = str(e)
                log.warning("sinfo failed: %s", e)
                return
            self._cluster = _Cluster(parse.parse_sinfo(res.stdout), time.monotonic())
            self._cluster_error = None

    async def _ensure_info(self) -> None:
        if self._cluster is None or time.monotonic() - self._cluster.at >= self.info_ttl:
            await self.refresh_info()

    def validate(self, request: JobRequest) -> None:
        """What only we can check; SLURM itself judges the resources when the job is submitted."""
        if request.queue is not None:
            try:
                script.check_name(request.queue, "Queue")
            except ValueError as e:
                raise InvalidRequest(f"{e}.", reason="invalid_queue") from None
            if self.partitions and request.queue not in self.partitions:
                raise NotFound(
                    f"Partition '{request.queue}' is not offered by the '{self.name}' backend "
                    f"(partitions: {', '.join(self.partitions)}).",
                    reason="unknown_queue",
                )

    # ----- submitting -----

    async def _options(self, job: Job, folder: Path) -> script.SbatchOptions:
        await self._ensure_info()
        return script.SbatchOptions(
            python=self.python or sys.executable,
            partition=job.queue or self._info().default_queue,
            account=self.account or None,
            gpu_type=self.gpu_type or None,
            export=self.export,
            extra=self.extra_sbatch_options,
            environment=self.environment,
            prologue=self.prologue,
            image=await asyncio.to_thread(self._image_plan, folder) if job.image else None,
        )

    async def _sbatch(self, path: Path, what: str) -> str:
        """Submit the script at ``path``; SLURM's id for it."""
        res = await self._run(script.sbatch_argv(self.commands["sbatch"], path), check=False)
        if res.returncode != 0:
            said = parse.sbatch_error(res.stderr or res.stdout)
            if parse.is_transient(said):
                raise Unavailable(
                    f"SLURM could not be reached to submit the {what}: {said}", reason="slurm_unavailable"
                )
            raise Conflict(f"SLURM refused the {what}: {said}", reason="slurm_refused")
        try:
            return parse.parse_sbatch_parsable(res.stdout)
        except ValueError as e:
            raise Unavailable(str(e), reason="slurm_unavailable") from None

    async def submit(self, job: Job) -> Observation:
        folder = self.job_folder(job)
        options = await self._options(job, folder)
        try:
            text = script.sbatch_script(job, folder, options)
        except ValueError as e:
            raise InvalidRequest(f"{e}.", reason="invalid_request") from None
        path = folder / script.SCRIPT
        await asyncio.to_thread(path.write_text, text)
        slurm_id = await self._sbatch(path, "job")
        with contextlib.suppress(OSError):
            await asyncio.to_thread((folder / JOB_ID_FILE).write_text, slurm_id + "\n")
        if job.id in self._cancel_requested:  # cancelled while sbatch ran
            await self._scancel(slurm_id)
        return Observation(
            state="queued",
            backend_job_id=slurm_id,
            pending_reason=f"Submitted to SLURM as job {slurm_id}; waiting for the scheduler.",
        )

    async def submit_group(self, jobs: Sequence[Job], max_concurrent: int) -> GroupSubmission:
        """One ``sbatch --array`` for all the runs: SLURM holds them as one job array (one submission
        for the controller, and one squeue line per task)."""
        first = jobs[0]
        folders = [self.job_folder(j) for j in jobs]
        sweep = folders[0].parent
        options = await self._options(first, folders[0])
        token = first.id  # a retry submits its runs as a new array: files of their own
        runs = sweep / f"runs-{token}.txt"
        path = sweep / f"sweep-{token}.sbatch"
        indexes = [j.group_index or 0 for j in jobs]
        try:
            table = script.runs_file(list(zip(indexes, (j.id for j in jobs), folders, strict=True)))
            text = script.sbatch_array_script(first, sweep, runs, indexes, max_concurrent, options)
        except ValueError as e:
            raise InvalidRequest(f"{e}.", reason="invalid_request") from None

        def write() -> None:
            runs.write_text(table)
            path.write_text(text)

        await asyncio.to_thread(write)
        array_id = await self._sbatch(path, f"sweep of {len(jobs)} runs")

        def record() -> None:
            for job, folder in zip(jobs, folders, strict=True):
                with contextlib.suppress(OSError):
                    (folder / JOB_ID_FILE).write_text(f"{array_id}_{job.group_index or 0}\n")

        await asyncio.to_thread(record)
        return GroupSubmission(array_id, {
            job.id: Observation(
                state="queued",
                backend_job_id=f"{array_id}_{job.group_index or 0}",
                pending_reason=f"Submitted to SLURM as task {job.group_index or 0} of job array {array_id}; "
                "waiting for the scheduler.",
            )
            for job in jobs
        })  # fmt: skip

    async def cancel_group(self, jobs: Sequence[Job]) -> None:
        """One ``scancel`` for every task asked for."""
        self._cancel_requested.update(j.id for j in jobs)
        ids = [j.backend_job_id or (await asyncio.to_thread(read_id, self.job_folder(j))) for j in jobs]
        if wanted := [i for i in ids if i]:
            await self._scancel(*wanted)

    def _image_plan(self, folder: Path) -> script.ImagePlan:
        spec = jobfiles.read_json(folder / jobfiles.JOB_JSON) or {}
        image = (spec.get("image") or {}).get("path")
        if not image:
            raise InvalidRequest("The job asks for an image, but its job.json names no image file.")
        if not self.image_runtime:
            raise Conflict(
                f"The '{self.name}' backend does not run packed images (c.SlurmBackend.image_runtime is "
                "not set). Choose the image's environment instead.",
                reason="images_unsupported",
            )
        if self.image_runtime == "squashfuse":
            return script.ImagePlan(tool="squashfuse", image=image)
        # apptainer binds the image where it was packed to live: its record (ID.json beside ID.sqfs) says where.
        record = jobfiles.read_json(Path(image).with_suffix(".json")) or {}
        mount = (record.get("usage") or {}).get("mount_path")
        if not mount:
            raise Conflict(
                f"The image {image} has no record of its mount path; repack it.", reason="image_unknown"
            )
        return script.ImagePlan(tool="apptainer", image=image, mount=mount, container=self.image_container)

    # ----- observing -----

    async def poll(self, jobs: Sequence[Job]) -> dict[str, Observation]:
        folders = {j.id: self.job_folder(j) for j in jobs}
        local = await asyncio.to_thread(read_folders, folders)
        ids: dict[str, Job] = {}
        for job in jobs:
            slurm_id = job.backend_job_id or local[job.id].slurm_id
            if slurm_id:
                ids[slurm_id] = job
        rows = await self.squeue(list(ids)) if ids else {}
        # Jobs squeue no longer lists (the controller forgot them, or a race): ask scontrol, but only
        # where the runner's status does not already settle the matter.
        missing = [sid for sid, job in ids.items() if sid not in rows and local[job.id].status is None]
        limit = asyncio.Semaphore(_SCONTROL_AT_ONCE)

        async def ask(sid: str) -> parse.SlurmJob | None:
            async with limit:
                return await self.scontrol(sid)

        for sid, row in zip(missing, await asyncio.gather(*(ask(s) for s in missing)), strict=True):
            if row is not None:
                rows[sid] = row
        now = time.time()
        seen: dict[str, Observation] = {}
        for job in jobs:
            slurm_id = job.backend_job_id or local[job.id].slurm_id
            obs = observe(
                job,
                slurm_id,
                rows.get(slurm_id or ""),
                local[job.id],
                now,
                cancel_requested=job.id in self._cancel_requested,
                grace_over=functools.partial(self._grace_over, job.id, now),
            )
            if obs is not None:
                seen[job.id] = obs
        pending = {
            o.backend_job_id: jid for jid, o in seen.items() if o.state == "queued" and o.backend_job_id
        }
        if pending:
            partitions = {r.partition for sid in pending if (r := rows.get(sid)) and r.partition}
            for sid, standing in (await self.standings(set(pending), partitions)).items():
                seen[pending[sid]] = replace(
                    seen[pending[sid]],
                    queue_position=standing.position,
                    queue_name=standing.partition,
                    estimated_start=standing.estimated_start,
                )
        active = {j.id for j in jobs}
        self._ended_at = {k: v for k, v in self._ended_at.items() if k in active}
        self._cancel_requested &= active
        return seen

    async def capacity(self) -> ClusterCapacity:
        """GPUs and MIG slices per gres type from ``scontrol -d -o show node`` (one call, 30 s cache)."""
        if self._capacity is not None and time.time() - (self._capacity.read_at or 0) < 30:
            return self._capacity
        res = await self._run([self.commands["scontrol"], "-d", "-o", "show", "node"], check=False)
        if res.returncode != 0:
            return ClusterCapacity(
                available=False, message=f"scontrol could not list the nodes: {res.output.strip()[-300:]}"
            )
        rows = []
        for kind, total, used, nodes in parse.node_gpus(res.stdout):
            profile = kind if MIG_PROFILE_RE.fullmatch(kind) else None
            rows.append(
                CapacityRow(
                    resource=f"gres/gpu:{kind}" if kind else "gres/gpu",
                    profile=profile,
                    gpu_model="" if profile else kind,
                    total=total,
                    used=used,
                    free=max(0, total - used),
                    nodes=nodes,
                )
            )
        self._capacity = ClusterCapacity(
            available=True,
            message="" if rows else "No node of this cluster offers GPUs (gres).",
            rows=rows,
            read_at=time.time(),
        )
        return self._capacity

    async def standings(self, slurm_ids: set[str], partitions: set[str]) -> dict[str, parse.Standing]:
        """Where these pending jobs stand among every user's, with one ``squeue`` for all of them; an
        answer that fails leaves the positions unknown (the state is already known)."""
        argv = [self.commands["squeue"], "--noheader", "--states=PENDING", "--array", "--sort=-p,i"]
        argv += [f"--partition={','.join(sorted(partitions))}"] if partitions else []
        res = await self._run([*argv, f"--format={parse.QUEUE_FORMAT}"], check=False)
        if res.returncode != 0:
            log.info("squeue for queue positions failed: %s", res.output.strip()[-300:])
            return {}
        return parse.queue_standings(res.stdout, slurm_ids)

    async def squeue(self, slurm_ids: Sequence[str]) -> dict[str, parse.SlurmJob]:
        """One ``squeue`` for the given jobs, in every state (finished ones until MinJobAge)."""
        argv = [
            self.commands["squeue"],
            "--noheader",
            "--states=all",
            "--array",  # a job array's pending tasks one per line, as `ID_TASK`, not `ID_[1-9]`
            f"--jobs={','.join(slurm_ids)}",
            f"--format={parse.SQUEUE_FORMAT}",
        ]
        res = await self._run(argv, check=False)
        if res.returncode != 0:
            if parse.is_unknown_job(res.stderr):
                return {}  # 22.05 says so when every id asked for is unknown
            raise Unavailable(f"squeue failed: {res.output or res.returncode}", reason="slurm_unavailable")
        return parse.parse_squeue(res.stdout)

    async def scontrol(self, slurm_id: str) -> parse.SlurmJob | None:
        """``scontrol -o show job ID``; None when the controller does not know the job."""
        res = await self._run([self.commands["scontrol"], "-o", "show", "job", slurm_id], check=False)
        if res.returncode != 0:
            if parse.is_unknown_job(res.stderr):
                return None
            raise Unavailable(f"scontrol failed: {res.output or res.returncode}", reason="slurm_unavailable")
        return parse.parse_scontrol_job(res.stdout)

    def _grace_over(self, job_id: str, now: float) -> bool:
        first = self._ended_at.setdefault(job_id, now)
        return now - first >= self.status_grace

    # ----- cancelling -----

    async def cancel(self, job: Job) -> None:
        self._cancel_requested.add(job.id)
        slurm_id = job.backend_job_id or (await asyncio.to_thread(read_id, self.job_folder(job)))
        if slurm_id:
            await self._scancel(slurm_id)

    async def _scancel(self, *slurm_ids: str) -> None:
        slurm_id = " ".join(slurm_ids)
        res = await self._run([self.commands["scancel"], *slurm_ids], check=False)
        said = (res.stderr or res.stdout).strip()
        if res.returncode != 0 or "error" in said.lower():
            low = said.lower()
            if "already completing or completed" in low or "invalid job id" in low:
                return  # it ended on its own first
            if parse.is_transient(said):
                raise Unavailable(f"SLURM could not be reached to cancel job {slurm_id}: {said}")
            raise Conflict(
                f"scancel {slurm_id} failed: {said or res.returncode}", reason="slurm_cancel_failed"
            )

    async def close(self) -> None:
        await cancel_and_wait(self._info_task)

    # ----- running SLURM's commands -----

    def command_env(self) -> dict[str, str]:
        """The server's environment without SLURM's own job and input variables, plus SLURM_CONF."""
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in _DROP_VARS and (k == "SLURM_CONF" or not k.startswith(_DROP_PREFIXES))
        }
        env["SLURM_TIME_FORMAT"] = "standard"  # the timestamps parse_timestamp reads
        if self.slurm_conf:
            env["SLURM_CONF"] = self.slurm_conf
        return env

    async def _run(self, argv: list[str], *, check: bool = True) -> proc.Result:
        which = next((k for k, v in self.commands.items() if v == argv[0]), Path(argv[0]).name)
        try:
            return await proc.run(argv, timeout=self.command_timeout, env=self.command_env(), check=check)
        except CommandTimeout as e:
            raise Unavailable(
                f"{which} did not answer within {self.command_timeout:g} s: is slurmctld up?",
                reason="slurm_unavailable",
            ) from e
        except Conflict as e:  # the command is not installed
            raise Unavailable(
                f"{e} (set c.SlurmBackend.{which}_command to its path)",
                reason="slurm_unavailable",
            ) from e
