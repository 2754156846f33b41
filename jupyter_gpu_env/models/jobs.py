"""Batch jobs: what a submission asks for, what a job record holds, listings, log chunks and usage."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, JsonValue, WithJsonSchema, field_validator, model_validator

from .common import ApiModel

JobState = Literal["queued", "running", "succeeded", "failed", "cancelled"]
JOB_STATES: tuple[JobState, ...] = ("queued", "running", "succeeded", "failed", "cancelled")
TERMINAL_STATES: frozenset[str] = frozenset({"succeeded", "failed", "cancelled"})
ACTIVE_STATES: frozenset[str] = frozenset({"queued", "running"})

MAX_CPUS = 1024
MAX_GPUS = 64
MIN_MEMORY = 1 << 20  # 1 MiB: below that no Python kernel even starts
MAX_MEMORY = 16 << 40  # 16 TiB
MAX_TIME_LIMIT = 30 * 24 * 3600  # 30 days, in seconds

# `1g.10gb`, `3g.40gb`, `1g.10gb+me` (NVIDIA's media-extension profiles), `1c.3g.40gb` is not offered here.
MIG_PROFILE_RE = re.compile(r"^([1-7])g\.(\d{1,3})gb(\+me)?$")
_MEMORY_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGTP])(?:I?B)?\s*$", re.IGNORECASE)
_UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50}
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def parse_memory(value: int | str) -> int:
    """Bytes from an integer (bytes) or a string with a binary unit: ``512M``, ``4G``, ``4GiB``, ``1.5T``.

    Units are powers of 1024, as SLURM reads them. A string without a unit is refused: SLURM would
    read it as megabytes and Kubernetes as bytes, and guessing wrong costs a job.
    """
    if isinstance(value, bool):
        raise ValueError("memory must be a number of bytes or a string such as '4G'")
    if isinstance(value, int | float):
        if value != int(value):
            raise ValueError("memory in bytes must be a whole number")
        nbytes = int(value)
    elif isinstance(value, str):
        m = _MEMORY_RE.match(value)
        if m is None:
            raise ValueError(f"memory '{value}' is not understood; write it like '512M', '4G' or '1T'")
        nbytes = int(float(m.group(1)) * _UNITS[m.group(2).upper()])
    else:
        raise ValueError("memory must be a number of bytes or a string such as '4G'")
    if nbytes < MIN_MEMORY:
        raise ValueError("memory must be at least 1M")
    if nbytes > MAX_MEMORY:
        raise ValueError("memory must be at most 16T")
    return nbytes


def parse_time_limit(value: int | str) -> int:
    """Seconds from SLURM's forms: minutes as a number, ``MM:SS``, ``HH:MM:SS``, ``D-HH``, ``D-HH:MM[:SS]``."""
    if isinstance(value, bool):
        raise ValueError("time_limit must be minutes or a string such as '1:00:00'")
    if isinstance(value, int | float):
        if value != int(value):
            raise ValueError("time_limit in minutes must be a whole number")
        seconds = int(value) * 60
    elif isinstance(value, str):
        seconds = _parse_slurm_time(value.strip())
    else:
        raise ValueError("time_limit must be minutes or a string such as '1:00:00'")
    if seconds <= 0:
        raise ValueError("time_limit must be positive")
    if seconds > MAX_TIME_LIMIT:
        raise ValueError("time_limit must be at most 30 days")
    return seconds


def _parse_slurm_time(text: str) -> int:
    bad = ValueError(
        f"time_limit '{text}' is not understood; write minutes ('90'), 'HH:MM:SS' ('1:30:00') or 'D-HH:MM:SS'"
    )
    days = 0
    rest = text
    if "-" in text:
        d, rest = text.split("-", 1)
        if not d.isdigit():
            raise bad
        days = int(d)
    parts = rest.split(":")
    if not parts or len(parts) > 3 or not all(p.isdigit() for p in parts):
        raise bad
    nums = [int(p) for p in parts]
    if "-" in text:  # D-HH, D-HH:MM, D-HH:MM:SS
        h, m, s = nums + [0] * (3 - len(nums))
        if h >= 24:
            raise bad
    elif len(nums) == 1:  # minutes
        h, m, s = 0, nums[0], 0
    elif len(nums) == 2:  # MM:SS
        h, (m, s) = 0, nums
    else:
        h, m, s = nums
    # Minutes alone may exceed 59 ('90'); after hours or days they may not.
    if s >= 60 or (m >= 60 and (h or days or len(nums) == 3)):
        raise bad
    return ((days * 24 + h) * 60 + m) * 60 + s


def format_time_limit(seconds: int) -> str:
    """SLURM's ``D-HH:MM:SS`` (or ``HH:MM:SS`` under a day), for sbatch and for people."""
    days, rem = divmod(int(seconds), 86400)
    h, rem = divmod(rem, 3600)
    m, s = divmod(rem, 60)
    return f"{days}-{h:02d}:{m:02d}:{s:02d}" if days else f"{h:d}:{m:02d}:{s:02d}"


def mig_fraction(profile: str) -> float:
    """The share of a whole GPU a MIG profile holds, by compute slices out of seven (A100/H100)."""
    m = MIG_PROFILE_RE.match(profile)
    return int(m.group(1)) / 7 if m else 0.0


def _check_memory(value: Any) -> Any:
    if value is not None:
        parse_memory(value)
    return value


def _check_time_limit(value: Any) -> Any:
    if value is not None:
        parse_time_limit(value)
    return value


MemoryInput = Annotated[
    int | str | None,
    BeforeValidator(_check_memory),
    WithJsonSchema(
        {
            "anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}],
            "description": "Bytes, or a string with a binary unit: '512M', '4G', '1T'. At most 16T.",
        }
    ),
]
TimeLimitInput = Annotated[
    int | str | None,
    BeforeValidator(_check_time_limit),
    WithJsonSchema(
        {
            "anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}],
            "description": "Minutes, or SLURM's 'HH:MM:SS' / 'D-HH:MM:SS'. At most 30 days.",
        }
    ),
]


class Resources(ApiModel):
    """Resources a submission asks for, in the forms people write them. Unset means the backend's default."""

    cpus: int | None = Field(default=None, description=f"CPU cores, 1..{MAX_CPUS}.")
    memory: MemoryInput = None
    gpus: int | None = Field(default=None, description=f"Whole GPUs, 0..{MAX_GPUS}. Not with mig_profile.")
    mig_profile: str | None = Field(
        default=None, description="A MIG slice such as `1g.10gb` or `3g.40gb`, instead of whole GPUs."
    )
    time_limit: TimeLimitInput = None

    @field_validator("cpus", mode="before")
    @classmethod
    def _cpus(cls, v: Any) -> Any:
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= MAX_CPUS):
            raise ValueError(f"cpus must be a whole number from 1 to {MAX_CPUS}")
        return v

    @field_validator("gpus", mode="before")
    @classmethod
    def _gpus(cls, v: Any) -> Any:
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_GPUS):
            raise ValueError(f"gpus must be a whole number from 0 to {MAX_GPUS}")
        return v

    @field_validator("mig_profile")
    @classmethod
    def _mig(cls, v: str | None) -> str | None:
        if v is not None and not MIG_PROFILE_RE.match(v):
            raise ValueError(f"mig_profile '{v}' is not a MIG profile; write it like '1g.10gb' or '3g.40gb'")
        return v

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


class JobRequest(ApiModel):
    """`POST jobs`: run a saved notebook as a batch job."""

    notebook_path: str = Field(min_length=1, description="The notebook, relative to the server's root.")
    backend: str = Field(default="local", description="A backend from `GET backends`.")
    kernel: str | None = Field(default=None, description="A kernel name (`python3`, ...).")
    environment: str | None = Field(default=None, description="A conda environment to run in.")
    image: str | None = Field(default=None, description="A packed image (squashfs) to run in.")
    parameters: dict[str, JsonValue] = Field(
        default_factory=dict, description="Values for names the notebook's `parameters` cell declares."
    )
    resources: Resources = Field(default_factory=Resources)
    queue: str | None = Field(default=None, description="A queue (SLURM partition, Kueue LocalQueue).")
    name: str | None = Field(
        default=None, max_length=200, description="A label; the notebook's name if unset."
    )

    @field_validator("backend")
    @classmethod
    def _backend(cls, v: str) -> str:
        if not _NAME_RE.match(v):
            raise ValueError(f"backend '{v}' is not a valid backend name")
        return v

    @model_validator(mode="after")
    def _one_runtime(self) -> JobRequest:
        chosen = [k for k in ("kernel", "environment", "image") if getattr(self, k)]
        if len(chosen) > 1:
            raise ValueError(
                f"choose at most one of kernel, environment and image (got {' and '.join(chosen)}); "
                "with none, the notebook's own kernel runs it"
            )
        return self


class JobProgress(ApiModel):
    cells_done: int = Field(default=0, ge=0, description="Code cells executed so far.")
    cells_total: int = Field(default=0, ge=0, description="Code cells in the notebook, parameters included.")


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
    exit_code: int | None = None


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


class BackendUsage(ApiModel):
    gpu_hours: float = 0.0
    cpu_hours: float = 0.0
    jobs: dict[str, int] = Field(default_factory=dict, description="Jobs created in the period, by state.")


class UsageReport(ApiModel):
    """GPU-hours, CPU-hours and job counts from the job records over a period."""

    period_start: float
    period_end: float
    backends: dict[str, BackendUsage] = Field(default_factory=dict)
    total: BackendUsage = Field(default_factory=BackendUsage)
