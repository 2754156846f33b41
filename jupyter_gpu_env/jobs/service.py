"""JobService: submit, follow, cancel and delete batch jobs; keep the records in step with the backends.

A submission is checked in full before anything is written; then its folder is built in a temporary
sibling and renamed into place, the record is inserted, and the backend is handed the job. If the
backend refuses, the record and the folder go again: a rejected submission leaves nothing behind.

It holds its parts, each given only what it needs: an :class:`.intake.Intake` (requests checked, records
and job.json made), a :class:`.tracking.JobTracker` (records kept in step with the backends),
:class:`.sweeps.service.Sweeps` and a :class:`..loops.Loops` (the job poller).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from ..backends.base import Backend, IllegalTransition
from ..contracts import jobfiles
from ..errors import Conflict, InvalidRequest, NotFound, TooLarge
from ..gpu import jobuse
from ..gpu.energy import NO_PRICES, SitePrices
from ..images import runtime
from ..loops import Loops
from ..models.backends import BackendList, IdleRule, UsageReport, UsageWeeks
from ..models.cluster import ClusterCapacity
from ..models.jobs import TERMINAL_STATES, Job, JobGpuSeries, JobList, JobRequest, LogChunk
from ..models.notebooks import NotebookParameters
from ..models.sweeps import JobGroup
from ..system.offloop import python_work
from . import folders, submission, usage
from .intake import Intake, Runtimes
from .parameters import inspect_notebook
from .store import JobStore
from .sweeps import plan, results
from .sweeps.service import Sweeps
from .tracking import JobTracker

log = logging.getLogger(__name__)

DEFAULT_LOG_CHUNK = 256 << 10
MAX_LOG_CHUNK = 4 << 20


class JobService:
    """Batch jobs over a store and named backends. Construct, ``await start()``, and ``await stop()``.

    ``kernel_names`` lists the kernels a job may name; ``environments`` maps an environment name to
    its prefix (None: unknown); ``images`` maps an image name to its file (None: unknown). They are
    called in a worker thread, so they may read the disk.
    """

    def __init__(
        self,
        store: JobStore,
        backends: Mapping[str, Backend],
        root_dir: str | Path,
        job_dir: str | Path,
        *,
        kernel_names: Callable[[], Iterable[str]],
        environments: Callable[[str], str | None] = lambda name: None,
        images: Callable[[str], str | None] = lambda name: None,
        refresh_interval: float = 2.0,
        image_runtime: Callable[[], str | None] = runtime.for_jobs,
        max_parameters_bytes: int = 64 << 10,
        listed_parameters_bytes: int = 2048,
        max_sweep_runs: int = 1000,
        result_value_bytes: int = results.VALUE_BYTES,
        results_bytes: int = results.TOTAL_BYTES,
        gpu_sample_interval: float = 5.0,
        gpu_idle: IdleRule = (600.0, "warn", 300.0),
        prices: SitePrices = NO_PRICES,
    ) -> None:
        self.store = store
        self.backends = dict(backends)
        self.root = Path(root_dir).resolve()
        self.job_dir = (self.root / job_dir).resolve()
        self.refresh_interval = refresh_interval
        self.max_parameters_bytes = max_parameters_bytes
        self.listed_parameters_bytes = listed_parameters_bytes
        self.prices = prices  # carbon and cost of a job's GPU use, applied where it is answered
        self.gpu_idle_seconds, self.gpu_idle_action, self.gpu_idle_grace = gpu_idle
        for backend in self.backends.values():
            backend.job_folder = self.folder_of
        self.tracker = JobTracker(store, self.backends, self.folder_of)
        self.intake = Intake(
            self.backends,
            self.tracker,
            self.root,
            self.job_dir,
            Runtimes(kernel_names, environments, images, image_runtime),
            gpu_sample_interval,
        )
        self.sweeps = Sweeps(
            store,
            self.backends,
            self.intake,
            self.tracker,
            max_runs=max_sweep_runs,
            max_parameters_bytes=max_parameters_bytes,
            gpu_idle_seconds=self.gpu_idle_seconds,
            result_value_bytes=result_value_bytes,
            results_bytes=results_bytes,
            prices=prices,
        )
        # Background work between start() and stop(): the job poller (features' timers are their own).
        self.loops = Loops()
        self.loops.add("jobs", refresh_interval, self.tracker.refresh)

    # ----- lifetime -----

    async def start(self) -> None:
        """Reconcile the records with reality, then keep them in step in the background."""
        await self.reconcile()
        await python_work(submission.warm_up)
        self.loops.start()

    async def stop(self) -> None:
        """Stop following jobs (they keep running) and the other loops; release the backends and the store."""
        await self.loops.stop()
        await self.tracker.close()
        for backend in self.backends.values():
            await backend.close()
        await asyncio.to_thread(self.store.close)

    async def reconcile(self) -> None:
        """At start: drop half-built folders, then settle every active record against its backend (a
        runner gone without a status ends failed, saying so; a job ended meanwhile, as its status says)."""
        await asyncio.to_thread(folders.clean_temporaries, self.job_dir)
        await self.refresh()

    async def refresh(self) -> None:
        """Poll each backend once for all its active jobs; apply what they and the job folders say."""
        await self.tracker.refresh()

    # ----- submission -----

    async def submit(
        self, request: JobRequest | Mapping[str, Any], snapshot: bytes | None = None
    ) -> Job | JobGroup:
        """Check, snapshot, record and start a job (or, for a sweep, all its runs); return it.

        ``snapshot`` is the notebook's bytes as saved; by default the file at ``notebook_path`` is read.
        Nothing is recorded when it is refused: :class:`InvalidRequest` for a malformed request,
        :class:`NotFound` for what does not exist (the notebook, the backend, a kernel, environment,
        image or queue), :class:`TooLarge` for parameters beyond ``max_parameters_bytes``,
        :class:`Conflict` for what the notebook or the backend cannot take, and what the backend raises
        when it refuses the job.
        """
        request = submission.parse_request(request)
        if plan.is_sweep(request):
            return await self.sweeps.submit(request, snapshot)
        self.check_size(request.parameters)
        ready = await self.intake.prepare(request, snapshot)
        await python_work(submission.check_parameters, ready.nb, request.parameters)
        name = request.name or ready.nb_file.stem
        job, spec = self.intake.new_job(
            request, ready, name, request.parameters, self.job_dir / f"{jobfiles.slug(name)}"
        )
        folder = self.folder_of(job)
        await python_work(submission.build_folder, folder, ready.raw, spec)
        return await self.intake.start(job, folder, ready.backend)

    async def notebook_parameters(self, notebook_path: str) -> NotebookParameters:
        """What the notebook's `parameters` cell declares, as the submit dialog shows and submit checks it.

        Raises NotFound (no such notebook), Forbidden (outside the root), Conflict (not readable).
        """

        def read() -> NotebookParameters:
            nb_file = submission.resolve_notebook(self.root, notebook_path)
            return inspect_notebook(submission.read_notebook(nb_file, None)[1])

        return await python_work(read)

    # ----- reading -----

    async def get(self, job_id: str) -> Job:
        job = await self.store.get(job_id)
        # Someone is watching this job: settle it now rather than at the next periodic round, at most
        # a few times a second however many watchers ask (callers share the refresh lock).
        if job.state in ("queued", "running") and self.tracker.stale():
            await self.tracker.settle_watched()
            job = await self.store.get(job_id)
        return self.prices.on(job)

    async def list(
        self,
        state: str | Iterable[str] | None = None,
        *,
        limit: int = 50,
        offset: int = 0,
        sweep: str | None = None,
        schedule: str | None = None,
        pipeline: str | None = None,
    ) -> JobList:
        """A page of jobs, newest first; of one sweep in its order (or none's: "none"), of one schedule,
        or of one pipeline (or none's): the API's answer (:meth:`list_json`), read back."""
        return JobList.model_validate_json(
            await self.list_json(
                state, limit=limit, offset=offset, sweep=sweep, schedule=schedule, pipeline=pipeline
            )
        )

    async def list_json(
        self,
        state: str | Iterable[str] | None = None,
        *,
        limit: int = 50,
        offset: int = 0,
        sweep: str | None = None,
        schedule: str | None = None,
        pipeline: str | None = None,
    ) -> bytes:
        """:meth:`list` as JSON, read and made once per change of the records and shared by every poller."""
        if sweep not in (None, "none"):
            await self.store.sweeps.get(sweep)  # an unknown sweep is a 404, not an empty page
        states = [state] if isinstance(state, str) else state
        body, active = await self.store.list_json(
            self._listed,
            states,
            limit=limit,
            offset=offset,
            sweep=sweep,
            schedule=schedule,
            pipeline=pipeline,
        )
        if active:
            # Someone watches active jobs: settle them soon, so a row lags its job by a poll rather than
            # a round; never wait for it here (with a 1,000-run sweep a refresh polls 1,000 runs).
            self.tracker.settle_soon()
        return body

    def _listed(self, job: Job) -> Job:
        """A job as listings show it: parameters too large for a listing are left out, and it says so."""
        job = self.prices.on(job)
        if job.parameters and len(json.dumps(job.parameters)) > self.listed_parameters_bytes:
            return job.model_copy(update={"parameters": {}, "parameters_omitted": True})
        return job

    # ----- changing -----

    async def cancel(
        self, job_id: str, why: tuple[str, str] = ("cancelled", "Cancelled by the user.")
    ) -> Job:
        """Stop a queued or running job and record it cancelled, ``why`` as its reason and message.
        :class:`Conflict` if it has already ended."""
        job = await self.store.get(job_id)
        if job.state not in TERMINAL_STATES:
            (job,) = await self.tracker.settle_ended([job])  # it may have ended since the last round
        if job.state in TERMINAL_STATES:
            raise Conflict(f"Job '{job_id}' has already {job.state}.", reason="job_finished")
        backend = self.backends.get(job.backend)
        if backend is not None:
            await self.tracker.mark_cancelling([job])
            await backend.cancel(job)
        try:
            job = await self.store.update(
                job_id,
                state="cancelled",
                reason=why[0],
                message=why[1],
                pending_reason=None,
            )
        except IllegalTransition:
            job = await self.store.get(job_id)
            raise Conflict(f"Job '{job_id}' has already {job.state}.", reason="job_finished") from None
        self.tracker.ended(job)
        return job

    async def delete(self, job_id: str) -> None:
        """Remove the record, what the backend keeps of the job, and the job folder; a job still queued or
        running is cancelled first."""
        job = await self.store.get(job_id)
        if job.state not in TERMINAL_STATES:
            with contextlib.suppress(Conflict):
                job = await self.cancel(job_id)
        backend = self.backends.get(job.backend)
        if backend is not None:  # the record goes only once the cluster holds nothing of it
            await backend.forget(job)
        await self.store.delete(job_id)
        await asyncio.to_thread(folders.discard, self.folder_of(job), job, self.job_dir)

    async def rerun(
        self,
        job_id: str,
        parameters: Mapping[str, Any] | None = None,
        changes: Mapping[str, Any] | None = None,
    ) -> Job:
        """A new job from ``job_id``'s snapshot (never the file as it is now), its runtime, resources and
        queue as they were or as ``changes`` says (:func:`.submission.request_of`), ``parameters`` over its
        own; a sweep's run sent again on the sweep's backend is a new run of that sweep. Conflict when the
        job's folder no longer holds the snapshot."""
        old = await self.store.get(job_id)
        snapshot = await self.intake.snapshot_of(old)
        sweep = None
        if old.group_id:
            with contextlib.suppress(NotFound):  # the sweep's record gone: the run's own name stands
                sweep = await self.store.sweeps.get(old.group_id)
        request = submission.request_of(old, parameters, sweep, changes)
        if sweep is not None and request.backend == sweep.backend:
            self.check_size(request.parameters)
            return await self.sweeps.add_run(sweep, old, request, snapshot)
        new = await self.submit(request, snapshot)
        assert isinstance(new, Job)  # a request made from one job holds no sweep
        return new

    async def snapshot_parameters(self, job_id: str) -> NotebookParameters:
        """What the `parameters` cell of ``job_id``'s snapshot declares (what "run again" edits); Conflict
        when its folder no longer holds the snapshot."""
        job = await self.store.get(job_id)
        raw = await self.intake.snapshot_of(job)
        return await python_work(
            lambda: inspect_notebook(submission.read_notebook(Path(job.notebook_path), raw)[1])
        )

    def check_size(self, parameters: Mapping[str, Any]) -> None:
        size = len(json.dumps(parameters))
        if size > self.max_parameters_bytes:
            raise TooLarge(
                f"The parameters take {size} bytes as JSON; at most {self.max_parameters_bytes} are accepted "
                "(c.GpuEnvApp.max_parameters_bytes). Pass large inputs as a file path instead.",
                reason="parameters_too_large",
            )

    # ----- reports: logs, GPU series, usage, what backends can start -----

    async def log(self, job_id: str, offset: int = 0, limit: int = DEFAULT_LOG_CHUNK) -> LogChunk:
        """The log from byte ``offset``, at most ``limit`` bytes (capped at 4 MiB); follow with ``next_offset``."""
        if offset < 0:
            raise InvalidRequest("offset must not be negative.")
        limit = max(1, min(int(limit), MAX_LOG_CHUNK))
        job = await self.store.get(job_id)
        backend = self.backends.get(job.backend)
        if backend is not None:
            chunk = await backend.logs(job, offset, limit)
            if chunk is not None:
                return chunk
        try:
            text, nxt, size = await asyncio.to_thread(
                jobfiles.read_log, self.folder_of(job) / jobfiles.LOG, offset, limit
            )
        except jobfiles.Damaged as e:
            raise Conflict(f"Job '{job_id}' has no log to show: {e}.", reason="files_damaged") from None
        if offset > size:
            raise Conflict(
                f"offset {offset} is past the end of the log, which has {size} bytes so far.",
                reason="offset_past_end",
            )
        return LogChunk(
            offset=offset, next_offset=nxt, text=text, eof=job.state in TERMINAL_STATES and nxt >= size
        )

    async def gpu_series(self, job_id: str) -> JobGpuSeries:
        """The job's GPU samples (at most 600 points, evenly thinned) and its summary."""
        job = await self.get(job_id)
        devices, points = await asyncio.to_thread(jobuse.read_series, self.folder_of(job))
        return JobGpuSeries.model_validate(
            {"job_id": job.id, "summary": job.gpu, "devices": devices, "points": points}
        )

    async def capacity(self, backend: str) -> ClusterCapacity:
        """What the backend can start now: free and total GPUs and MIG slices by profile and model."""
        return await self.intake.backend(backend).capacity()

    def backend_list(self) -> BackendList:
        """What each backend offers, and when a job's GPU counts as idle (and what then happens)."""
        return BackendList(
            backends=[b.info() for b in self.backends.values()],
            gpu_idle_seconds=self.gpu_idle_seconds,
            gpu_idle_action=self.gpu_idle_action,
            gpu_idle_grace_seconds=self.gpu_idle_grace,
        )

    async def usage(self, start: float | None = None, end: float | None = None) -> UsageReport:
        """GPU-hours, CPU-hours, GPU energy and jobs per state per backend; by default the last 7 days."""
        return await usage.report(self.store, start, end, self.prices)

    async def usage_weeks(self, weeks: int = 8) -> UsageWeeks:
        """GPU-hours allocated and used per week, the last ``weeks`` weeks (this one so far last)."""
        return await usage.weekly(self.store, weeks, prices=self.prices)

    # ----- helpers -----

    def folder_of(self, job: Job) -> Path:
        return self.root / job.job_dir  # job_dir is relative to the root, or absolute outside it
