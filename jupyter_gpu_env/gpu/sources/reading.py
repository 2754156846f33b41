"""What every GPU source returns, kept apart so that sources and the sampler need not import each other."""

from __future__ import annotations

from dataclasses import dataclass

from ...models import GpuDevice, GpuStatus


@dataclass(frozen=True)
class GpuReading:
    """The devices a source saw, and why there may be none."""

    devices: list[GpuDevice]
    status: GpuStatus
