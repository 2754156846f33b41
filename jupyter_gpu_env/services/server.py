"""``Services``: what one server holds, one attribute per REST resource, started and stopped together."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from ..batchkernels.service import BatchKernelService
from ..dask.service import DaskService
from ..efficiency.advisor import Advisor
from ..images import mounts
from ..jobs.service import JobService
from ..jobs.sweeps.service import Sweeps
from ..loops import Loops
from ..metrics.service import MetricsService
from ..notify.notifier import Notifier
from ..pipelines.service import PipelineService
from ..schedules.service import ScheduleService
from ..tasks import TaskManager
from .environments import EnvironmentOperations
from .gpu import GpuOperations
from .images import ImageOperations
from .library import Library


@dataclass
class Services:
    """Built by the app (``GpuEnvApp.build_services``), the one place the server's parts are wired."""

    library: Library
    environments: EnvironmentOperations
    images: ImageOperations
    jobs: JobService
    sweeps: Sweeps
    schedules: ScheduleService
    pipelines: PipelineService
    dask: DaskService
    batch_kernels: BatchKernelService
    advice: Advisor
    gpu: GpuOperations
    tasks: TaskManager
    notifications: Notifier
    timers: Loops = field(default_factory=Loops)  # the features' timers: schedules, pipelines, Dask, GPU idle
    metrics: MetricsService | None = None  # the series on Jupyter Server's /metrics; None: none
    _started: asyncio.Task[None] | None = field(default=None, init=False, repr=False)
    _taking_back: asyncio.Future[list[str]] | None = field(default=None, init=False, repr=False)

    async def start(self) -> None:
        """Clean what a crash left behind, reconcile jobs, start sampling. Idempotent.

        The server calls it once its loop runs; handlers call it too, so that an embedding that
        never runs extension start hooks (some test harnesses) still gets a working service.
        """
        if self._started is None:
            self._started = asyncio.ensure_future(self._start())
        await asyncio.shield(self._started)

    async def _start(self) -> None:
        lib = self.library
        await lib.envs.cleanup_stale()
        await asyncio.to_thread(lib.images.cleanup_stale)
        await mounts.sweep()
        self.gpu.sampler.start()
        await lib.jobs.start()
        self.timers.start()  # once the jobs are reconciled: a timer acts on what they say
        if self.metrics is not None:
            await self.metrics.start()
        # Batch kernels kept over a restart are taken back in the background: each waits for its host.
        self._taking_back = asyncio.ensure_future(self.batch_kernels.take_back())
        await lib.envs.warm_up()
        await lib.images.warm_up()

    async def stop(self) -> None:
        lib = self.library
        await self.tasks.stop()
        await lib.envs.close()
        await lib.images.close()
        await self.timers.stop()  # before the jobs: no timer acts on a stopped service
        if self.metrics is not None:
            await self.metrics.stop()
        if self._taking_back is not None:
            self._taking_back.cancel()
        # Before the jobs, and before Jupyter shuts its kernels down (after the extensions): the batch
        # kernels' jobs end while the job service can still record it.
        await self.batch_kernels.stop()
        await lib.jobs.stop()
        await lib.dask.close()  # the clusters go on; only stops under way here are let go
        await self.notifications.stop()  # after the jobs: no end is told once it has stopped
        await self.gpu.sampler.stop()
        await mounts.unmount_all()
