"""How a batch job used its GPUs, as its runner measured it: the summary (memory, utilization, GPU-hours,
energy) and the series for a chart; and what a run cost at the site's prices.

The runner writes the summary in the job's folder, where the job's own code can write too: every value is
bounded here, and the tracker caps the GPU-hours and the energy at what the record's times allow. Carbon
and cost are never the runner's: the server computes them from the energy and the site's options when it
answers (`c.GpuEnvApp.carbon_intensity`, `pue`, `gpu_hour_price`, `energy_price`, `currency`).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field, model_validator

from ..common import ApiModel

_BYTES = 2**50  # a PiB: more GPU memory than any job sees
_HOURS = 1e7  # GPU-hours beyond any job's
JOULES = 1e15  # about 280 GWh: more than any job's GPUs draw (the tracker's bound is far tighter)

# How a job's GPU energy was found: NVML's energy counter read at its start, samples and end; power draw
# integrated over the samples where a GPU has no counter; a MIG slice's share of its whole GPU's energy.
EnergySource = Literal["counter", "power samples", "share of a whole GPU"]
ENERGY_SOURCES: tuple[EnergySource, ...] = ("counter", "power samples", "share of a whole GPU")


class JobGpuDevice(ApiModel):
    name: str = Field(max_length=200)
    uuid: str | None = Field(default=None, max_length=200)
    mig_profile: str | None = Field(default=None, max_length=64)
    memory_total_bytes: int | None = Field(default=None, ge=0, le=_BYTES)


class Cost(ApiModel):
    """What GPU time and energy cost at the site's prices: ``gpu_time`` (GPU-hours allocated ×
    `c.GpuEnvApp.gpu_hour_price`) plus ``energy`` (kWh × `pue` × `energy_price`)."""

    amount: float = Field(ge=0, description="The parts known, summed.")
    currency: str | None = Field(
        default=None, description="`c.GpuEnvApp.currency` (EUR, USD...); null where the site named none."
    )
    gpu_time: float | None = Field(
        default=None,
        ge=0,
        description="GPU-hours allocated at the GPU-hour price; null where no price is set.",
    )
    energy: float | None = Field(
        default=None,
        ge=0,
        description="The energy (times the PUE) at the energy price; null where no price is set or no "
        "energy was measured.",
    )
    note: str | None = Field(default=None, description="What the amount leaves out, when a part is unknown.")


class JobGpuUsage(ApiModel):
    """How the job used the GPUs it could see, from the runner's samples (so far, while it runs).

    The runner writes it in the job's folder, where the job's own code can write too: every value is
    bounded, and the GPU-hours and the energy are capped by the tracker at what the record's times
    allow."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    available: bool = Field(
        description="False when the job saw no GPU (or none could be read); `reason` says why."
    )
    reason: str | None = Field(default=None, max_length=2000)
    devices: list[JobGpuDevice] = Field(default_factory=list, max_length=64)
    samples: int = Field(default=0, ge=0)
    interval_seconds: float | None = Field(default=None, ge=0, le=86400)
    mean_utilization_percent: float | None = Field(
        default=None,
        ge=0,
        le=100,
        description="Mean over the samples; null where not measured (MIG slices: see `notes`).",
    )
    peak_utilization_percent: float | None = Field(default=None, ge=0, le=100)
    peak_memory_bytes: int | None = Field(default=None, ge=0, le=_BYTES)
    memory_total_bytes: int | None = Field(default=None, ge=0, le=_BYTES)
    idle_fraction: float | None = Field(
        default=None, ge=0, le=1, description="Share of samples with every device under 5 % utilization."
    )
    idle_seconds: float = Field(
        default=0.0, ge=0, description="How long the GPU has been idle up to the last sample."
    )
    gpu_hours_allocated: float | None = Field(default=None, ge=0, le=_HOURS)
    gpu_hours_used: float | None = Field(
        default=None, ge=0, le=_HOURS, description="Allocated GPU-hours weighted by the mean utilization."
    )
    energy_joules: float | None = Field(
        default=None,
        ge=0,
        le=JOULES,
        description="Energy the job's GPUs drew up to the last sample (summed over a resumed job's "
        "attempts); null where not measured, `energy_note` saying why.",
    )
    energy_source: EnergySource | None = Field(
        default=None,
        description="`counter`: NVML's energy counter of each GPU held, read at the job's start, samples "
        "and end; `power samples`: a GPU without the counter, its power draw integrated over the samples; "
        "`share of a whole GPU`: a MIG slice, an estimate: its GPU's energy times the slice's share of the "
        "GPU's compute.",
    )
    energy_note: str | None = Field(
        default=None, max_length=2000, description="Why there is no energy, or what an estimate rests on."
    )
    co2e_grams: float | None = Field(
        default=None,
        ge=0,
        description="Grams of CO2-equivalent: kWh × `c.GpuEnvApp.pue` × `c.GpuEnvApp.carbon_intensity`, "
        "computed by the server when it answers; null where the site set no carbon intensity or no energy "
        "was measured.",
    )
    cost: Cost | None = Field(
        default=None,
        description="At the site's prices, computed by the server when it answers; null where the site set "
        "none.",
    )
    notes: list[Annotated[str, Field(max_length=2000)]] = Field(default_factory=list, max_length=20)
    updated_at: float | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _source_with_energy(self) -> JobGpuUsage:
        if self.energy_joules is None:
            self.energy_source = None  # a source of nothing is nothing
        return self


class JobGpuSeries(ApiModel):
    """A job's GPU samples for a chart: ``[seconds since start, [utilization % or null per device],
    [memory used bytes per device]]`` per point."""

    job_id: str
    summary: JobGpuUsage | None = None
    devices: list[JobGpuDevice] = Field(default_factory=list)
    points: list[tuple[float, list[float | None], list[int | None]]] = Field(default_factory=list)
