"""Right-size advice: the smallest GPU or MIG slice a backend offers that fits what a notebook's earlier
runs (and the kernel open on it) measured, and where such a job is likely to start soonest."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..common import ApiModel
from ..jobs import JobState
from .jobuse import JOULES, EnergySource

_BYTES = 2**50


class MeasuredRun(ApiModel):
    """One earlier run of the notebook, as the runner measured it."""

    job_id: str
    backend: str
    state: JobState
    created_at: float
    device: str | None = Field(default=None, description="The GPU (or MIG slice) it ran on, by name.")
    gpus: float = Field(default=0, description="GPUs it was given (a MIG slice counts its share).")
    mig_profile: str | None = None
    peak_memory_bytes: int | None = Field(default=None, ge=0, le=_BYTES)
    memory_total_bytes: int | None = Field(default=None, ge=0, le=_BYTES)
    mean_utilization_percent: float | None = Field(default=None, ge=0, le=100)
    peak_utilization_percent: float | None = Field(default=None, ge=0, le=100)
    energy_joules: float | None = Field(default=None, ge=0, le=JOULES, description="What its GPUs drew.")
    energy_source: EnergySource | None = None


class EnergyEstimate(ApiModel):
    """What a run of the notebook is likely to draw: the median of its earlier succeeded runs' energy."""

    joules: float = Field(ge=0, le=JOULES)
    runs: int = Field(ge=1, description="How many succeeded runs measured it.")
    source: EnergySource | None = Field(
        default=None,
        description="How the runs' energy was found; of several, the least exact (`share of a whole GPU`: "
        "runs on MIG slices, whose energy is itself an estimate).",
    )
    co2e_grams: float | None = Field(
        default=None, description="At the site's carbon intensity and PUE; null where the site set none."
    )


class KernelUse(ApiModel):
    """GPU memory an interactive kernel holds now."""

    kernel_id: str
    memory_bytes: int = Field(ge=0, le=_BYTES)
    device: str | None = None
    memory_total_bytes: int | None = Field(default=None, ge=0, le=_BYTES)
    whole_gpu: bool = Field(description="True when the kernel sees a whole GPU, not a MIG slice.")


class SuggestedResources(ApiModel):
    """What to ask for: one of a MIG profile or a number of whole GPUs."""

    mig_profile: str | None = None
    gpus: int | None = Field(default=None, ge=0, description="Whole GPUs; 0: no GPU at all.")
    memory_bytes: int | None = Field(
        default=None, ge=0, le=_BYTES, description="GPU memory the suggestion gives."
    )


class StartOption(ApiModel):
    """Where a job with the suggested resources could run, and how soon it is likely to start."""

    backend: str
    queue: str | None = None
    free: int | None = Field(
        default=None, description="Free GPUs or slices of the suggested kind now; null where not known."
    )
    queued_ahead: int | None = Field(
        default=None, description="Jobs of this user's waiting in that queue now; null where not known."
    )
    sentence: str


class GpuAdvice(ApiModel):
    """`GET jobs/advice`: the smallest GPU or MIG slice that fits, why, and where it starts soonest."""

    notebook_path: str | None = None
    backend: str
    based_on: Literal["runs", "kernel", "runs_and_kernel", "nothing"] = Field(
        description="What was measured: the notebook's earlier runs, the kernel open on it, both, or nothing."
    )
    runs: list[MeasuredRun] = Field(default_factory=list, description="The runs used, newest first.")
    kernel: KernelUse | None = None
    peak_memory_bytes: int | None = Field(
        default=None, ge=0, le=_BYTES, description="The most GPU memory any of them used."
    )
    peak_utilization_percent: float | None = Field(default=None, ge=0, le=100)
    headroom: float = Field(description="The share added over the peak before choosing (0.2 is 20 %).")
    suggestion: SuggestedResources | None = Field(
        default=None, description="What to ask for; null when nothing was measured or nothing offered fits."
    )
    current: SuggestedResources | None = Field(
        default=None, description="What the runs (or the kernel) were given, when the suggestion differs."
    )
    idle_percent: float | None = Field(
        default=None,
        ge=0,
        le=100,
        description="How much of a whole GPU would sit idle at the measured use (100 - mean utilization).",
    )
    energy: EnergyEstimate | None = Field(
        default=None,
        description="The energy a run is likely to take, from the notebook's earlier succeeded runs (as "
        "they ran: a smaller slice draws its own share); null where none measured it.",
    )
    sentence: str = Field(
        description="The advice in one line, for the dialog or the panel; it ends with the likely energy "
        "where `energy` has it."
    )
    soonest: list[StartOption] = Field(
        default_factory=list,
        description="The backends and queues that could run the suggestion, likely soonest first.",
    )
