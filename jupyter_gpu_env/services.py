"""The services one server holds, built from configuration; handlers reach them through settings."""

from __future__ import annotations

from dataclasses import dataclass

from .gpu.sampler import Sampler
from .tasks import TaskManager


@dataclass
class Services:
    sampler: Sampler
    tasks: TaskManager

    async def stop(self) -> None:
        await self.tasks.stop()
        await self.sampler.stop()
