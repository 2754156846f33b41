"""One background sampler for the whole server: every open tab reads the same cached snapshot.

Reading the cgroup files and NVML is blocking, so each sample runs in a worker thread; the
event loop only swaps the finished snapshot in. History is a bounded ring of past samples.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable

from ..models import (
    CpuUsage,
    DeviceMemoryPoint,
    GpuDevice,
    GpuHistory,
    GpuSnapshot,
    GpuStatus,
    HistoryPoint,
    HostResources,
    KernelUsage,
    MemoryUsage,
)
from ..tasks import cancel_and_wait
from .idle import IdleTracker
from .kernel_processes import RunningKernel, kernel_usage, pid_owners, process_trees
from .memory import HostSample, read_host
from .sources.reading import GpuReading

log = logging.getLogger(__name__)


GpuReader = Callable[[], Awaitable[GpuReading]]
HostReader = Callable[[float], HostSample]
KernelSource = Callable[[], Awaitable[list[RunningKernel]]]


async def _no_kernels() -> list[RunningKernel]:
    return []


def _attribute_gpu_memory(
    devices: list[GpuDevice], owners: dict[int, RunningKernel], usage: list[KernelUsage]
) -> None:
    """Name the kernel behind each GPU process and total each kernel's GPU memory.

    PIDs only resolve when the server shares the GPU processes' PID namespace; elsewhere the
    processes stay anonymous rather than guessed.
    """
    per_kernel: dict[str, int] = {}
    procs = [p for d in devices for p in d.processes] + [
        p for d in devices for m in d.mig_devices for p in m.processes
    ]
    for proc in procs:
        owner = owners.get(proc.pid)
        if owner is None:
            continue
        proc.kernel_id, proc.notebook_path = owner.kernel_id, owner.notebook_path
        per_kernel[owner.kernel_id] = per_kernel.get(owner.kernel_id, 0) + (proc.used_memory_bytes or 0)
    for u in usage:
        if u.kernel_id in per_kernel:
            u.gpu_memory_bytes = per_kernel[u.kernel_id]


def _default_host_reader(now: float) -> HostSample:
    return read_host(now=now)


def _point(snap: GpuSnapshot) -> HistoryPoint:
    devices: dict[str, DeviceMemoryPoint] = {}
    for gpu in snap.gpus:
        devices[gpu.uuid or f"gpu{gpu.index}"] = DeviceMemoryPoint(
            memory_used_bytes=gpu.memory_used_bytes, utilization_percent=gpu.utilization_percent
        )
        for mig in gpu.mig_devices:
            if mig.uuid:
                devices[mig.uuid] = DeviceMemoryPoint(memory_used_bytes=mig.memory_used_bytes)
    return HistoryPoint(
        t=snap.sampled_at,
        host_memory_used_bytes=snap.host.memory.used_bytes,
        host_memory_limit_bytes=snap.host.memory.limit_bytes,
        cpu_usage_cores=snap.host.cpu.usage_cores,
        devices=devices,
    )


class Sampler:
    def __init__(
        self,
        gpu_reader: GpuReader,
        *,
        interval: float = 2.0,
        history_seconds: float = 600.0,
        host_reader: HostReader = _default_host_reader,
        kernel_source: KernelSource = _no_kernels,
        idle_seconds: float = 1800.0,
    ) -> None:
        self.interval = interval
        self._gpu_reader = gpu_reader
        self._host_reader = host_reader
        self._kernel_source = kernel_source
        self._idle = IdleTracker(idle_seconds)
        self._history: deque[GpuSnapshot] = deque(maxlen=max(1, round(history_seconds / interval)))
        self._previous: HostSample | None = None
        self._latest: GpuSnapshot | None = None
        self._latest_json = b""
        self._task: asyncio.Task[None] | None = None
        self._first: asyncio.Event | None = None
        self.samples_taken = 0

    def _sample_blocking(self, kernels: list[RunningKernel], gpu: GpuReading) -> GpuSnapshot:
        host = self._host_reader(time.monotonic())
        cores_busy = None
        prev = self._previous
        if prev and prev.cpu_seconds is not None and host.cpu_seconds is not None:
            elapsed = host.taken_at - prev.taken_at
            if elapsed > 0:
                cores_busy = round(max(host.cpu_seconds - prev.cpu_seconds, 0.0) / elapsed, 3)
        self._previous = host
        trees = process_trees(kernels)
        kernel_rows = kernel_usage(kernels, trees)
        _attribute_gpu_memory(gpu.devices, pid_owners(kernels, trees), kernel_rows)
        return GpuSnapshot(
            sampled_at=time.time(),
            interval_seconds=self.interval,
            host=HostResources(
                source=host.source,  # type: ignore[arg-type]
                memory=MemoryUsage(
                    used_bytes=host.memory_used, limit_bytes=host.memory_limit, limited=host.memory_limited
                ),
                cpu=CpuUsage(limit_cores=host.cpu_limit, limited=host.cpu_limited, usage_cores=cores_busy),
            ),
            gpus=gpu.devices,
            gpu_status=gpu.status,
            kernels=kernel_rows,
        )

    async def sample_once(self) -> GpuSnapshot:
        try:
            kernels = await self._kernel_source()
        except Exception as e:  # the kernel table is a nicety; memory and GPUs matter more
            log.warning("listing kernels failed: %s", e)
            kernels = []
        try:
            gpu = await self._gpu_reader()
        except Exception as e:  # a broken driver must not take the memory panel down with it
            log.warning("GPU reader failed: %s", e)
            gpu = GpuReading(
                [],
                GpuStatus(
                    available=False, reason="no_nvml", message=f"No GPU visible: reading the GPU failed: {e}"
                ),
            )
        snap = await asyncio.to_thread(self._sample_blocking, kernels, gpu)
        snap.idle = self._idle.update(snap)
        self._latest, self._latest_json = snap, snap.model_dump_json().encode()
        self._history.append(snap)
        self.samples_taken += 1
        return snap

    async def _loop(self) -> None:
        assert self._first is not None
        while True:
            started = time.monotonic()
            try:
                await self.sample_once()
            except Exception:
                log.exception("sampling failed")
            self._first.set()
            await asyncio.sleep(max(self.interval - (time.monotonic() - started), 0.05))

    def start(self) -> None:
        if self._task is None or self._task.done():
            self._first = asyncio.Event()
            self._task = asyncio.get_running_loop().create_task(self._loop(), name="gpu-env-sampler")

    async def stop(self) -> None:
        await cancel_and_wait(self._task)
        self._task = None

    async def snapshot(self) -> GpuSnapshot:
        """The latest sample; the first caller after start waits for the first one."""
        self.start()
        if self._latest is None:
            assert self._first is not None
            await self._first.wait()
        if self._latest is None:  # the first background sample failed; try once more, loudly
            return await self.sample_once()
        return self._latest

    def latest(self) -> GpuSnapshot | None:
        return self._latest

    async def snapshot_json(self) -> bytes:
        """The latest sample, serialized once per interval however many callers read it."""
        await self.snapshot()
        return self._latest_json

    def history(self, seconds: float | None = None) -> list[GpuSnapshot]:
        items = list(self._history)
        if seconds is None:
            return items
        cutoff = time.time() - seconds
        return [s for s in items if s.sampled_at >= cutoff]

    def history_points(self, seconds: float | None = None) -> GpuHistory:
        """The history in the compact form sparklines need (no process lists, no device details)."""
        return GpuHistory(interval_seconds=self.interval, points=[_point(s) for s in self.history(seconds)])
