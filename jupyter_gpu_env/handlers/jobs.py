"""`jobs`, `jobs/{job_id}`, `jobs/{job_id}/log`, `jobs/{job_id}/cancel`, `jobs/usage`, `jobs/advice`,
`backends`."""

from __future__ import annotations

from ..jobs.usage import as_csv as usage_csv
from ..models.backends import BackendList, UsageReport, UsageWeeks
from ..models.cluster import ClusterCapacity
from ..models.gpu.advice import GpuAdvice
from ..models.jobs import (
    JOB_STATES,
    NAME_PATTERN,
    NOTEBOOK_PATTERN,
    Job,
    JobGpuSeries,
    JobList,
    JobRequest,
    LogChunk,
    RerunRequest,
)
from ..models.notebooks import NotebookParameters
from ..models.sweeps import JobGroup
from .base import PAGE, GpuEnvHandler, Param, id_links, operation

_STATE = "|".join(JOB_STATES)
# Unix times from 1970 to the year 9999: what a date picker can mean.
_TIME = {"type": "number", "minimum": 0, "maximum": 253402300799}
RUN_CODE = (("execute", "kernels"),)
JOB_LINKS = id_links(
    "job_id",
    ("GetJob", "get_jobs_job_id"),
    ("GetJobLog", "get_jobs_job_id_log"),
    ("CancelJob", "post_jobs_job_id_cancel"),
    ("DeleteJob", "delete_jobs_job_id"),
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
            *PAGE,
            Param(
                "group",
                {"type": "string", "pattern": "^([0-9a-f]{12}|none)$"},
                "Only the runs of this sweep, in the sweep's order; `none`: only jobs that are no sweep's "
                "run (a listing that shows sweeps from `GET sweeps` beside them).",
            ),
            Param(
                "schedule",
                {"type": "string", "pattern": "^[0-9a-f]{12}$"},
                "Only the runs of this schedule (a deleted schedule's runs included), newest first.",
            ),
            Param(
                "pipeline",
                {"type": "string", "pattern": "^([0-9a-f]{12}|none)$"},
                "Only the jobs of this pipeline (of every attempt); `none`: only jobs of no pipeline (a "
                "listing that shows pipelines from `GET pipelines` beside them).",
            ),
        ),
        errors=(400, 404),
        description="Parameters larger than `c.GpuEnvApp.listed_parameters_bytes` are left out of a "
        "listing (`parameters_omitted` says so); `GET jobs/{job_id}` has them.",
    )
    async def get(self) -> bytes:
        state = self.query["state"]
        return await self.services.jobs.list_json(
            state.split(",") if state else None,
            limit=self.query["limit"],
            offset=self.query["offset"],
            sweep=self.query["group"],
            schedule=self.query["schedule"],
            pipeline=self.query["pipeline"],
        )

    @operation(
        "Send a notebook to a batch backend",
        request=JobRequest,
        response=Job,
        also=((201, JobGroup),),
        status=201,
        errors=(404, 409, 413),
        permissions=RUN_CODE,
        links=JOB_LINKS,
        description="The notebook (as saved on disk) is snapshotted at once; later edits do not change "
        "the job. Nothing is recorded when the request is refused: 404 names what does not exist (the "
        "notebook, the backend, a kernel, environment, image or queue), 409 what the backend or the "
        "notebook cannot take (a parameter it does not declare or of another type, resources beyond the "
        "backend's limits), 413 parameters beyond `c.GpuEnvApp.max_parameters_bytes`. Running code needs "
        "Jupyter's `execute` permission on kernels. With `sweep` or `sweep_runs` the answer is the sweep "
        "(a JobGroup), checked as a whole first (every value against its parameter, the number of runs "
        "against `c.GpuEnvApp.max_sweep_runs`): one run per set of values, handed to the backend as one "
        "object where it has one (a SLURM job array, a Kubernetes Indexed Job).",
    )
    async def post(self, body: JobRequest) -> Job | JobGroup:
        made = await self.services.jobs.submit(body)
        where = ("sweeps", made.id) if isinstance(made, JobGroup) else ("jobs", made.id)
        self.set_header("Location", self.api_url(*where))
        return made


class JobGpuHandler(GpuEnvHandler):
    @operation(
        "The GPU use the job's runner sampled: its series and summary",
        response=JobGpuSeries,
        errors=(404,),
        description="One point per sample (every `c.GpuEnvApp.job_gpu_sample_interval` seconds), thinned "
        "evenly to 600 at most; empty when the job saw no GPU (its summary says why). The summary carries "
        "the energy the job's GPUs drew (`energy_joules`, how it was found in `energy_source`, or why not "
        "in `energy_note`), and its CO2e and cost at the site's numbers where it set them.",
    )
    async def get(self, job_id: str) -> JobGpuSeries:
        return await self.services.jobs.gpu_series(job_id)


class JobRerunHandler(GpuEnvHandler):
    @operation(
        "Send a job (or a run of a sweep) again, its parameters changed or not",
        request=RerunRequest,
        response=Job,
        status=201,
        errors=(404, 409, 413),
        permissions=RUN_CODE,
        description="Its snapshot (never the notebook file as it is now); its runtime, resources, backend "
        "and queue as they were unless the request changes them; `parameters` change some values. A new "
        "job, checked like any submission; a run of a sweep sent again on the sweep's backend is a new run "
        "of that sweep (numbered after its runs, in its results). 409 when its folder no longer holds the "
        "snapshot.",
    )
    async def post(self, job_id: str, body: RerunRequest) -> Job:
        job = await self.services.jobs.rerun(job_id, body.parameters, body.changes())
        self.set_header("Location", self.api_url("jobs", job.id))
        return job


class JobParametersHandler(GpuEnvHandler):
    @operation(
        "The parameters the `parameters` cell of a job's snapshot declares",
        response=NotebookParameters,
        errors=(404, 409),
        description="As `GET notebooks/parameters` reads a notebook file, but of the snapshot the job ran "
        "(what `POST jobs/{job_id}/rerun` runs again). 409 when its folder no longer holds the snapshot.",
    )
    async def get(self, job_id: str) -> NotebookParameters:
        return await self.services.jobs.snapshot_parameters(job_id)


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
        "GPU-hours, CPU-hours, GPU energy and job counts per backend over a period",
        response=UsageReport,
        query=(
            Param("start", _TIME, "Unix time; default 7 days before `end`."),
            Param("end", _TIME, "Unix time; default now."),
        ),
        errors=(400,),
        description="Counted from a ledger: deleting a job does not lower what it used. A period that "
        "ends before it starts is empty. `gpu_energy_kwh` is what the jobs that measured it drew (each "
        "job's energy spread over its run time), with CO2e and cost at the site's numbers where it set "
        "them (`c.GpuEnvApp.carbon_intensity`, `pue`, `gpu_hour_price`, `energy_price`).",
    )
    async def get(self) -> UsageReport:
        return await self.services.jobs.usage(self.query["start"], self.query["end"])


class AdviceHandler(GpuEnvHandler):
    @operation(
        "The smallest GPU or MIG slice that fits a notebook, from what its runs measured",
        response=GpuAdvice,
        query=(
            Param(
                "notebook_path",
                {"type": "string", "pattern": NOTEBOOK_PATTERN, "maxLength": 4096},
                "The notebook whose earlier runs (on any backend) and open kernel are measured.",
            ),
            Param(
                "backend",
                {"type": "string", "pattern": NAME_PATTERN},
                "The backend to size for; default local.",
            ),
            Param(
                "kernel_id",
                {"type": "string", "pattern": "^[A-Za-z0-9-]{1,64}$"},
                "A kernel of this server whose GPU memory is measured (the GPU panel's advice).",
            ),
        ),
        errors=(400, 404),
        description="The peak GPU memory of the notebook's latest measured runs (and of its open kernel), "
        "with `c.GpuEnvApp.job_advice_headroom` over it, against the backend's MIG profiles and GPUs; "
        "`sentence` says it in one line, `soonest` where it would likely start first. With nothing "
        "measured yet, `based_on` is `nothing` and `sentence` says so.",
        beyond_schema="notebook_path or kernel_id, at least one (no OpenAPI query parameter can say so; with neither it is a 400 saying to give one).",
    )
    async def get(self) -> GpuAdvice:
        return await self.services.advice.advise(
            self.query["backend"] or "local", self.query["notebook_path"], self.query["kernel_id"]
        )


class BackendCapacityHandler(GpuEnvHandler):
    @operation(
        "Free and total GPUs and MIG slices of a backend, by profile and GPU model",
        response=ClusterCapacity,
        errors=(404,),
        description="SLURM: the nodes' gres (`scontrol -d show node`, nodes that can take jobs); Kubernetes: "
        "the nodes' allocatable extended resources less what unfinished pods request; cached for half a "
        "minute. `available` is false, saying why, where the backend cannot tell (the local one).",
    )
    async def get(self, name: str) -> ClusterCapacity:
        return await self.services.jobs.capacity(name)


class UsageWeeksHandler(GpuEnvHandler):
    @operation(
        "GPU-hours allocated and used and GPU energy per week and backend",
        response=UsageWeeks,
        query=(
            Param(
                "weeks", {"type": "integer", "minimum": 1, "maximum": 104, "default": 8}, "How many weeks."
            ),
            Param("format", {"type": "string", "enum": ["json", "csv"], "default": "json"}, "json or csv."),
        ),
        errors=(400,),
        also_text=("text/csv",),
        description="Used GPU-hours are allocated hours weighted by each job's measured mean utilization "
        "(`gpu_hours_measured` says how many were measured: MIG slices report no utilization); the GPU "
        "energy and its CO2e and cost as in `GET jobs/usage`. `format=csv` answers text/csv, a row per week "
        "and backend.",
    )
    async def get(self) -> UsageWeeks | None:
        report = await self.services.jobs.usage_weeks(self.query["weeks"])
        if self.query["format"] != "csv":
            return report
        self.set_header("Content-Disposition", 'attachment; filename="gpu-usage.csv"')
        self.finish(usage_csv(report), set_content_type="text/csv; charset=utf-8")
        return None


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
        return self.services.jobs.backend_list()
