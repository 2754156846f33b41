"""Send a job (or one run of a sweep) again: its snapshot, runtime, resources and queue as they were,
its parameters with the changes asked for. The new job is an ordinary one, checked like any submission."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import Conflict
from ..models.jobs import Job, JobRequest, format_time_limit
from . import jobfiles, submission
from .sweeps import label

if TYPE_CHECKING:
    from .service import JobService


def request_of(job: Job, parameters: Mapping[str, Any] | None = None) -> JobRequest:
    """The request that makes ``job`` again, with ``parameters`` over its own."""
    res = job.resources
    resources: dict[str, Any] = {
        "cpus": res.cpus,
        "memory": res.memory_bytes,
        "gpus": res.gpus,
        "mig_profile": res.mig_profile,
        "time_limit": format_time_limit(res.time_limit_seconds) if res.time_limit_seconds else None,
    }
    values = {**job.parameters, **(parameters or {})}
    name = job.name
    if " [" in name and name.endswith("]"):  # a sweep's run: its label says its values, so renew it
        base, shown = name[:-1].split(" [", 1)
        keys = [part.split("=", 1)[0] for part in shown.split(", ") if "=" in part]
        if keys and all(k in values for k in keys):
            name = f"{base} [{label(values, keys)}]"
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
    new = await jobs.submit(request_of(old, parameters), snapshot)
    assert isinstance(new, Job)  # a request made from one job holds no sweep
    return new
