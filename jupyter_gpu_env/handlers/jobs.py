"""`jobs`, `jobs/{job_id}`, `jobs/{job_id}/log`, `jobs/{job_id}/cancel`, `jobs/usage`, `backends`."""

from __future__ import annotations

from ..models.jobs import (
    JOB_STATES,
    NOTEBOOK_PATTERN,
    BackendList,
    Job,
    JobList,
    JobRequest,
    LogChunk,
    UsageReport,
)
from ..models.notebooks import NotebookParameters
from .base import GpuEnvHandler, Param, operation

_STATE = "|".join(JOB_STATES)
# Unix times from 1970 to the year 9999: what a date picker can mean.
_TIME = {"type": "number", "minimum": 0, "maximum": 253402300799}
RUN_CODE = (("execute", "kernels"),)
JOB_LINKS = (
    ("GetJob", "get_jobs_job_id", {"job_id": "$response.body#/id"}),
    ("GetJobLog", "get_jobs_job_id_log", {"job_id": "$response.body#/id"}),
    ("CancelJob", "post_jobs_job_id_cancel", {"job_id": "$response.body#/id"}),
    ("DeleteJob", "delete_jobs_job_id", {"job_id": "$response.body#/id"}),
)


class JobsHandler(GpuEnvHandler):
    @operation(
        "Jobs, newest first",
        response=JobList,
        query=(
            Param(
                "state",
                {"type": "string", "pattern": f"^({_STATE})(,({_STATE}))*$"},
                "Only these states, comma-separated (queued,running,...).",
            ),
            Param("limit", {"type": "integer", "minimum": 1, "maximum": 500, "default": 50}, "Page size."),
            Param(
                "offset",
                {"type": "integer", "minimum": 0, "maximum": 1_000_000_000, "default": 0},
                "Skip this many.",
            ),
        ),
        errors=(400,),
        description="Parameters larger than `c.GpuEnvApp.listed_parameters_bytes` are left out of a "
        "listing (`parameters_omitted` says so); `GET jobs/{job_id}` has them.",
    )
    async def get(self) -> JobList:
        state = self.query["state"]
        return await self.services.jobs.list(
            state.split(",") if state else None, limit=self.query["limit"], offset=self.query["offset"]
        )

    @operation(
        "Send a notebook to a batch backend",
        request=JobRequest,
        response=Job,
        status=201,
        errors=(404, 409, 413),
        permissions=RUN_CODE,
        links=JOB_LINKS,
        description="The notebook (as saved on disk) is snapshotted at once; later edits do not change "
        "the job. Nothing is recorded when the request is refused: 404 names what does not exist (the "
        "notebook, the backend, a kernel, environment, image or queue), 409 what the backend or the "
        "notebook cannot take (a parameter it does not declare or of another type, resources beyond the "
        "backend's limits), 413 parameters beyond `c.GpuEnvApp.max_parameters_bytes`. Running code needs "
        "Jupyter's `execute` permission on kernels.",
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
        description="Usage already counted (GPU- and CPU-hours) stays counted.",
    )
    async def delete(self, job_id: str) -> None:
        await self.services.jobs.delete(job_id)


class JobLogHandler(GpuEnvHandler):
    @operation(
        "The job's log from a byte offset",
        response=LogChunk,
        query=(
            Param(
                "offset",
                {"type": "integer", "minimum": 0, "maximum": (1 << 53) - 1, "default": 0},
                "Where the previous chunk ended.",
            ),
        ),
        errors=(400, 404, 409),
        description="Call again with `next_offset` to follow the log; `eof` is true once the job ended and "
        "everything was read. 409 when the offset is past the end of the log.",
    )
    async def get(self, job_id: str) -> LogChunk:
        return await self.services.jobs.log(job_id, self.query["offset"])


class JobCancelHandler(GpuEnvHandler):
    @operation("Cancel a job", response=Job, errors=(404, 409))
    async def post(self, job_id: str) -> Job:
        return await self.services.jobs.cancel(job_id)


class UsageHandler(GpuEnvHandler):
    @operation(
        "GPU-hours, CPU-hours and job counts per backend over a period",
        response=UsageReport,
        query=(
            Param("start", _TIME, "Unix time; default 7 days before `end`."),
            Param("end", _TIME, "Unix time; default now."),
        ),
        errors=(400,),
        description="Counted from a ledger: deleting a job does not lower what it used. A period that "
        "ends before it starts is empty.",
    )
    async def get(self) -> UsageReport:
        return await self.services.jobs.usage(self.query["start"], self.query["end"])


class NotebookParametersHandler(GpuEnvHandler):
    @operation(
        "The parameters a notebook's `parameters` cell declares",
        response=NotebookParameters,
        query=(
            Param(
                "path",
                {"type": "string", "pattern": NOTEBOOK_PATTERN, "maxLength": 4096},
                "The notebook, relative to the server's root (as saved on disk).",
                required=True,
            ),
        ),
        errors=(400, 403, 404, 409),
        description="By papermill's own inspection and a safe reading of each default: name, kind (what "
        "values it takes: int, float, str, bool or any JSON literal), default, and the comment beside it. "
        "`POST jobs` checks parameters against the same answer.",
    )
    async def get(self) -> NotebookParameters:
        return await self.services.jobs.notebook_parameters(self.query["path"])


class BackendsHandler(GpuEnvHandler):
    @operation("What each configured backend offers", response=BackendList)
    async def get(self) -> BackendList:
        return BackendList(backends=self.services.jobs.backend_infos())
