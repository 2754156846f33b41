"""What every submission goes through, a single job's or a sweep's: the backend, the notebook and what
runs it checked once (:class:`Prepared`), then a queued record and its ``job.json`` per run.

Shared by :class:`.service.JobService` and :class:`.sweeps.service.Sweeps`, so neither calls back into
the other.
"""

from __future__ import annotations

import asyncio
import functools
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..backends.base import Backend
from ..contracts import jobfiles
from ..errors import Conflict, NotFound
from ..models.jobs import TERMINAL_STATES, Job, JobRequest
from ..system.offloop import python_work
from ..system.trees import remove_tree
from . import submission
from .parameters import inspect_notebook
from .runner.attempts import RESUME_PARAMETERS
from .tracking import JobTracker


@dataclass(frozen=True)
class Prepared:
    """A submission's checked parts, shared by every run of a sweep."""

    backend: Backend
    raw: bytes  # the notebook snapshot
    nb: Any  # parsed
    nb_file: Path
    runtime: dict[str, Any]  # what job.json says to run in
    resume_parameters: tuple[str, ...] = ()  # of checkpoint_dir and resumed, those the notebook declares


@dataclass(frozen=True)
class Runtimes:
    """Where a job may run: the kernels it may name, an environment's prefix and an image's file by
    name (None: unknown), and the image runtime of this host. Called in a worker thread."""

    kernel_names: Callable[[], Iterable[str]]
    environments: Callable[[str], str | None]
    images: Callable[[str], str | None]
    image_runtime: Callable[[], str | None]


@dataclass
class Intake:
    """Checks requests against ``backends`` and makes records in ``job_dir`` (under ``root``); ``tracker``
    polls a backend this process has not looked at yet; job.json asks for a GPU sample every
    ``gpu_sample_interval`` seconds."""

    backends: Mapping[str, Backend]
    tracker: JobTracker
    root: Path
    job_dir: Path
    runtimes: Runtimes
    gpu_sample_interval: float

    def backend(self, name: str) -> Backend:
        """The backend called ``name``; NotFound naming the configured ones."""
        backend = self.backends.get(name)
        if backend is None:
            known = ", ".join(sorted(self.backends)) or "none"
            raise NotFound(
                f"Unknown backend '{name}'; configured backends: {known}.", reason="unknown_backend"
            )
        return backend

    async def prepare(self, request: JobRequest, snapshot: bytes | None) -> Prepared:
        """What every run of ``request`` shares, checked: the backend, the notebook, what runs it."""
        backend = await self.polled_backend(request.backend)
        raw, nb, nb_file = await python_work(self._read_notebook, request, snapshot)
        runtime = await self.checked_runtime(request, nb, backend)
        declared = await python_work(_resume_parameters, nb)
        return Prepared(backend, raw, nb, nb_file, runtime, declared)

    async def polled_backend(self, name: str) -> Backend:
        """The backend called ``name``, looked at by this process before another job starts on it."""
        backend = self.backend(name)
        if not self.tracker.has_polled(backend.name):
            # This process has not looked at the backend yet (a CLI, or a submission racing the first
            # refresh): learn which jobs hold its slots before starting another.
            await self.tracker.refresh_backend(backend.name, backend)
        return backend

    async def checked_runtime(self, request: JobRequest, nb: Any, backend: Backend) -> dict[str, Any]:
        """What runs the job, checked with the backend's limits (``nb``: the notebook, whose kernel is
        taken when the request names no runtime; None for a kernel session, which always names one)."""
        runtime = await python_work(
            functools.partial(
                submission.resolve_runtime,
                request,
                nb,
                backend,
                kernel_names=self.runtimes.kernel_names,
                environments=self.runtimes.environments,
                images=self.runtimes.images,
                image_runtime=self.runtimes.image_runtime,
            )
        )
        backend.validate(request)
        return runtime

    async def start(self, job: Job, folder: Path, backend: Backend) -> Job:
        """Record ``job`` (its folder built) and hand it to ``backend``; undone whole when either fails.
        The record as the backend first saw it (or as a cancel meanwhile ended it)."""
        store = self.tracker.store
        try:
            await store.insert(job)
        except BaseException:
            await asyncio.to_thread(remove_tree, folder)
            raise
        try:
            obs = await backend.submit(job)
        except BaseException:
            await store.delete(job.id)
            await asyncio.to_thread(remove_tree, folder)
            raise
        job = await store.get(job.id)  # a cancel may have ended it while the backend answered
        if job.state in TERMINAL_STATES:
            return job
        return await self.tracker.apply(job, obs, None)

    def _read_notebook(self, request: JobRequest, snapshot: bytes | None) -> tuple[bytes, Any, Path]:
        nb_file = submission.resolve_notebook(self.root, request.notebook_path)
        raw, nb = submission.read_notebook(nb_file, snapshot)
        return raw, nb, nb_file

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
            notify=request.notify,
            priority=request.priority,
            checkpoint_dir=f"{shown}/{jobfiles.CHECKPOINT}",
            created_at=time.time(),
            **extra,
        )
        spec = self.spec(job, ready.runtime, ready.nb_file.parent)
        spec["resume_parameters"] = list(ready.resume_parameters)
        return job, spec

    def spec(self, job: Job, runtime: Mapping[str, Any], cwd: Path) -> dict[str, Any]:
        """The job.json of ``job``: what the runner runs is what the record says, in ``runtime``."""
        return {
            "format": jobfiles.JOB_FORMAT,
            "id": job.id,
            "name": job.name,
            "notebook_path": job.notebook_path,
            "parameters": job.parameters,
            "output": Path(job.output_path).name,
            "kernel": runtime.get("kernel"),
            "environment": runtime.get("environment"),
            "image": runtime.get("image"),
            "cwd": str(cwd),
            "time_limit_seconds": job.resources.time_limit_seconds,
            "resources": job.resources.model_dump(),
            "gpu_sample_interval": self.gpu_sample_interval,
            "priority": job.priority,
        }

    async def snapshot_of(
        self, job: Job, *, named: str | None = None, advice: str = "Send the notebook anew."
    ) -> bytes:
        """The notebook snapshot in ``job``'s folder, read as untrusted; a Conflict naming the job (or
        ``named``), then ``advice``, when it is gone or damaged."""
        path = self.folder_of(job) / jobfiles.INPUT
        try:
            raw = await asyncio.to_thread(jobfiles.read_bytes, path, submission.MAX_NOTEBOOK_BYTES)
        except jobfiles.Damaged as e:
            why, reason = f"{e}", "files_damaged"
        else:
            if raw is not None:
                return raw
            why, reason = "its folder no longer holds its snapshot", "snapshot_missing"
        raise Conflict(f"{named or f'Job {job.id!r}'} cannot be sent again: {why}. {advice}", reason=reason)

    async def runtime_of(self, job: Job, raw: bytes) -> dict[str, Any]:
        """What ``job``'s record says to run in, resolved now (the environment's prefix, the image's file)."""
        request = submission.request_of(job)
        _, nb = await python_work(submission.read_notebook, Path(job.notebook_path), raw)
        return await python_work(
            functools.partial(
                submission.resolve_runtime,
                request,
                nb,
                self.backend(job.backend),
                kernel_names=self.runtimes.kernel_names,
                environments=self.runtimes.environments,
                images=self.runtimes.images,
                image_runtime=self.runtimes.image_runtime,
            )
        )

    def folder_of(self, job: Job) -> Path:
        return self.root / job.job_dir  # job_dir is relative to the root, or absolute outside it

    def shown(self, path: Path) -> str:
        """A path as the API shows it: relative to the root when inside it, so JupyterLab can open it."""
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)


def _resume_parameters(nb: Any) -> tuple[str, ...]:
    """Which of ``checkpoint_dir`` and ``resumed`` the notebook's parameters cell declares."""
    declared = {p.name for p in inspect_notebook(nb).parameters}
    return tuple(name for name in RESUME_PARAMETERS if name in declared)
