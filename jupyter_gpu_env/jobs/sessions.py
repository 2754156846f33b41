"""Interactive kernel sessions as jobs: a job whose runner hosts a kernel (job.json ``kind: "kernel"``,
batchkernels/host) instead of executing a notebook.

A session is checked and started as a job is — its backend, its runtime (a kernel, an environment or
a packed image, always named), the backend's limits —, recorded in the same store, and then followed,
listed, cancelled and accounted by the same tracker, so its queue place, its GPU use and its end come
from one machinery. What it lacks is a notebook: its folder holds job.json alone, and its record has no
output to open. Nothing in jobs/ knows who asks for one (the batch kernels feature does).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..contracts import jobfiles
from ..errors import InvalidRequest
from ..models.jobs import Job, JobRequest
from ..system.offloop import python_work
from . import submission

if TYPE_CHECKING:
    from .service import JobService


@dataclass(frozen=True)
class SessionAsk:
    """What a kernel session runs in and on: the fields of a job request that say where (``request``
    names its kernel, environment or image; its notebook path is the session's notebook, or empty),
    and how the kernel host listens and when it gives up on a silent server."""

    request: JobRequest
    cwd: Path
    kernel_session: dict[str, Any] = field(default_factory=dict)


class SessionJobs:
    def __init__(self, jobs: JobService) -> None:
        self._jobs = jobs

    async def submit(self, ask: SessionAsk) -> Job:
        """Check, record and start the session's job; its record, as the backend first saw it.

        Refused as a job is (NotFound, Conflict, InvalidRequest) with nothing recorded; a request that
        names no runtime is refused: a session has no notebook to take its kernel from."""
        jobs = self._jobs
        request = ask.request
        if not (request.kernel or request.environment or request.image):
            raise InvalidRequest(
                "A kernel session names what it runs in: a kernel, an environment or a packed image."
            )
        intake = jobs.intake
        backend = await intake.polled_backend(request.backend)
        runtime = await intake.checked_runtime(request, None, backend)
        job_id = uuid.uuid4().hex[:12]
        name = request.name or "kernel"
        folder = jobs.job_dir / f"{jobfiles.slug(name)}-{job_id}"
        shown = intake.shown(folder)
        job = Job(
            id=job_id,
            name=name,
            kind="kernel",
            backend=backend.name,
            state="queued",
            message="Waiting to start.",
            notebook_path=request.notebook_path,
            job_dir=shown,
            input_path="",
            output_path="",
            log_path=f"{shown}/{jobfiles.LOG}",
            resources=request.resources.normalized(),
            kernel=runtime.get("kernel"),
            environment=request.environment,
            image=request.image,
            queue=request.queue,
            priority=request.priority,
            created_at=time.time(),
        )
        spec = {
            **intake.spec(job, runtime, ask.cwd),
            "kind": "kernel",
            "kernel_session": dict(ask.kernel_session),
        }
        await python_work(submission.build_folder, folder, None, spec)
        return await intake.start(job, folder, backend)
