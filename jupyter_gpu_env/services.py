"""The services one server holds, built from configuration; handlers reach them through settings."""

from __future__ import annotations

from dataclasses import dataclass

from .gpu.sampler import Sampler


@dataclass
class Services:
    sampler: Sampler

    async def stop(self) -> None:
        await self.sampler.stop()
