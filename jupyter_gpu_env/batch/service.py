"""JobService: submit, follow, cancel and delete batch jobs; keep the records in step with the backends.

A submission is checked in full before anything is written; then its folder is built in a temporary
sibling and renamed into place, the record is inserted, and the backend is handed the job. If the
backend refuses, the record and the folder go again: a rejected submission leaves nothing behind.
Keeping the records in step with the backends is :class:`.tracking.JobTracker`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import shutil
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import Conflict, NotFound, TooLarge
from ..images import runtime
from ..models.jobs import TERMINAL_STATES, Job, JobList, JobRequest
from ..models.notebooks import NotebookParameters
from ..models.sweeps import JobGroup
from ..offloop import python_work
from . import jobfiles, submission, sweeps
from .backend import Backend, IllegalTransition
from .groups import Sweeps
from .parameters import inspect_notebook
from .reports import JobReports
from .store import JobStore
from .tracking import JobTracker

log = logging.getLogger(__name__)

STALE_TEMPORARY = 600.0  # seconds after which a half-built job folder is surely abandoned


# Seconds between two refreshes triggered by a caller watching one active job.
_WATCHED_REFRESH = 0.25


@dataclass(frozen=True)
class Prepared:
    """A submission's checked parts, shared by every run of a sweep."""

    backend: Backend
    raw: bytes  # the notebook snapshot
    nb: Any  # parsed
    nb_file: Path
    runtime: dict[str, Any]  # what job.json says to run in


class JobService(JobReports):
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
        gpu_sample_interval: float = 5.0,
        gpu_idle_seconds: float = 600.0,
    ) -> None:
        self.store = store
        self.backends = dict(backends)
        self.root = Path(root_dir).resolve()
        self.job_dir = (self.root / job_dir).resolve()
        self.kernel_names = kernel_names
        self.environments = environments
        self.images = images
        self.refresh_interval = refresh_interval
        self._image_runtime = image_runtime
        self.max_parameters_bytes = max_parameters_bytes
        self.listed_parameters_bytes = listed_parameters_bytes
        self.gpu_sample_interval = gpu_sample_interval
        self.gpu_idle_seconds = gpu_idle_seconds
        for backend in self.backends.values():
            backend.job_folder = self.folder_of
        self.tracker = JobTracker(store, self.backends, self.folder_of, refresh_interval)
        self.sweeps = Sweeps(self, max_runs=max_sweep_runs)

    # ----- lifetime -----

    async def start(self) -> None:
        """Reconcile the records with reality, then keep them in step in the background."""
        await self.reconcile()
        await python_work(submission.warm_up)
        self.tracker.start()

    async def stop(self) -> None:
        """Stop following jobs (they keep running) and release the backends and the store."""
        await self.tracker.stop()
        for backend in self.backends.values():
            await backend.close()
        await asyncio.to_thread(self.store.close)

    async def reconcile(self) -> None:
        """At start: drop half-built folders, then settle every active record against its backend.

        A job whose runner is gone without a status ends failed, saying so; one that finished while
        the server was down gets its final state from its status file.
        """
        await asyncio.to_thread(self._clean_temporaries)
        await self.refresh()

    async def refresh(self) -> None:
        """Poll each backend once for all its active jobs and apply what they and the job folders say."""
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
        if sweeps.is_sweep(request):
            return await self.sweeps.submit(request, snapshot)
        size = len(json.dumps(request.parameters))
        if size > self.max_parameters_bytes:
            raise TooLarge(
                f"The parameters take {size} bytes as JSON; at most {self.max_parameters_bytes} are accepted "
                "(c.GpuEnvApp.max_parameters_bytes). Pass large inputs as a file path instead.",
                reason="parameters_too_large",
            )
        ready = await self.prepare(request, snapshot)
        await python_work(submission.check_parameters, ready.nb, request.parameters)
        name = request.name or ready.nb_file.stem
        job, spec = self.new_job(
            request, ready, name, request.parameters, self.job_dir / f"{submission.slug(name)}"
        )
        folder = self.folder_of(job)
        await python_work(submission.build_folder, folder, ready.raw, spec)
        try:
            await self.store.insert(job)
        except BaseException:
            await asyncio.to_thread(_remove_tree, folder)
            raise
        try:
            obs = await ready.backend.submit(job)
        except BaseException:
            await self.store.delete(job.id)
            await asyncio.to_thread(_remove_tree, folder)
            raise
        return await self.tracker.apply(job, obs, None)

    async def prepare(self, request: JobRequest, snapshot: bytes | None) -> Prepared:
        """What every run of ``request`` shares, checked: the backend, the notebook, what runs it."""
        backend = self.backends.get(request.backend)
        if backend is None:
            known = ", ".join(sorted(self.backends)) or "none"
            raise NotFound(
                f"Unknown backend '{request.backend}'; configured backends: {known}.",
                reason="unknown_backend",
            )
        if not self.tracker.has_polled(backend.name):
            # This process has not looked at the backend yet (a CLI, or a submission racing the first
            # refresh): learn which jobs hold its slots before starting another.
            await self.tracker.refresh_backend(backend.name, backend)
        raw, nb, nb_file = await python_work(self._read_notebook, request, snapshot)
        runtime = await python_work(
            functools.partial(
                submission.resolve_runtime,
                request,
                nb,
                backend,
                kernel_names=self.kernel_names,
                environments=self.environments,
                images=self.images,
                image_runtime=self._image_runtime,
            )
        )
        backend.validate(request)
        return Prepared(backend, raw, nb, nb_file, runtime)

    def new_job(
        self,
        request: JobRequest,
        ready: Prepared,
        name: str,
        parameters: dict[str, Any],
        folder_stem: Path,
        **extra: Any,
    ) -> tuple[Job, dict[str, Any]]:
        """A queued job record and its job.json, in a new folder named ``<folder_stem>-<id>``."""
        job_id = uuid.uuid4().hex[:12]
        folder = folder_stem.with_name(f"{folder_stem.name}-{job_id}")
        shown = self.shown(folder)
        output = submission.output_name(name, parameters)
        job = Job(
            id=job_id,
            name=name,
            backend=ready.backend.name,
            state="queued",
            message="Waiting to start.",
            notebook_path=self.shown(ready.nb_file),
            job_dir=shown,
            input_path=f"{shown}/{jobfiles.INPUT}",
            output_path=f"{shown}/{output}",
            log_path=f"{shown}/{jobfiles.LOG}",
            parameters=parameters,
            resources=request.resources.normalized(),
            kernel=ready.runtime.get("kernel"),
            environment=request.environment,
            image=request.image,
            queue=request.queue,
            created_at=time.time(),
            **extra,
        )
        spec = {
            "format": jobfiles.JOB_FORMAT,
            "id": job_id,
            "name": name,
            "notebook_path": job.notebook_path,
            "parameters": parameters,
            "output": output,
            "kernel": ready.runtime.get("kernel"),
            "environment": ready.runtime.get("environment"),
            "image": ready.runtime.get("image"),
            "cwd": str(ready.nb_file.parent),
            "time_limit_seconds": job.resources.time_limit_seconds,
            "resources": job.resources.model_dump(),
            "gpu_sample_interval": self.gpu_sample_interval,
        }
        return job, spec

    async def notebook_parameters(self, notebook_path: str) -> NotebookParameters:
        """What the notebook's `parameters` cell declares, as the submit dialog shows and submit checks it.

        Raises NotFound (no such notebook), Forbidden (outside the root), Conflict (not readable).
        """

        def read() -> NotebookParameters:
            nb_file = submission.resolve_notebook(self.root, notebook_path)
            return inspect_notebook(submission.read_notebook(nb_file, None)[1])

        return await python_work(read)

    def _read_notebook(self, request: JobRequest, snapshot: bytes | None) -> tuple[bytes, Any, Path]:
        nb_file = submission.resolve_notebook(self.root, request.notebook_path)
        raw, nb = submission.read_notebook(nb_file, snapshot)
        return raw, nb, nb_file

    # ----- reading -----

    async def get(self, job_id: str) -> Job:
        job = await self.store.get(job_id)
        # Someone is watching this job: settle it now rather than at the next periodic round, at most
        # a few times a second however many watchers ask (callers share the refresh lock).
        if job.state in ("queued", "running") and self.tracker.seconds_since_refresh() > _WATCHED_REFRESH:
            await self.refresh()
            job = await self.store.get(job_id)
        return job

    async def refresh_if_watched(self) -> None:
        """Someone watches a sweep or a job: settle the records now rather than at the next round."""
        if self.tracker.seconds_since_refresh() > _WATCHED_REFRESH:
            await self.refresh()

    async def list(
        self,
        state: str | Iterable[str] | None = None,
        *,
        limit: int = 50,
        offset: int = 0,
        group: str | None = None,
    ) -> JobList:
        states = [state] if isinstance(state, str) else state
        if group not in (None, "none"):
            await self.sweeps.get(group)  # an unknown sweep is a 404, not an empty page
        page = await self.store.list(states, limit=limit, offset=offset, group=group)
        if any(j.state not in TERMINAL_STATES for j in page.items) and (
            self.tracker.seconds_since_refresh() > _WATCHED_REFRESH
        ):
            # Someone watches active jobs: settle them now, so a row does not lag its job by a round
            await self.refresh()
            page = await self.store.list(states, limit=limit, offset=offset, group=group)
        page.items = [self._listed(job) for job in page.items]
        return page

    def _listed(self, job: Job) -> Job:
        """A job as listings show it: parameters too large for a listing are left out, and it says so."""
        if job.parameters and len(json.dumps(job.parameters)) > self.listed_parameters_bytes:
            return job.model_copy(update={"parameters": {}, "parameters_omitted": True})
        return job

    # ----- changing -----

    async def cancel(self, job_id: str) -> Job:
        """Stop a queued or running job and record it cancelled. :class:`Conflict` if it has already ended."""
        job = await self.store.get(job_id)
        if job.state in TERMINAL_STATES:
            raise Conflict(f"Job '{job_id}' has already {job.state}.", reason="job_finished")
        backend = self.backends.get(job.backend)
        if backend is not None:
            await backend.cancel(job)
        try:
            return await self.store.update(
                job_id,
                state="cancelled",
                reason="cancelled",
                message="Cancelled by the user.",
                pending_reason=None,
            )
        except IllegalTransition:
            job = await self.store.get(job_id)
            raise Conflict(f"Job '{job_id}' has already {job.state}.", reason="job_finished") from None

    async def delete(self, job_id: str) -> None:
        """Remove the record and the job folder; a job still queued or running is cancelled first."""
        job = await self.store.get(job_id)
        if job.state not in TERMINAL_STATES:
            with contextlib.suppress(Conflict):
                job = await self.cancel(job_id)
        await self.store.delete(job_id)
        await asyncio.to_thread(self._discard_folder, job)

    # ----- helpers -----

    def folder_of(self, job: Job) -> Path:
        return self.root / job.job_dir  # job_dir is relative to the root, or absolute outside it

    def shown(self, path: Path) -> str:
        """A path as the API shows it: relative to the root when inside it, so JupyterLab can open it."""
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)

    def _clean_temporaries(self) -> None:
        if not self.job_dir.is_dir():
            return
        # Spare recent ones: another process (the CLI) may be building a job right now.
        cutoff = time.time() - STALE_TEMPORARY
        for entry in self.job_dir.iterdir():
            if (
                entry.name.startswith((".tmp-", ".trash-"))
                and entry.is_dir()
                and entry.stat().st_mtime < cutoff
            ):
                _remove_tree(entry)

    def _discard_folder(self, job: Job) -> None:
        folder = self.folder_of(job)
        # Only ever remove what is recognisably this job's folder.
        if not folder.name.endswith(job.id) or not (folder / jobfiles.JOB_JSON).is_file():
            return
        trash = folder.with_name(f".trash-{folder.name}")
        try:
            folder.rename(trash)  # at once gone from view; a runner still writing writes nowhere
        except OSError:
            trash = folder
        _remove_tree(trash)


def _remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
