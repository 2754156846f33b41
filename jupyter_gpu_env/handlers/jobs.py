"""`jobs`, `jobs/{job_id}`, `jobs/{job_id}/log`, `jobs/{job_id}/cancel`, `jobs/usage`, `backends`."""

from __future__ import annotations

from ..errors import InvalidRequest
from ..models.jobs import BackendList, Job, JobList, JobRequest, LogChunk, UsageReport
from .base import GpuEnvHandler, Param, operation


def _number(handler: GpuEnvHandler, name: str, default: float | None) -> float | None:
    raw = handler.query_arg(name)
    if raw is None:
        return default
    try:
        return float(raw)
    except ValueError:
        raise InvalidRequest(f"'{name}' must be a number, not '{raw}'.") from None


def _int(handler: GpuEnvHandler, name: str, default: int) -> int:
    raw = handler.query_arg(name)
    if raw is None:
        return default
    if not raw.lstrip("-").isdigit():
        raise InvalidRequest(f"'{name}' must be a whole number, not '{raw}'.")
    return int(raw)


class JobsHandler(GpuEnvHandler):
    @operation(
        "Jobs, newest first",
        response=JobList,
        query=(
            Param("state", {"type": "string"}, "Only these states, comma-separated (queued,running,...)."),
            Param("limit", {"type": "integer", "minimum": 1, "maximum": 500}, "Page size, default 50."),
            Param("offset", {"type": "integer", "minimum": 0}, "Skip this many."),
        ),
        errors=(400,),
    )
    async def get(self) -> JobList:
        state = self.query_arg("state")
        states = [s.strip() for s in state.split(",") if s.strip()] if state else None
        return await self.services.jobs.list(
            states, limit=_int(self, "limit", 50), offset=_int(self, "offset", 0)
        )

    @operation(
        "Send a notebook to a batch backend",
        request=JobRequest,
        response=Job,
        status=201,
        errors=(409,),
        description="The notebook (as saved on disk) is snapshotted at once; later edits do not change "
        "the job. Nothing is recorded when the request is refused.",
    )
    async def post(self, body: JobRequest) -> Job:
        job = await self.services.jobs.submit(body)
        self.set_header("Location", self.api_url("jobs", job.id))
        return job


class JobHandler(GpuEnvHandler):
    @operation("One job", response=Job, errors=(404,))
    async def get(self, job_id: str) -> Job:
        return await self.services.jobs.get(job_id)

    @operation(
        "Delete a job: its record and its folder (a running job is cancelled first)",
        status=204,
        errors=(404,),
    )
    async def delete(self, job_id: str) -> None:
        await self.services.jobs.delete(job_id)


class JobLogHandler(GpuEnvHandler):
    @operation(
        "The job's log from a byte offset",
        response=LogChunk,
        query=(Param("offset", {"type": "integer", "minimum": 0}, "Where the previous chunk ended."),),
        errors=(400, 404),
        description="Call again with `next_offset` to follow the log; `eof` is true once the job ended and "
        "everything was read.",
    )
    async def get(self, job_id: str) -> LogChunk:
        return await self.services.jobs.log(job_id, _int(self, "offset", 0))


class JobCancelHandler(GpuEnvHandler):
    @operation("Cancel a job", response=Job, errors=(404, 409))
    async def post(self, job_id: str) -> Job:
        return await self.services.jobs.cancel(job_id)


class UsageHandler(GpuEnvHandler):
    @operation(
        "GPU-hours, CPU-hours and job counts per backend over a period",
        response=UsageReport,
        query=(
            Param("start", {"type": "number"}, "Unix time; default 7 days ago."),
            Param("end", {"type": "number"}, "Unix time; default now."),
        ),
        errors=(400,),
    )
    async def get(self) -> UsageReport:
        return await self.services.jobs.usage(_number(self, "start", None), _number(self, "end", None))


class BackendsHandler(GpuEnvHandler):
    @operation("What each configured backend offers", response=BackendList)
    async def get(self) -> BackendList:
        return BackendList(backends=self.services.jobs.backend_infos())
