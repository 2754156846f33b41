"""What every GPU source returns, kept apart so that sources and the sampler need not import each other."""

from __future__ import annotations

from dataclasses import dataclass

from ...models import GpuDevice, GpuStatus


@dataclass(frozen=True)
class GpuReading:
    """The devices a source saw, and why there may be none."""

    devices: list[GpuDevice]
    status: GpuStatus


@dataclass(frozen=True)
class PowerReading:
    """One whole GPU's energy counter (mJ since its driver loaded) and power draw (mW); None where not given."""

    energy_mj: int | None = None
    power_mw: int | None = None
