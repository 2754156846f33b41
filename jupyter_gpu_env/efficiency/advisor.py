"""``Advisor``: what a notebook's earlier runs and its open kernel measured, turned into the smallest GPU
or MIG slice a backend offers that fits, and where such a job would likely start soonest.

It needs no server: the command line builds it over the job store alone; the server adds what its GPU
sampler sees (the kernels' GPU memory, this machine's GPUs).
"""

from __future__ import annotations

import asyncio
import logging
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from ..backends.base import Backend
from ..errors import GpuEnvError, InvalidRequest
from ..jobs.service import JobService
from ..models.gpu import GpuDevice, KernelUsage
from ..models.gpu.advice import (
    EnergyEstimate,
    GpuAdvice,
    KernelUse,
    MeasuredRun,
    StartOption,
    SuggestedResources,
)
from ..models.gpu.jobuse import ENERGY_SOURCES
from ..models.jobs import Job
from . import fit, words

log = logging.getLogger(__name__)

CAPACITY_TIMEOUT = 5.0  # seconds a backend may take to say what is free before it is left unknown


def _no_kernels() -> Sequence[KernelUsage]:
    return ()


def _no_devices() -> Sequence[GpuDevice]:
    return ()


@dataclass
class Advisor:
    jobs: JobService
    # what the server's GPU sampler sees last: its kernels (their GPU memory) and this machine's GPUs
    kernels: Callable[[], Sequence[KernelUsage]] = _no_kernels
    devices: Callable[[], Sequence[GpuDevice]] = _no_devices
    headroom: float = 0.2
    runs: int = 5

    async def advise(
        self, backend: str, notebook_path: str | None = None, kernel_id: str | None = None
    ) -> GpuAdvice:
        if notebook_path is None and kernel_id is None:
            raise InvalidRequest(
                "Give notebook_path (a notebook's runs), kernel_id (a kernel's use), or both."
            )
        target = self.jobs.intake.backend(backend)
        runs = await self.jobs.store.runs_of(notebook_path, self.runs) if notebook_path else []
        measured = [_measured(job) for job in runs]
        kernel = self._kernel(notebook_path, kernel_id)
        based_on: Literal["runs", "kernel", "runs_and_kernel", "nothing"] = (
            "runs_and_kernel"
            if measured and kernel
            else "runs"
            if measured
            else "kernel"
            if kernel
            else "nothing"
        )
        base = GpuAdvice(
            notebook_path=notebook_path,
            backend=backend,
            based_on=based_on,
            headroom=self.headroom,
            runs=measured,
            kernel=kernel,
            sentence="",
        )
        if based_on == "nothing":
            unmeasured = await self.jobs.store.unmeasured_of(notebook_path) if notebook_path else (0, None)
            return base.model_copy(update={"sentence": _nothing_yet(notebook_path, kernel_id, *unmeasured)})
        peaks = [r.peak_memory_bytes or 0 for r in measured] + ([kernel.memory_bytes] if kernel else [])
        peak = max(peaks)
        utils = [r.mean_utilization_percent for r in measured if r.mean_utilization_percent is not None]
        mean_util = sum(utils) / len(utils) if utils else None
        peak_utils = [r.peak_utilization_percent for r in measured if r.peak_utilization_percent is not None]
        device = next((r.device for r in measured if r.device), None) or (kernel.device if kernel else None)
        current = _current(measured, kernel)
        suggestion = self._choose(target, peak, measured) if peak > 0 else SuggestedResources(gpus=0)
        idle = None if mean_util is None else round(100 - mean_util, 1)
        energy = self._energy(measured)
        sentence = words.sentence(
            subject=words.measured_what(len(measured), kernel is not None),
            peak_bytes=peak,
            device=device,
            mean_utilization=mean_util,
            suggestion=suggestion,
            headroom=self.headroom,
            backend=backend,
            current=current,
            idle_percent=idle,
        )
        if energy is not None:
            estimated = energy.source == "share of a whole GPU"
            sentence += " " + words.energy_sentence(energy.joules, energy.runs, energy.co2e_grams, estimated)
        return base.model_copy(
            update={
                "peak_memory_bytes": peak,
                "peak_utilization_percent": max(peak_utils) if peak_utils else None,
                "suggestion": suggestion,
                "current": None if words.same_size(current, suggestion) else current,
                "idle_percent": idle,
                "energy": energy,
                "sentence": sentence,
                "soonest": await self._soonest(suggestion, backend) if suggestion else [],
            }
        )

    def _energy(self, runs: Sequence[MeasuredRun]) -> EnergyEstimate | None:
        """The median energy of the succeeded runs that measured it (a failed run stopped short)."""
        done = [r for r in runs if r.state == "succeeded" and r.energy_joules is not None]
        if not done:
            return None
        joules = round(statistics.median(r.energy_joules or 0.0 for r in done), 3)
        sources = [r.energy_source for r in done if r.energy_source is not None]
        return EnergyEstimate(
            joules=joules,
            runs=len(done),
            source=max(sources, key=ENERGY_SOURCES.index) if sources else None,
            co2e_grams=self.jobs.prices.co2e_grams(joules),
        )

    def _kernel(self, notebook_path: str | None, kernel_id: str | None) -> KernelUse | None:
        found = None
        for k in self.kernels():
            if k.kernel_id == kernel_id or (kernel_id is None and k.notebook_path == notebook_path):
                found = k
                break
        if found is None or found.gpu_memory_bytes is None:
            return None
        devices = [d for d in self.devices() if d.visible]
        whole = bool(devices) and not any(d.mig_enabled for d in devices)
        return KernelUse(
            kernel_id=found.kernel_id,
            memory_bytes=found.gpu_memory_bytes,
            device=devices[0].name if devices else None,
            memory_total_bytes=devices[0].memory_total_bytes if devices and whole else None,
            whole_gpu=whole,
        )

    def _choose(self, backend: Backend, peak: int, runs: Sequence[MeasuredRun]) -> SuggestedResources | None:
        info = backend.info()
        seen: dict[str, int] = {}
        whole_memory = None
        for r in runs:
            if r.mig_profile and r.memory_total_bytes:
                seen.setdefault(r.mig_profile, r.memory_total_bytes)
            elif r.memory_total_bytes and not r.mig_profile:
                whole_memory = whole_memory or r.memory_total_bytes
        for d in self.devices():
            whole_memory = whole_memory or (None if d.mig_enabled else d.memory_total_bytes)
            for m in d.mig_devices:
                if m.profile and m.memory_total_bytes:
                    seen.setdefault(m.profile, m.memory_total_bytes)
        whole = 0 if not info.supports_gpus else info.limits.max_gpus
        candidates = fit.offers(
            info.mig_profiles, whole_gpus=whole, gpu_memory_bytes=whole_memory, measured=seen
        )
        chosen = fit.choose(peak, self.headroom, candidates)
        return None if chosen is None else chosen.resources()

    async def _soonest(self, wanted: SuggestedResources, asked: str) -> list[StartOption]:
        able = [b for b in self.jobs.backends.values() if _can_give(b, wanted)]
        options = await asyncio.gather(*(self._option(b, wanted) for b in able))
        return sorted(options, key=lambda o: (_rank(o.free), o.queued_ahead or 0, o.backend != asked))

    async def _option(self, backend: Backend, wanted: SuggestedResources) -> StartOption:
        free: int | None = None
        try:
            capacity = await asyncio.wait_for(backend.capacity(), CAPACITY_TIMEOUT)
        except (GpuEnvError, TimeoutError) as e:
            log.info("advice: the '%s' backend's capacity is not known: %s", backend.name, e)
        else:
            if capacity.available:
                rows = [r for r in capacity.rows if r.profile == wanted.mig_profile]
                free = sum(r.free for r in rows) if rows else 0
        waiting = len([j for j in await self.jobs.store.active(backend.name) if j.state == "queued"])
        info = backend.info()
        return StartOption(
            backend=backend.name,
            queue=info.default_queue,
            free=None if not wanted.gpus and not wanted.mig_profile else free,
            queued_ahead=waiting,
            sentence=_start_words(backend.name, wanted, free, waiting),
        )


def _measured(job: Job) -> MeasuredRun:
    gpu = job.gpu
    assert gpu is not None  # runs_of returns measured runs only
    first = gpu.devices[0] if gpu.devices else None
    return MeasuredRun(
        job_id=job.id,
        backend=job.backend,
        state=job.state,
        created_at=job.created_at,
        device=first.name if first else None,
        gpus=job.resources.gpu_units(),
        mig_profile=(first.mig_profile if first else None) or job.resources.mig_profile,
        peak_memory_bytes=gpu.peak_memory_bytes,
        memory_total_bytes=gpu.memory_total_bytes or (first.memory_total_bytes if first else None),
        mean_utilization_percent=gpu.mean_utilization_percent,
        peak_utilization_percent=gpu.peak_utilization_percent,
        energy_joules=gpu.energy_joules,
        energy_source=gpu.energy_source,
    )


def _current(runs: Sequence[MeasuredRun], kernel: KernelUse | None) -> SuggestedResources | None:
    """What the latest run (or else the kernel) was given."""
    if runs:
        r = runs[0]
        if r.mig_profile:
            return SuggestedResources(mig_profile=r.mig_profile, memory_bytes=r.memory_total_bytes)
        if r.gpus >= 1:
            return SuggestedResources(gpus=int(r.gpus), memory_bytes=r.memory_total_bytes)
        return None
    if kernel is not None and kernel.whole_gpu:
        return SuggestedResources(gpus=1, memory_bytes=kernel.memory_total_bytes)
    return None


def _can_give(backend: Backend, wanted: SuggestedResources) -> bool:
    info = backend.info()
    if wanted.mig_profile:
        return wanted.mig_profile in info.mig_profiles
    if wanted.gpus:
        most = info.limits.max_gpus
        return info.supports_gpus and (most is None or most >= wanted.gpus)
    return True


def _rank(free: int | None) -> int:
    return 0 if free else 1 if free is None else 2


def _start_words(name: str, wanted: SuggestedResources, free: int | None, waiting: int) -> str:
    queue = f"{waiting} job{'s' if waiting != 1 else ''} waiting" if waiting else "no job waiting"
    if not wanted.gpus and not wanted.mig_profile:
        return f"{name}: needs no GPU; {queue}."
    kind = f"{wanted.mig_profile} slice" if wanted.mig_profile else "GPU"
    if free is None:
        return f"{name}: free {kind}s not known; {queue}."
    if free:
        return f"{name}: {free} free {kind}{'s' if free != 1 else ''} now; {queue}."
    return f"{name}: no free {kind} now; {queue}."


def _nothing_yet(
    notebook_path: str | None, kernel_id: str | None, unmeasured: int = 0, why: str | None = None
) -> str:
    """Nothing to suggest from: no run yet, or runs that saw no GPU (and why, in the runner's words)."""
    if notebook_path and unmeasured:
        runs = "The last run" if unmeasured == 1 else f"The {unmeasured} earlier runs"
        because = f" ({why.rstrip('.')})" if why else ""
        return (
            f"{runs} of this notebook measured no GPU use: {'it' if unmeasured == 1 else 'they'} saw no GPU"
            f"{because}. Ask for a GPU or a MIG slice under Resources, and the next time this suggests the "
            "smallest one that fits."
        )
    if notebook_path:
        return (
            "No run of this notebook has measured its GPU use yet: send it once, and the next time this "
            "suggests the smallest GPU or MIG slice that fits."
        )
    return f"Kernel '{kernel_id}' holds no GPU memory this server can see."
