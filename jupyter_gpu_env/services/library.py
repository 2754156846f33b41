"""The services that need no Jupyter server: what the command line runs on and the server wraps."""

from __future__ import annotations

from dataclasses import dataclass

from ..dask.service import DaskService
from ..efficiency.advisor import Advisor
from ..envs.service import EnvironmentService
from ..images.service import ImageService
from ..jobs.service import JobService
from ..jobs.sweeps.service import Sweeps
from ..pipelines.service import PipelineService
from ..schedules.service import ScheduleService


@dataclass(frozen=True)
class Library:
    envs: EnvironmentService
    images: ImageService
    jobs: JobService
    schedules: ScheduleService
    pipelines: PipelineService
    dask: DaskService
    advice: Advisor

    @property
    def sweeps(self) -> Sweeps:
        return self.jobs.sweeps
