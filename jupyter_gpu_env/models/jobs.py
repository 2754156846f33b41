"""Batch jobs: what a submission asks for, what a job record holds, listings, log chunks and usage."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Literal, TypeAlias, Union

from pydantic import ConfigDict, Field, JsonValue, model_validator
from typing_extensions import TypeAliasType

from .common import ApiModel
from .fields import line, patterned, whole_number

JobState = Literal["queued", "running", "succeeded", "failed", "cancelled"]
JOB_STATES: tuple[JobState, ...] = ("queued", "running", "succeeded", "failed", "cancelled")
TERMINAL_STATES: frozenset[str] = frozenset({"succeeded", "failed", "cancelled"})
ACTIVE_STATES: frozenset[str] = frozenset({"queued", "running"})


MAX_CPUS = 1024
MAX_GPUS = 64
# Integers of bytes up to 2^53: exact in JSON for every client (JavaScript's numbers included).
MAX_MEMORY_INT = (1 << 53) - 1
MAX_TIME_MINUTES = 999_999

# The forms people write, as regular expressions shared by the parser here and the OpenAPI document,
# so that what the document calls valid is exactly what is accepted. No absolute ceiling beyond the
# digits these forms allow: each backend states its own limits (`GET backends`) and refuses beyond.
# `1g.10gb`, `3g.40gb`, `1g.10gb+me` (NVIDIA's media-extension profiles).
MIG_PROFILE_PATTERN = r"^[1-7]g\.[0-9]{1,3}gb(\+me)?$"
MIG_PROFILE_RE = re.compile(MIG_PROFILE_PATTERN)
# A positive amount with a binary unit: `512M`, `4G`, `4GiB`, `1.5T` (never all zeros).
MEMORY_PATTERN = r"^ *(?![0.]*[ KkMmGgTt])([0-9]{1,6}(\.[0-9]{1,3})?) *([KkMmGgTt])([Ii]?[Bb])? *$"
_MEMORY_RE = re.compile(MEMORY_PATTERN)
# SLURM's forms: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS (never all zeros).
TIME_LIMIT_PATTERN = (
    r"^ *(?![-0:]* *$)("
    r"(?P<minutes>[0-9]{1,6})"
    r"|(?P<ms_m>[0-9]{1,6}):(?P<ms_s>[0-5]?[0-9])"
    r"|(?P<h>[0-9]{1,5}):(?P<h_m>[0-5]?[0-9]):(?P<h_s>[0-5]?[0-9])"
    r"|(?P<d>[0-9]{1,3})-(?P<d_h>[01]?[0-9]|2[0-3])(:(?P<d_m>[0-5]?[0-9])(:(?P<d_s>[0-5]?[0-9]))?)?"
    r") *$"
)
_TIME_RE = re.compile(TIME_LIMIT_PATTERN)
_UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
_NAME_RE = re.compile(NAME_PATTERN)


def parse_memory(value: int | str) -> int:
    """Bytes from an integer (bytes) or a string with a binary unit: ``512M``, ``4G``, ``4GiB``, ``1.5T``.

    Units are powers of 1024, as SLURM reads them. A string without a unit is refused: SLURM would
    read it as megabytes and Kubernetes as bytes, and guessing wrong costs a job.
    """
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError("memory must be a number of bytes or a string such as '4G'")
    if isinstance(value, int):
        if not 1 <= value <= MAX_MEMORY_INT:
            raise ValueError(f"memory in bytes must be from 1 to {MAX_MEMORY_INT}")
        return value
    m = _MEMORY_RE.fullmatch(value)
    if m is None:
        raise ValueError(f"memory '{value}' is not understood; write it like '512M', '4G' or '1.5T'")
    return max(1, int(float(m.group(1)) * _UNITS[m.group(3).upper()]))


def parse_time_limit(value: int | str) -> int:
    """Seconds from SLURM's forms: minutes as a number, ``MM:SS``, ``HH:MM:SS``, ``D-HH``, ``D-HH:MM[:SS]``."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError("time_limit must be minutes or a string such as '1:00:00'")
    if isinstance(value, int):
        if not 1 <= value <= MAX_TIME_MINUTES:
            raise ValueError(f"time_limit in minutes must be from 1 to {MAX_TIME_MINUTES}")
        return value * 60
    m = _TIME_RE.fullmatch(value)
    if m is None:
        raise ValueError(
            f"time_limit '{value}' is not understood; write minutes ('90'), 'HH:MM:SS' ('1:30:00') or "
            "'D-HH:MM:SS'"
        )
    g = {k: int(v) for k, v in m.groupdict().items() if v is not None}
    if "minutes" in g:
        return g["minutes"] * 60
    if "ms_m" in g:
        return g["ms_m"] * 60 + g["ms_s"]
    if "h" in g:
        return (g["h"] * 60 + g["h_m"]) * 60 + g["h_s"]
    return ((g["d"] * 24 + g["d_h"]) * 60 + g.get("d_m", 0)) * 60 + g.get("d_s", 0)


def format_time_limit(seconds: int) -> str:
    """SLURM's ``D-HH:MM:SS`` (or ``HH:MM:SS`` under a day), for sbatch and for people."""
    days, rem = divmod(int(seconds), 86400)
    h, rem = divmod(rem, 3600)
    m, s = divmod(rem, 60)
    return f"{days}-{h:02d}:{m:02d}:{s:02d}" if days else f"{h:d}:{m:02d}:{s:02d}"


def mig_fraction(profile: str) -> float:
    """The share of a whole GPU a MIG profile holds, by compute slices out of seven (A100/H100)."""
    return int(profile[0]) / 7 if MIG_PROFILE_RE.fullmatch(profile) else 0.0


MemoryText = Annotated[
    str,
    patterned(
        MEMORY_PATTERN, "memory", hint="write it like '512M', '4G' or '1.5T' (binary units)", max_length=40
    ),
]
TimeLimitText = Annotated[
    str,
    patterned(
        TIME_LIMIT_PATTERN,
        "time_limit",
        hint="write minutes ('90'), 'HH:MM:SS' ('1:30:00') or 'D-HH:MM:SS' ('2-00:00:00')",
        max_length=40,
    ),
]
MigProfile = Annotated[
    str, patterned(MIG_PROFILE_PATTERN, "mig_profile", hint="write it like '1g.10gb' or '3g.40gb'")
]


class Resources(ApiModel):
    """Resources a submission asks for, in the forms people write them. Unset means the backend's default."""

    model_config = ConfigDict(
        json_schema_extra={
            "not": {
                "required": ["gpus", "mig_profile"],
                "properties": {"gpus": {"type": "integer"}, "mig_profile": {"type": "string"}},
            }
        }
    )

    cpus: Annotated[int, whole_number("cpus", 1, MAX_CPUS)] | None = Field(
        default=None, description=f"CPU cores, 1..{MAX_CPUS}."
    )
    memory: Annotated[int, whole_number("memory in bytes", 1, MAX_MEMORY_INT)] | MemoryText | None = Field(
        default=None,
        description="Bytes, or a string with a binary unit: '512M', '4G', '1.5T'. Each backend states "
        "its own maximum (`GET backends`).",
    )
    gpus: Annotated[int, whole_number("gpus", 0, MAX_GPUS)] | None = Field(
        default=None, description=f"Whole GPUs, 0..{MAX_GPUS}. Not with mig_profile."
    )
    mig_profile: MigProfile | None = Field(
        default=None, description="A MIG slice such as `1g.10gb` or `3g.40gb`, instead of whole GPUs."
    )
    time_limit: (
        Annotated[int, whole_number("time_limit in minutes", 1, MAX_TIME_MINUTES)] | TimeLimitText | None
    ) = Field(
        default=None,
        description="Minutes, or SLURM's 'HH:MM:SS' / 'D-HH:MM:SS'. Each backend states its own maximum.",
    )

    @model_validator(mode="after")
    def _gpus_or_mig(self) -> Resources:
        if self.gpus is not None and self.mig_profile is not None:
            raise ValueError("ask for either whole GPUs (gpus) or a MIG slice (mig_profile), not both")
        return self

    def normalized(self) -> JobResources:
        return JobResources(
            cpus=self.cpus,
            memory_bytes=parse_memory(self.memory) if self.memory is not None else None,
            gpus=self.gpus,
            mig_profile=self.mig_profile,
            time_limit_seconds=parse_time_limit(self.time_limit) if self.time_limit is not None else None,
        )


class JobResources(ApiModel):
    """The resources of a job, normalized: bytes and seconds."""

    cpus: int | None = None
    memory_bytes: int | None = None
    gpus: int | None = None
    mig_profile: str | None = None
    time_limit_seconds: int | None = None

    def gpu_units(self) -> float:
        """Whole-GPU equivalents, for GPU-hours: a MIG slice counts its share of the GPU."""
        if self.mig_profile:
            return mig_fraction(self.mig_profile)
        return float(self.gpus or 0)


IDENTIFIER_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]{0,99}$"
# A notebook under the server's root: one line, ending in .ipynb (in any case).
NOTEBOOK_PATTERN = r"^[^\x00-\x1f\x7f]*\.[iI][pP][yY][nN][bB]$"
KERNEL_NAME_PATTERN = r"^[A-Za-z0-9._-]{1,255}$"
# Listed environment names: a folder name, or `<name>@<parent>` for a managed one whose name is taken.
ENV_REF_PATTERN = r"^[^\x00-\x1f\x7f/]{1,255}$"
IMAGE_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,254}$"
# A SLURM partition or a Kueue LocalQueue (whose names are DNS labels, a subset).
QUEUE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,127}$"
MAX_PARAMETERS = 200
MAX_NAME = 200  # characters of a job's name, a sweep run's included
MAX_SWEEP_RUNS = 100_000  # the schema's ceiling; c.GpuEnvApp.max_sweep_runs is the one that applies
_RUNTIMES = ("kernel", "environment", "image")


# Values papermill injects: JSON whose strings (keys included) hold no NUL, which no Python source,
# file or command line can carry. Floats are finite (the body parser refuses NaN and Infinity).
_NO_NUL = r"^[^\x00]*$"
if TYPE_CHECKING:  # what the values are; the checks below are pydantic's business
    ParameterValue: TypeAlias = (
        "str | bool | int | float | None | list[ParameterValue] | dict[str, ParameterValue]"
    )
else:
    ParameterValue = TypeAliasType(
        "ParameterValue",
        Union[  # noqa: UP007 - a recursive alias needs the explicit Union
            Annotated[str, patterned(_NO_NUL, "text")],
            bool,
            int,
            float,
            None,
            list["ParameterValue"],
            dict[Annotated[str, patterned(_NO_NUL, "key")], "ParameterValue"],
        ],
    )


def _both(a: str, b: str) -> dict:
    return {"required": [a, b], "properties": {a: {"type": "string"}, b: {"type": "string"}}}


class JobRequest(ApiModel):
    """`POST jobs`: run a saved notebook as a batch job."""

    model_config = ConfigDict(
        json_schema_extra={
            "not": {
                "anyOf": [
                    _both("kernel", "environment"),
                    _both("kernel", "image"),
                    _both("environment", "image"),
                    {
                        "required": ["sweep", "sweep_runs"],
                        "properties": {"sweep": {"type": "object"}, "sweep_runs": {"type": "array"}},
                    },
                ]
            },
            # max_concurrent only with a sweep
            "if": {"required": ["max_concurrent"], "properties": {"max_concurrent": {"type": "integer"}}},
            "then": {
                "anyOf": [
                    {"required": ["sweep"], "properties": {"sweep": {"type": "object"}}},
                    {"required": ["sweep_runs"], "properties": {"sweep_runs": {"type": "array"}}},
                ]
            },
        }
    )

    notebook_path: Annotated[
        str,
        patterned(
            NOTEBOOK_PATTERN, "notebook_path", hint="it must be a notebook (.ipynb) path", max_length=4096
        ),
    ] = Field(description="The notebook, relative to the server's root.", examples=["analysis.ipynb"])
    backend: Annotated[str, patterned(NAME_PATTERN, "backend")] = Field(
        default="local", description="A backend from `GET backends`."
    )
    kernel: Annotated[str, patterned(KERNEL_NAME_PATTERN, "kernel")] | None = Field(
        default=None, description="A kernel name (`python3`, ...)."
    )
    environment: Annotated[str, patterned(ENV_REF_PATTERN, "environment")] | None = Field(
        default=None, description="A conda environment to run in, by its listed name."
    )
    image: Annotated[str, patterned(IMAGE_ID_PATTERN, "image")] | None = Field(
        default=None, description="A packed image (squashfs) to run in, by id."
    )
    parameters: dict[Annotated[str, patterned(IDENTIFIER_PATTERN, "parameter name")], ParameterValue] = Field(
        default_factory=dict,
        examples=[{"alpha": 2}],
        max_length=MAX_PARAMETERS,
        description="Values for names the notebook's `parameters` cell declares. Their JSON may take at "
        "most `c.GpuEnvApp.max_parameters_bytes` (64 KiB by default).",
    )
    resources: Resources = Field(default_factory=Resources)
    queue: Annotated[str, patterned(QUEUE_PATTERN, "queue")] | None = Field(
        default=None, description="A queue (SLURM partition, Kueue LocalQueue)."
    )
    name: Annotated[str, line("name", max_length=MAX_NAME, min_length=1)] | None = Field(
        default=None, description="A label; the notebook's name if unset."
    )
    sweep: (
        dict[
            Annotated[str, patterned(IDENTIFIER_PATTERN, "parameter name")],
            Annotated[list[ParameterValue], Field(min_length=1, max_length=MAX_SWEEP_RUNS)],
        ]
        | None
    ) = Field(
        default=None,
        max_length=MAX_PARAMETERS,
        examples=[{"alpha": [0.1, 0.5], "lr": [0.1, 0.01]}],
        description="Run the notebook once per combination of these values (the cartesian product, in "
        "the order given); `parameters` go to every run (a name also swept here takes its swept values). "
        "At most `c.GpuEnvApp.max_sweep_runs` runs.",
    )
    sweep_runs: (
        Annotated[
            list[dict[Annotated[str, patterned(IDENTIFIER_PATTERN, "parameter name")], ParameterValue]],
            Field(min_length=1, max_length=MAX_SWEEP_RUNS),
        ]
        | None
    ) = Field(
        default=None,
        description="Run the notebook once per entry, with its values over `parameters`; instead of `sweep`.",
    )
    max_concurrent: Annotated[int, whole_number("max_concurrent", 1, MAX_SWEEP_RUNS)] | None = Field(
        default=None, description="With a sweep: how many runs at once at most (default: all it may)."
    )

    @model_validator(mode="after")
    def _one_sweep(self) -> JobRequest:
        if self.sweep is not None and self.sweep_runs is not None:
            raise ValueError("give either sweep (values per parameter) or sweep_runs (one entry per run)")
        if self.max_concurrent is not None and self.sweep is None and self.sweep_runs is None:
            raise ValueError("max_concurrent applies to a sweep; give sweep or sweep_runs with it")
        return self

    @model_validator(mode="after")
    def _one_runtime(self) -> JobRequest:
        chosen = [k for k in _RUNTIMES if getattr(self, k) is not None]
        if len(chosen) > 1:
            raise ValueError(
                f"choose at most one of kernel, environment and image (got {' and '.join(chosen)}); "
                "with none, the notebook's own kernel runs it"
            )
        return self


class RerunRequest(ApiModel):
    """`POST jobs/{job_id}/rerun`: the values to change; the others stay as they were."""

    parameters: dict[Annotated[str, patterned(IDENTIFIER_PATTERN, "parameter name")], ParameterValue] = Field(
        default_factory=dict, max_length=MAX_PARAMETERS, examples=[{"alpha": 0.5}]
    )


class JobProgress(ApiModel):
    cells_done: int = Field(default=0, ge=0, description="Code cells executed so far.")
    cells_total: int = Field(default=0, ge=0, description="Code cells in the notebook, parameters included.")


class JobGpuDevice(ApiModel):
    name: str
    uuid: str | None = None
    mig_profile: str | None = None
    memory_total_bytes: int | None = None


class JobGpuUsage(ApiModel):
    """How the job used the GPUs it could see, from the runner's samples (so far, while it runs)."""

    available: bool = Field(
        description="False when the job saw no GPU (or none could be read); `reason` says why."
    )
    reason: str | None = None
    devices: list[JobGpuDevice] = Field(default_factory=list)
    samples: int = 0
    interval_seconds: float | None = None
    mean_utilization_percent: float | None = Field(
        default=None, description="Mean over the samples; null where not measured (MIG slices: see `notes`)."
    )
    peak_utilization_percent: float | None = None
    peak_memory_bytes: int | None = None
    memory_total_bytes: int | None = None
    idle_fraction: float | None = Field(
        default=None, description="Share of samples with every device under 5 % utilization."
    )
    idle_seconds: float = Field(
        default=0.0, description="How long the GPU has been idle up to the last sample."
    )
    gpu_hours_allocated: float | None = None
    gpu_hours_used: float | None = Field(
        default=None, description="Allocated GPU-hours weighted by the mean utilization."
    )
    notes: list[str] = Field(default_factory=list)
    updated_at: float | None = None


class JobGpuSeries(ApiModel):
    """A job's GPU samples for a chart: ``[seconds since start, [utilization % or null per device],
    [memory used bytes per device]]`` per point."""

    job_id: str
    summary: JobGpuUsage | None = None
    devices: list[JobGpuDevice] = Field(default_factory=list)
    points: list[tuple[float, list[float | None], list[int | None]]] = Field(default_factory=list)


class Job(ApiModel):
    """A batch job: one run of a notebook snapshot."""

    id: str
    name: str
    backend: str
    state: JobState
    reason: str | None = Field(
        default=None, description="Machine-readable why for the state, e.g. `cell_error`."
    )
    message: str = Field(default="", description="Why the job is in its state, in words.")
    notebook_path: str = Field(description="The submitted notebook, relative to the server's root.")
    job_dir: str = Field(description="The job's folder: relative to the server's root when inside it.")
    input_path: str = Field(description="The snapshot that runs (inside job_dir).")
    output_path: str = Field(description="The executed notebook (inside job_dir), written cell by cell.")
    log_path: str
    parameters: dict[str, JsonValue] = Field(default_factory=dict)
    parameters_omitted: bool = Field(
        default=False,
        description="True in a listing whose job has parameters too large to list; `GET jobs/{job_id}` has them.",
    )
    resources: JobResources = Field(default_factory=JobResources)
    kernel: str | None = Field(default=None, description="The kernel that runs the notebook.")
    environment: str | None = None
    image: str | None = None
    queue: str | None = None
    created_at: float
    started_at: float | None = None
    finished_at: float | None = None
    progress: JobProgress = Field(default_factory=JobProgress)
    backend_job_id: str | None = Field(default=None, description="The backend's id: a pid, a SLURM job id.")
    pending_reason: str | None = Field(default=None, description="Why a queued job is not running yet.")
    queue_position: int | None = Field(
        default=None, ge=1, description="A queued job's place in `queue_name`: 1 is next; null when unknown."
    )
    queue_name: str | None = Field(
        default=None,
        description="The queue the position counts in: `local`, a SLURM partition, a Kueue LocalQueue.",
    )
    estimated_start: float | None = Field(
        default=None, description="When the scheduler expects it to start (Unix time), where it estimates it."
    )
    exit_code: int | None = None
    gpu: JobGpuUsage | None = Field(
        default=None, description="GPU use measured by the runner; null until its first sample."
    )
    group_id: str | None = Field(default=None, description="The sweep this job is a run of, if any.")
    group_index: int | None = Field(default=None, description="Its place in the sweep, from 0.")


class JobGroup(ApiModel):
    """A sweep: one notebook run once per set of parameter values, as one submission."""

    id: str
    name: str
    backend: str
    notebook_path: str
    size: int = Field(description="How many runs.")
    max_concurrent: int
    varied: list[str] = Field(description="The parameters whose values differ between runs.")
    parameters: dict[str, JsonValue] = Field(default_factory=dict, description="The values every run has.")
    counts: dict[str, int] = Field(description="Runs per state.")
    state: JobState = Field(
        description="`running` while a run is queued or running and another has started; `queued` while "
        "none has; once all have ended, `succeeded` if all did, `cancelled` if any was cancelled and none "
        "failed, else `failed`."
    )
    created_at: float
    finished_at: float | None = None
    backend_job_id: str | None = Field(
        default=None,
        description="The backend's one object for the whole sweep: a SLURM array, an Indexed Job.",
    )
    gpu_idle_runs: list[str] = Field(
        default_factory=list,
        description="Running runs whose GPU has been idle at least `c.GpuEnvApp.job_gpu_idle_seconds`.",
    )


class JobGroupList(ApiModel):
    items: list[JobGroup]
    total: int
    offset: int
    limit: int
    next_offset: int | None = None


class SweepRow(ApiModel):
    """One run of a sweep in its results table."""

    index: int
    job_id: str
    state: JobState
    duration_seconds: float | None = Field(default=None, description="From its start to its end (or now).")
    parameters: dict[str, JsonValue] = Field(description="The values of the sweep's varied parameters.")
    values: dict[str, JsonValue] = Field(
        description="What the run recorded: a `results`-tagged cell's dict, and scrapbook's glued values."
    )
    output_path: str


class SweepResults(ApiModel):
    """A sweep's runs side by side: parameters, recorded values, state and duration."""

    group: JobGroup
    parameter_columns: list[str]
    value_columns: list[str] = Field(description="Every name any run recorded, in first-seen order.")
    rows: list[SweepRow]


class JobList(ApiModel):
    items: list[Job]
    total: int = Field(description="Jobs matching the filter, over all pages.")
    offset: int
    limit: int
    next_offset: int | None = Field(
        default=None, description="The offset of the next page; null on the last."
    )


class LogChunk(ApiModel):
    """A piece of a job's log from a byte offset; ask again from `next_offset` to follow it."""

    offset: int
    next_offset: int
    text: str
    eof: bool = Field(description="True when the job has ended and the whole log has been read.")


class ResourceLimits(ApiModel):
    max_cpus: int | None = None
    max_memory_bytes: int | None = None
    max_gpus: int | None = None
    max_time_limit_seconds: int | None = None


class BackendInfo(ApiModel):
    """What a backend offers, so the submit dialog offers only what can run."""

    name: str
    kind: str = Field(description="`local`, `slurm` or `kubernetes`.")
    queues: list[str] = Field(default_factory=list)
    default_queue: str | None = None
    limits: ResourceLimits = Field(default_factory=ResourceLimits)
    mig_profiles: list[str] = Field(default_factory=list)
    supports_images: bool = False
    supports_gpus: bool = False
    enforced: list[str] = Field(
        default_factory=list, description="Resources this backend enforces; the others are only recorded."
    )
    notes: list[str] = Field(default_factory=list, description="Sentences for the user about this backend.")


class BackendList(ApiModel):
    backends: list[BackendInfo]
    gpu_idle_seconds: float = Field(
        default=600.0,
        description="A running job whose GPU has been idle this long gets a warning "
        "(`c.GpuEnvApp.job_gpu_idle_seconds`).",
    )


class BackendUsage(ApiModel):
    gpu_hours: float = Field(default=0.0, description="GPU-hours allocated (a MIG slice counts its share).")
    cpu_hours: float = 0.0
    gpu_hours_used: float = Field(
        default=0.0,
        description="GPU-hours used: allocated hours weighted by each job's measured mean utilization.",
    )
    gpu_hours_measured: float = Field(
        default=0.0,
        description="The allocated GPU-hours whose utilization was measured (not MIG slices, not jobs "
        "from before sampling): efficiency is `gpu_hours_used / gpu_hours_measured`.",
    )
    jobs: dict[str, int] = Field(default_factory=dict, description="Jobs created in the period, by state.")


class UsageWeek(ApiModel):
    week_start: float = Field(description="Monday 00:00 (server's local time) of the week, Unix time.")
    backends: dict[str, BackendUsage] = Field(default_factory=dict)
    total: BackendUsage = Field(default_factory=lambda: BackendUsage())


class UsageWeeks(ApiModel):
    """GPU-hours allocated and used per week, oldest first (the current week so far last)."""

    weeks: list[UsageWeek]


class UsageReport(ApiModel):
    """GPU-hours, CPU-hours and job counts from the job records over a period."""

    period_start: float
    period_end: float
    backends: dict[str, BackendUsage] = Field(default_factory=dict)
    total: BackendUsage = Field(default_factory=BackendUsage)
