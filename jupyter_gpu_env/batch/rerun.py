"""Send a job (or one run of a sweep) again: its snapshot, runtime, resources and queue as they were,
its parameters with the changes asked for. The new job is an ordinary one, checked like any submission."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import Conflict, NotFound
from ..models.jobs import MAX_NAME, Job, JobRequest
from ..models.resources import format_time_limit
from ..models.sweeps import JobGroup
from . import jobfiles, submission
from .sweeps import run_name

if TYPE_CHECKING:
    from .service import JobService


def request_of(
    job: Job, parameters: Mapping[str, Any] | None = None, group: JobGroup | None = None
) -> JobRequest:
    """The request that makes ``job`` again, with ``parameters`` over its own; a run of the sweep
    ``group`` is named as a run with those values would be."""
    res = job.resources
    resources: dict[str, Any] = {
        "cpus": res.cpus,
        "memory": res.memory_bytes,
        "gpus": res.gpus,
        "mig_profile": res.mig_profile,
        "time_limit": format_time_limit(res.time_limit_seconds) if res.time_limit_seconds else None,
    }
    values = {**job.parameters, **(parameters or {})}
    if group is not None:
        name = run_name(group.name, values, group.varied)
    else:  # a record from before names were kept within the limit is shortened to fit
        name = job.name if len(job.name) <= MAX_NAME else job.name[: MAX_NAME - 1] + "…"
    runtime = (
        {"environment": job.environment} if job.environment else {"image": job.image} if job.image else {}
    )
    if not runtime and job.kernel:
        runtime = {"kernel": job.kernel}
    return submission.parse_request(
        {
            "notebook_path": job.notebook_path,
            "backend": job.backend,
            **runtime,
            "parameters": values,
            "resources": {k: v for k, v in resources.items() if v is not None},
            "queue": job.queue,
            "name": name,
        }
    )


async def rerun(jobs: JobService, job_id: str, parameters: Mapping[str, Any] | None = None) -> Job:
    """A new job from ``job_id``'s snapshot; Conflict when its folder no longer holds the snapshot."""
    old = await jobs.store.get(job_id)
    try:
        snapshot = await asyncio.to_thread((jobs.folder_of(old) / jobfiles.INPUT).read_bytes)
    except OSError as e:
        raise Conflict(
            f"Job '{job_id}' cannot be sent again: its snapshot is gone ({e.strerror}). Send the notebook anew.",
            reason="snapshot_missing",
        ) from e
    group = None
    if old.group_id:
        with contextlib.suppress(NotFound):  # the sweep's record gone: the run's own name stands
            group = await jobs.store.get_group(old.group_id)
    new = await jobs.submit(request_of(old, parameters, group), snapshot)
    assert isinstance(new, Job)  # a request made from one job holds no sweep
    return new
