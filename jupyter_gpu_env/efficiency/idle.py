"""Idle GPUs, enforced where the site wants it (``c.GpuEnvApp.job_gpu_idle_action = "cancel"``).

A running job whose GPU has idled ``threshold`` seconds is warned in its message (the Jobs section and
the Lab's notice show it), and cancelled ``grace`` seconds later unless its GPU works again; its record
then says why (reason ``gpu_idle``) and its end is notified like any other. The idle time is the
runner's measure (its ``gpu.json``), which a job's own code could rewrite: enforcement holds the honest
majority to the site's rule, it is no security boundary. A MIG slice reports no utilization, so a job
on one is never taken for idle.
"""

from __future__ import annotations

import logging

from ..errors import Conflict
from ..gpu.idle import duration
from ..jobs.service import JobService
from ..models.jobs import Job

log = logging.getLogger(__name__)

WARNING = "Its GPU has been idle for "  # how a warned job's message begins


class IdleEnforcer:
    def __init__(
        self, jobs: JobService, threshold: float, grace: float, exempt: tuple[str, ...] = ()
    ) -> None:
        self.jobs = jobs
        self.threshold = threshold
        self.grace = grace
        self.exempt = exempt  # kinds of job the site spares (``c.BatchKernels.gpu_idle_applies``)

    async def tick(self) -> None:
        """One look at the running jobs (the service's loop calls it every round)."""
        for job in await self.jobs.store.active():
            try:
                await self._look_at(job)
            except Exception:  # one job's trouble must not spare the others
                log.exception("the idle check of job %s failed", job.id)

    async def _look_at(self, job: Job) -> None:
        if job.state != "running" or job.kind in self.exempt or job.gpu is None or not job.gpu.available:
            return
        idle = job.gpu.idle_seconds
        warned = job.message.startswith(WARNING)
        if self.threshold <= 0 or idle < self.threshold:
            if warned:  # it uses its GPU again: the warning no longer holds
                await self.jobs.store.update(job.id, message=f"Running on {job.backend}.")
            return
        if idle >= self.threshold + self.grace:
            why = (
                f"Cancelled: its GPU was idle for {duration(idle)}. This site cancels jobs whose GPU idles "
                f"{duration(self.threshold)} and {duration(self.grace)} more; send it again with the GPU "
                "work it needs, or without a GPU."
            )
            try:
                await self.jobs.cancel(job.id, ("gpu_idle", why))
            except Conflict:
                pass  # it ended meanwhile: how it ended stands
            return
        left = self.threshold + self.grace - idle
        await self.jobs.store.update(
            job.id,
            message=f"{WARNING}{duration(idle)}: it will be cancelled in {duration(left)} unless it uses the "
            "GPU again.",
        )
