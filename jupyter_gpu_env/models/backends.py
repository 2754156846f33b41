"""Batch backends as the API shows them (queues, limits, MIG profiles) and the usage they account."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .common import ApiModel
from .gpu.jobuse import Cost


class ResourceLimits(ApiModel):
    max_cpus: int | None = None
    max_memory_bytes: int | None = None
    max_gpus: int | None = None
    max_time_limit_seconds: int | None = None


# A running job's idle GPU: after how many seconds it counts as idle, what then happens, the grace.
IdleRule = tuple[float, Literal["warn", "cancel"], float]
NORMAL_WORDS = "Runs to its end once started; never stopped for other work."
OPPORTUNISTIC_WORDS = (
    "Runs on spare GPUs and may be stopped when others need them; it is then requeued and resumes "
    "(save your state in checkpoint_dir, and load it when resumed is true)."
)


class PriorityOffer(ApiModel):
    """A priority a backend offers, and what it means there, in words."""

    name: Literal["normal", "opportunistic"]
    description: str = Field(description="What a job sent with it may expect, for the user.")


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
    priorities: list[PriorityOffer] = Field(
        default_factory=lambda: [PriorityOffer(name="normal", description=NORMAL_WORDS)],
        description="The priorities a job may be sent with here: always `normal`, and `opportunistic` "
        "where the site configured it.",
    )


class BackendList(ApiModel):
    backends: list[BackendInfo]
    gpu_idle_seconds: float = Field(
        default=600.0,
        description="A running job whose GPU has been idle this long gets a warning "
        "(`c.GpuEnvApp.job_gpu_idle_seconds`).",
    )
    gpu_idle_action: Literal["warn", "cancel"] = Field(
        default="warn",
        description="What then happens (`c.GpuEnvApp.job_gpu_idle_action`): a warning only, or a warning "
        "and, `gpu_idle_grace_seconds` later, a cancel unless the GPU works again.",
    )
    gpu_idle_grace_seconds: float = Field(default=300.0, description="`c.GpuEnvApp.job_gpu_idle_grace`.")


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
    gpu_energy_kwh: float = Field(
        default=0.0,
        description="kWh the GPUs of the jobs that measured their energy drew in the period (a job's energy "
        "spread evenly over its run time); it covers `gpu_hours_energy_measured`, not all `gpu_hours`.",
    )
    gpu_hours_energy_measured: float = Field(
        default=0.0, description="The allocated GPU-hours whose energy was measured (not Dask workers)."
    )
    co2e_grams: float | None = Field(
        default=None,
        description="`gpu_energy_kwh` × `c.GpuEnvApp.pue` × `c.GpuEnvApp.carbon_intensity`; null where the "
        "site set no carbon intensity.",
    )
    cost: Cost | None = Field(
        default=None,
        description="`gpu_hours` at the GPU-hour price plus the measured energy at the energy price; null "
        "where the site set no price.",
    )
    jobs: dict[str, int] = Field(default_factory=dict, description="Jobs created in the period, by state.")


class UsageWeek(ApiModel):
    week_start: float = Field(description="Monday 00:00 (server's local time) of the week, Unix time.")
    backends: dict[str, BackendUsage] = Field(default_factory=dict)
    total: BackendUsage = Field(default_factory=lambda: BackendUsage())


class UsageWeeks(ApiModel):
    """GPU-hours allocated and used per week, oldest first (the current week so far last)."""

    weeks: list[UsageWeek]


class ClusterUsage(ApiModel):
    """A Dask cluster's workers over a period."""

    backend: str
    worker_hours: float = 0.0
    gpu_hours: float = Field(default=0.0, description="GPU-hours allocated to its workers.")
    cpu_hours: float = 0.0


class UsageReport(ApiModel):
    """GPU-hours, CPU-hours and job counts from the job records over a period; Dask clusters' workers
    count in their backend's hours and are listed by cluster name."""

    period_start: float
    period_end: float
    backends: dict[str, BackendUsage] = Field(default_factory=dict)
    total: BackendUsage = Field(default_factory=BackendUsage)
    dask_clusters: dict[str, ClusterUsage] = Field(
        default_factory=dict, description="Worker- and GPU-hours of each Dask cluster, by its name."
    )
