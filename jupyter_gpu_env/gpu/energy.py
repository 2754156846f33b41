"""GPU energy: what a job's runner measures of it, and what it comes to at the site's numbers. Pure: readings
in, figures out (the readings come from :meth:`.sources.nvml.NvmlReader.read_energy`).

**Measured.** Each whole GPU a job holds has NVML's total energy counter (mJ since the driver loaded,
Volta and later), read at the job's start, at every sample and at its end: the job's energy is the sum of
the differences. A counter that goes down restarted (the driver reloaded, the GPU was reset): that interval
counts from the restart. A GPU without the counter has its power draw (mW) integrated over the samples
(trapezoids), which misses what happens between two samples, and says so.

**Shared.** NVML gives a MIG slice neither counter nor power: the whole GPU's energy is shared out by the
slice's share of the GPU's compute (its compute slices out of seven, as CEEMS does), an estimate that puts
the GPU's idle draw and its other slices' work partly on this job, and says so.

**Priced.** Carbon and cost are the site's numbers (:class:`SitePrices`, from ``c.GpuEnvApp.carbon_intensity``,
``pue``, ``gpu_hour_price``, ``energy_price`` and ``currency``), applied by the server when it answers:
CO2e = kWh × PUE × carbon intensity; cost = GPU-hours allocated × GPU-hour price + kWh × PUE × energy
price. Nothing is shown where the site said nothing.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ..models.gpu import GpuDevice
from ..models.gpu.jobuse import Cost, EnergySource, JobGpuUsage
from ..models.jobs import Job
from .sources.reading import PowerReading
from .visibility import mark_visible

JOULES_PER_KWH = 3.6e6
# The most one device a job holds is believed to draw, in watts: above any GPU's board power today (an
# H100 SXM's limit is 700 W, a B200's 1,000 W), so that the cap catches figures no GPU could reach.
WATTS_BOUND = 1500.0
_COMPUTE_SLICES = re.compile(r"^(?:([1-7])c\.)?([1-7])g\.\d+gb(?:\+me)?$")
SLICES_PER_GPU = 7


EnergyReader = Callable[[], Mapping[str, PowerReading]]  # by the whole GPU's UUID


def compute_share(profile: str | None) -> float | None:
    """A MIG profile's share of its GPU's compute: its compute slices out of seven (``3g.40gb``: 3/7; a
    compute instance ``1c.3g.71gb``: 1/7); None for a name that is not a MIG profile."""
    m = _COMPUTE_SLICES.fullmatch(profile or "")
    if m is None:
        return None
    return int(m[1] or m[2]) / SLICES_PER_GPU


def held_shares(devices: Sequence[GpuDevice], env: Mapping[str, str] | None) -> dict[str, float]:
    """The whole GPUs whose energy a job's devices draw on, by UUID, each with the job's share of it: 1 for
    a whole GPU, the compute shares of its slices for a GPU in MIG mode (0 where a slice's profile is
    unknown: nothing is invented)."""
    shares: dict[str, float] = {}
    for gpu in mark_visible(list(devices), env):
        if not gpu.uuid:
            continue
        if gpu.mig_devices:
            held = [compute_share(m.profile) or 0.0 for m in gpu.mig_devices if m.visible]
            if held:
                shares[gpu.uuid] = min(1.0, sum(held))
        elif gpu.visible:
            shares[gpu.uuid] = 1.0
    return shares


@dataclass
class _Meter:
    """One whole GPU's energy so far, by its counter or by its power samples."""

    share: float
    mode: Literal["counter", "power"] | None = None
    joules: float = 0.0
    last_mj: int | None = None
    last_power: tuple[float, float] | None = None  # (time, watts)
    restarts: int = 0
    answered: bool = False  # NVML gave this GPU a reading at all

    def add(self, t: float, r: PowerReading) -> None:
        self.answered = True
        if self.mode is None:
            self.mode = "counter" if r.energy_mj is not None else "power" if r.power_mw is not None else None
        if self.mode == "counter" and r.energy_mj is not None:
            if self.last_mj is not None:
                step = r.energy_mj - self.last_mj
                if step < 0:  # the counter restarted from zero between the two reads
                    self.restarts += 1
                    step = r.energy_mj
                self.joules += step / 1000
            self.last_mj = r.energy_mj
        elif self.mode == "power" and r.power_mw is not None:
            watts = r.power_mw / 1000
            if self.last_power is not None and t > self.last_power[0]:
                self.joules += (self.last_power[1] + watts) / 2 * (t - self.last_power[0])
            self.last_power = (t, watts)


@dataclass
class EnergyMeter:
    """A job's GPU energy: :meth:`add` each reading (its start, samples and end), :meth:`summary` any time."""

    shares: Mapping[str, float]
    interval: float = 5.0
    unread: str | None = None  # why nothing could be read, where the caller knows (NVML not loaded)
    meters: dict[str, _Meter] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.meters = {uuid: _Meter(share) for uuid, share in self.shares.items()}

    def add(self, t: float, readings: Mapping[str, PowerReading]) -> None:
        for uuid, meter in self.meters.items():
            reading = readings.get(uuid)
            if reading is not None:
                meter.add(t, reading)

    def summary(self) -> dict[str, object]:
        """``energy_joules``, ``energy_source`` and ``energy_note``, as the job's GPU summary has them."""
        if not self.meters:
            return _none("No GPU energy to measure: the job holds no GPU whose energy NVML reports.")
        if any(m.share <= 0 for m in self.meters.values()):
            return _none("GPU energy is not measured: the MIG slice's profile, and so its share, is unknown.")
        unknown = [m for m in self.meters.values() if m.mode is None]
        if unknown:
            which = "this GPU" if len(self.meters) == 1 else f"{len(unknown)} of the {len(self.meters)} GPUs"
            if self.unread:
                why = self.unread
            elif any(m.answered for m in unknown):
                why = f"NVML reports neither an energy counter nor a power draw for {which}"
            else:
                why = (
                    f"NVML gave no energy reading for {which} (it could not be loaded, or stopped answering)"
                )
            return _none(f"GPU energy is not measured: {why}.")
        joules = sum(m.joules * m.share for m in self.meters.values())
        shared = any(m.share < 1 for m in self.meters.values())
        sampled = any(m.mode == "power" for m in self.meters.values())
        source: EnergySource = "share of a whole GPU" if shared else "power samples" if sampled else "counter"
        notes = []
        if shared:
            how = "integrated from its power draw" if sampled else "from its energy counter"
            shares = ", ".join(f"{m.share * SLICES_PER_GPU:g}/7" for m in self.meters.values() if m.share < 1)
            notes.append(
                f"An estimate: the whole GPU's energy ({how}) times this job's share of its compute "
                f"({shares}), as CEEMS shares it; the GPU's idle draw and its other slices' work count in "
                "that whole."
            )
        elif sampled:
            notes.append(
                f"No energy counter on this GPU (NVML has one from Volta on): its power draw, read every "
                f"{self.interval:g} s, integrated; peaks between two reads are missed."
            )
        restarts = sum(m.restarts for m in self.meters.values())
        if restarts:
            notes.append(
                f"The GPU's energy counter restarted {_times(restarts)} during the job (its driver reloaded "
                "or it was reset): the interval of a restart counts from the restart only."
            )
        return {
            "energy_joules": round(joules, 3),
            "energy_source": source,
            "energy_note": " ".join(notes) or None,
        }


def _none(note: str) -> dict[str, object]:
    return {"energy_joules": None, "energy_source": None, "energy_note": note}


def _times(n: int) -> str:
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


def kwh(joules: float) -> float:
    return joules / JOULES_PER_KWH


def most_joules(devices: int, seconds: float) -> float:
    """What ``devices`` could draw in ``seconds`` at most: the cap on a figure a job's folder claims."""
    return WATTS_BOUND * max(1, devices) * max(0.0, seconds)


def believable(joules: float | None) -> bool:
    return joules is not None and math.isfinite(joules) and joules >= 0


@dataclass(frozen=True)
class SitePrices:
    """The site's carbon intensity (g CO2e per kWh), PUE, prices and currency; None where it set none."""

    carbon_intensity: float | None = None
    pue: float = 1.0
    gpu_hour_price: float | None = None
    energy_price: float | None = None  # per kWh
    currency: str | None = None

    def co2e_grams(self, joules: float | None) -> float | None:
        """kWh × PUE × carbon intensity; None without a carbon intensity or an energy."""
        if self.carbon_intensity is None or not believable(joules):
            return None
        assert joules is not None
        return round(kwh(joules) * self.pue * self.carbon_intensity, 3)

    def cost(self, gpu_hours: float | None, joules: float | None) -> Cost | None:
        """GPU-hours × GPU-hour price + kWh × PUE × energy price, each part where its price is set and its
        figure known; None where the site set no price, or neither figure is known."""
        if self.gpu_hour_price is None and self.energy_price is None:
            return None
        time_part = (
            None if self.gpu_hour_price is None or gpu_hours is None else gpu_hours * self.gpu_hour_price
        )
        energy_part = (
            None
            if self.energy_price is None or not believable(joules)
            else kwh(joules or 0.0) * self.pue * self.energy_price
        )
        if time_part is None and energy_part is None:
            return None
        note = None
        if self.energy_price is not None and energy_part is None:
            note = "No energy was measured: the amount is the GPU time's only."
        elif self.gpu_hour_price is not None and time_part is None:
            note = "No GPU-hours were recorded: the amount is the energy's only."
        return Cost(
            amount=round((time_part or 0.0) + (energy_part or 0.0), 6),
            currency=self.currency or None,
            gpu_time=None if time_part is None else round(time_part, 6),
            energy=None if energy_part is None else round(energy_part, 6),
            note=note,
        )

    def priced(self, usage: JobGpuUsage | None) -> JobGpuUsage | None:
        """The summary with its carbon and cost at these numbers (whatever it held before: the runner's
        file is no source of either)."""
        if usage is None:
            return None
        co2e = self.co2e_grams(usage.energy_joules)
        cost = self.cost(usage.gpu_hours_allocated, usage.energy_joules) if usage.available else None
        if co2e == usage.co2e_grams and cost == usage.cost:
            return usage
        return usage.model_copy(update={"co2e_grams": co2e, "cost": cost})

    def on(self, job: Job) -> Job:
        """The job with its GPU summary priced (:meth:`priced`)."""
        gpu = self.priced(job.gpu)
        return job if gpu is job.gpu else job.model_copy(update={"gpu": gpu})

    def totals(self, gpu_hours: float, joules: float | None) -> tuple[float | None, Cost | None]:
        """A period's CO2e and cost, from its GPU-hours and its measured energy."""
        return self.co2e_grams(joules), self.cost(gpu_hours, joules)


NO_PRICES = SitePrices()  # a site that set none of its numbers: nothing is shown
