"""The SLURM backend: ``sbatch`` of the runner, one ``squeue`` per poll for all active jobs, ``scancel``.

A job's folder is on a filesystem the nodes share. The backend writes ``job.sbatch`` there (built by
script.py) and submits it; the runner on the node writes progress, heartbeat, log and, last,
``status.json``. The backend is its options (options.py declares ``c.SlurmBackend.*``) and holds the
two parts it works through: a :class:`.controller.SlurmController` that runs SLURM's commands and reads
their answers (parse.py), and a :class:`.observe.SlurmObserver` that reads the job folders together
with squeue's (or scontrol's) word on each job; words.py says what SLURM's states mean.

Every command goes through the subprocess seam (proc.run) with a timeout, so nothing blocks the event
loop; file reads run in a worker thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from traitlets import TraitError

from ...contracts import jobfiles
from ...contracts.schedules import folder as schedule_files
from ...contracts.schedules.plan import Armed, SchedulePlan
from ...errors import Conflict, GpuEnvError, InvalidRequest, NotFound
from ...loops import Refresher
from ...models.backends import BackendInfo
from ...models.cluster import ClusterCapacity
from ...models.jobs import Job, JobRequest
from ..base import Dependency, Observation, SweepSubmission, check_against_info
from ..dask import DaskLauncher, DaskSettings
from . import chain, parse, script
from .chain import SlurmChain
from .controller import SlurmController
from .dask.launcher import SlurmLauncher
from .observe import JOB_ID_FILE, SlurmObserver, read_id
from .offer import offered, priority_partition
from .options import SlurmOptions

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Cluster:
    partitions: list[parse.Partition]
    at: float


class SlurmBackend(SlurmOptions):
    """Runs jobs on a SLURM cluster with sbatch; job folders must be on a filesystem the nodes share."""

    keeps_schedules = True
    # A pipeline is submitted whole: each node with --dependency on its parents' SLURM ids.
    holds_dependencies = True

    def __init__(self, name: str | None = None, **kwargs: Any) -> None:
        super().__init__(name, **kwargs)
        if self.image_runtime == "apptainer" and not self.image_container:
            raise TraitError("image_runtime 'apptainer' needs image_container (the .sif the runner runs in)")
        self.controller = SlurmController(self.commands, self.command_timeout, self.slurm_conf)
        self.observer = SlurmObserver(self.controller, self.status_grace)
        self.chain = SlurmChain(self.controller)
        self._cluster: _Cluster | None = None
        self._cluster_error: str | None = None
        self._info_lock = asyncio.Lock()
        self._info_tried = -float("inf")
        # Once per info_ttl, answered or not: a controller that is down is not asked on every page load.
        self._info_refresher = Refresher(
            self.refresh_info, lambda: time.monotonic() - self._info_tried >= self.info_ttl
        )

    # ----- what it offers -----

    def info(self) -> BackendInfo:
        """From the last ``sinfo`` (refreshed in the background when older than ``info_ttl``) and the settings."""
        self._info_refresher.ask()
        return self._info()

    def _info(self) -> BackendInfo:
        return offered(self, self._cluster.partitions if self._cluster else [], self._cluster_error)

    def _priority_partition(self) -> str | None:
        return priority_partition(self)

    async def refresh_info(self) -> None:
        """Ask ``sinfo`` for the partitions and their per-node limits; keep the last answer on failure."""
        async with self._info_lock:
            self._info_tried = time.monotonic()
            try:
                partitions = await self.controller.sinfo()
            except GpuEnvError as e:
                self._cluster_error = str(e)
                log.warning("sinfo failed: %s", e)
                return
            self._cluster = _Cluster(partitions, time.monotonic())
            self._cluster_error = None

    async def _ensure_info(self) -> None:
        if self._cluster is None or time.monotonic() - self._cluster.at >= self.info_ttl:
            await self.refresh_info()

    def validate(self, request: JobRequest) -> None:
        """What only we can check; SLURM itself judges the resources when the job is submitted. An
        opportunistic job runs in its priority's partition, whatever queue it names."""
        if request.priority != "normal" and request.priority not in self.priorities:
            check_against_info(self._info(), request)  # its 409 priority_unavailable, in its words
        moved = request.priority == "opportunistic" and self._priority_partition() is not None
        if request.queue is not None:
            try:
                script.check_name(request.queue, "Queue")
            except ValueError as e:
                raise InvalidRequest(f"{e}.", reason="invalid_queue") from None
            if self.partitions and request.queue not in self.partitions and not moved:
                raise NotFound(
                    f"Partition '{request.queue}' is not offered by the '{self.name}' backend "
                    f"(partitions: {', '.join(self.partitions)}).",
                    reason="unknown_queue",
                )

    # ----- submitting -----

    async def _options(self, job: Job, folder: Path) -> script.SbatchOptions:
        image = await asyncio.to_thread(self._image_plan, folder) if job.image else None
        return await self._sbatch_options(job, image)

    async def _sbatch_options(self, job: Job, image: script.ImagePlan | None) -> script.SbatchOptions:
        """The options of ``job``'s script: the site's settings, its queue (or the default), its image."""
        await self._ensure_info()
        opportunistic = self.priorities.get("opportunistic") if job.priority == "opportunistic" else None
        partition = (opportunistic or {}).get("partition")
        site = self.site_options(self.python or sys.executable, partition or job.queue)
        return dataclasses.replace(site, qos=(opportunistic or {}).get("qos"), image=image)

    def site_options(self, python: str, partition: str | None) -> script.SbatchOptions:
        """The site's sbatch settings (``c.SlurmBackend.*``) for a script that runs ``python`` in
        ``partition`` (None: the default one): what a job's script and a Dask cluster's share."""
        return script.SbatchOptions(
            python=python,
            partition=partition or self._info().default_queue,
            account=self.account or None,
            gpu_type=self.gpu_type or None,
            export=self.export,
            extra=self.extra_sbatch_options,
            environment=self.environment,
            prologue=self.prologue,
        )

    async def submit(self, job: Job) -> Observation:
        return await self._submit(job, None)

    async def submit_after(self, job: Job, after: Dependency) -> Observation:
        """:meth:`submit` with ``--dependency`` on the SLURM jobs ``after`` names (a job, a whole job
        array, one task) and ``--kill-on-invalid-dep=yes``: SLURM starts it once they ended as
        ``after.when`` asks, with no Jupyter server, and cancels it (reason DependencyNeverSatisfied)
        once they cannot. An id SLURM no longer knows counts as satisfied there: name only parents that
        have not ended (the pipeline service decides about those itself)."""
        return await self._submit(job, after)

    async def _submit(self, job: Job, after: Dependency | None) -> Observation:
        folder = self.job_folder(job)
        try:
            dependency = _dependency(after)
            options = replace(await self._options(job, folder), dependency=dependency)
            text = script.sbatch_script(job, folder, options)
        except ValueError as e:
            raise InvalidRequest(f"{e}.", reason="invalid_request") from None
        path = folder / script.SCRIPT
        await asyncio.to_thread(path.write_text, text)
        slurm_id = await self.controller.sbatch(path, "job")
        with contextlib.suppress(OSError):
            await asyncio.to_thread((folder / JOB_ID_FILE).write_text, slurm_id + "\n")
        if job.id in self.observer.cancel_requested:  # cancelled while sbatch ran
            await self.controller.scancel(slurm_id)
        where = ""
        if job.priority == "opportunistic":  # the partition it went to may not be the queue it named
            where = f" in partition {options.partition}" if options.partition else ""
            where += ", opportunistic (SLURM may preempt and requeue it; it then resumes)"
        return Observation(
            state="queued",
            backend_job_id=slurm_id,
            pending_reason=f"Submitted to SLURM as job {slurm_id}{where}; {_waiting(after, dependency)}.",
        )

    async def submit_sweep(self, jobs: Sequence[Job], max_concurrent: int) -> SweepSubmission:
        """One ``sbatch --array`` for all the runs: SLURM holds them as one job array (one submission
        for the controller, and one squeue line per task)."""
        return await self._submit_sweep(jobs, max_concurrent, None)

    async def submit_sweep_after(
        self, jobs: Sequence[Job], max_concurrent: int, after: Dependency
    ) -> SweepSubmission:
        """:meth:`submit_sweep`, the whole array held as :meth:`submit_after` holds one job."""
        return await self._submit_sweep(jobs, max_concurrent, after)

    async def _submit_sweep(
        self, jobs: Sequence[Job], max_concurrent: int, after: Dependency | None
    ) -> SweepSubmission:
        first = jobs[0]
        folders = [self.job_folder(j) for j in jobs]
        sweep = folders[0].parent
        token = first.id  # a retry submits its runs as a new array: files of their own
        runs = sweep / f"runs-{token}.txt"
        path = sweep / f"sweep-{token}.sbatch"
        indexes = [j.group_index or 0 for j in jobs]
        try:
            dependency = _dependency(after)
            options = replace(await self._options(first, folders[0]), dependency=dependency)
            table = script.runs_file(list(zip(indexes, (j.id for j in jobs), folders, strict=True)))
            text = script.sbatch_array_script(first, sweep, runs, indexes, max_concurrent, options)
        except ValueError as e:
            raise InvalidRequest(f"{e}.", reason="invalid_request") from None

        def write() -> None:
            runs.write_text(table)
            path.write_text(text)

        await asyncio.to_thread(write)
        array_id = await self.controller.sbatch(path, f"sweep of {len(jobs)} runs")

        def record() -> None:
            for job, folder in zip(jobs, folders, strict=True):
                with contextlib.suppress(OSError):
                    (folder / JOB_ID_FILE).write_text(f"{array_id}_{job.group_index or 0}\n")

        await asyncio.to_thread(record)
        return SweepSubmission(
            array_id,
            {
                job.id: Observation(
                    state="queued",
                    backend_job_id=f"{array_id}_{job.group_index or 0}",
                    pending_reason=f"Submitted to SLURM as task {job.group_index or 0} of job array {array_id}; "
                    f"{_waiting(after, dependency)}.",
                )
                for job in jobs
            },
        )

    async def cancel_sweep(self, jobs: Sequence[Job]) -> None:
        """One ``scancel`` for every task asked for."""
        self.observer.cancel_requested.update(j.id for j in jobs)
        ids = [j.backend_job_id or (await asyncio.to_thread(read_id, self.job_folder(j))) for j in jobs]
        if wanted := [i for i in ids if i]:
            await self.controller.scancel(*wanted)

    # ----- schedules: a chain of waiting jobs (chain.py) -----

    async def arm_schedule(self, plan: SchedulePlan) -> Armed:
        """The schedule's one waiting job, for its next due time; what the tick needs to submit runs
        and its successor with no server is written into its schedule.json first."""
        if not plan.active or plan.next_due is None:
            await self.disarm_schedule(plan)
            return Armed(None, True, "Paused: nothing waits in SLURM.")
        doc = await asyncio.to_thread(schedule_files.read_doc, plan.folder)
        if doc is None:
            raise Conflict(f"Schedule '{plan.name}' has lost its folder.", reason="snapshot_missing")
        image = self._image_plan_of(doc.spec) if plan.template.image else None
        options = await self._sbatch_options(plan.template, image)
        settings = {
            "commands": dict(self.commands),
            "command_timeout": self.command_timeout,
            "slurm_conf": self.slurm_conf,
            "options": chain.options_to_json(options),
        }
        doc = doc.model_copy(update={"backend_settings": settings})
        await asyncio.to_thread(schedule_files.write_doc, plan.folder, doc)
        try:
            return await self.chain.arm(plan.folder, plan.id, plan.generation, plan.next_due, options)
        except ValueError as e:
            raise InvalidRequest(f"{e}.", reason="invalid_request") from None

    async def disarm_schedule(self, plan: SchedulePlan) -> None:
        await self.chain.clear(plan.id)

    async def schedules_armed(self, plans: Sequence[SchedulePlan]) -> dict[str, Armed]:
        return await self.chain.armed([p.id for p in plans if p.active])

    def _image_plan(self, folder: Path) -> script.ImagePlan:
        return self._image_plan_of(jobfiles.read_json(folder / jobfiles.JOB_JSON) or {})

    def _image_plan_of(self, spec: dict[str, Any]) -> script.ImagePlan:
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
        return await self.observer.poll(jobs, {j.id: self.job_folder(j) for j in jobs})

    # ----- cancelling -----

    async def cancel(self, job: Job) -> None:
        self.observer.cancel_requested.add(job.id)
        slurm_id = job.backend_job_id or (await asyncio.to_thread(read_id, self.job_folder(job)))
        if slurm_id:
            await self.controller.scancel(slurm_id)

    async def capacity(self) -> ClusterCapacity:
        return await self.controller.capacity()

    def dask_launcher(self, settings: DaskSettings) -> DaskLauncher:
        return SlurmLauncher(self, settings)

    async def close(self) -> None:
        await self._info_refresher.close()


def _dependency(after: Dependency | None) -> str | None:
    """``--dependency``'s value for ``after`` (script.dependency_option checks every id)."""
    return None if after is None else script.dependency_option(after.backend_job_ids, after.when)


def _waiting(after: Dependency | None, dependency: str | None) -> str:
    """What a job just submitted waits for, in words."""
    if after is None or dependency is None:
        return "waiting for the scheduler"
    ids = list(dict.fromkeys(after.backend_job_ids))
    named = f"SLURM job {ids[0]}" if len(ids) == 1 else f"SLURM jobs {', '.join(ids)}"
    if after.when == "failed":
        which = "it fails" if len(ids) == 1 else "one of them fails"
        return f"waits for {named}: it starts if {which} (SLURM dependency {dependency})"
    how = "succeeded" if after.when == "succeeded" else "ended"
    verb = "has" if len(ids) == 1 else "have"
    return (
        f"waits for {named}: it starts once {'it' if len(ids) == 1 else 'they'} {verb} {how} "
        f"(SLURM dependency {dependency})"
    )
