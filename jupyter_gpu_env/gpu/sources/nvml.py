"""The fast path: GPUs and MIG devices read through NVML (the ``nvidia-ml-py`` bindings).

:class:`NvmlReader` is the sampler's GPU reader. Its ``read()`` blocks (the sampler runs it in a
thread), initialises NVML once and keeps device handles and everything that cannot change
while the driver is loaded (names, UUIDs, MIG attributes, placements), so a sample costs a few
calls per device. The ``nvml`` module is injected, so tests drive it with a fake built from
recorded output; by default ``pynvml`` is imported on first use.

Where no GPU is readable the reading says why: ``no_driver`` (no NVIDIA driver on this
machine), ``no_nvml`` (a driver, but libnvidia-ml or the bindings cannot be loaded) or
``no_device`` (NVML works and lists nothing).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from ...models import GpuDevice, GpuProcess, GpuStatus, MigDevice
from .. import mig
from ..visibility import mark_visible, visibility_status
from .reading import GpuReading, PowerReading

log = logging.getLogger(__name__)

DRIVER_FILE = Path("/proc/driver/nvidia/version")

# NVML return codes (a stable ABI); compared by value so any binding, or a fake, will do.
UNINITIALIZED, NOT_SUPPORTED, NO_PERMISSION, NOT_FOUND = 1, 3, 4, 6
DRIVER_NOT_LOADED, LIBRARY_NOT_FOUND, FUNCTION_NOT_FOUND, GPU_IS_LOST = 9, 12, 13, 15
LIB_RM_VERSION_MISMATCH = 18
# Errors after which the handles are worthless: start over on the next read.
_FATAL = {UNINITIALIZED, DRIVER_NOT_LOADED, GPU_IS_LOST, LIB_RM_VERSION_MISMATCH}
_NA = 0xFFFFFFFF  # gpuInstanceId / computeInstanceId of a process outside MIG


def _str(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _none_if_na(value: int | None) -> int | None:
    return None if value is None or value >= _NA else int(value)


def no_gpu(reason: str, message: str) -> GpuReading:
    return GpuReading([], GpuStatus(available=False, reason=reason, message=message))  # type: ignore[arg-type]


@dataclass
class _MigStatic:
    """What cannot change for a MIG device while it exists, keyed by its UUID."""

    index: int
    gpu_instance_id: int | None
    compute_instance_id: int | None
    sm_count: int | None
    profile: str | None
    placement: tuple[int, int] | None


@dataclass
class _Gpu:
    index: int
    handle: Any
    name: str
    uuid: str | None
    max_mig: int | None = None
    counter: bool = True  # False once NVML said this GPU has no energy counter
    power: bool = True  # False once it said it reports no power draw


class NvmlReader:
    """``read() -> GpuReading`` over NVML; one instance for the server's lifetime."""

    def __init__(
        self,
        nvml: ModuleType | Any | None = None,
        *,
        driver_file: Path = DRIVER_FILE,
        env: Mapping[str, str] | None = None,
        retry_seconds: float = 30.0,
    ) -> None:
        self._nvml: Any = nvml  # the pynvml module, or a stand-in with its functions
        self._driver_file = driver_file
        self._env = env
        self._retry_seconds = retry_seconds
        self._lock = threading.Lock()
        self._gpus: list[_Gpu] | None = None
        self._migs: dict[str, _MigStatic] = {}
        self._failure: tuple[float, GpuReading] | None = None

    # --- lifecycle -----------------------------------------------------------------------------

    def _init(self) -> GpuReading | None:
        """Load and initialise NVML; a reading that says why when that fails."""
        if self._nvml is None:
            try:
                import pynvml
            except ImportError as e:
                return no_gpu(
                    "no_nvml",
                    f"No GPU visible: the NVML bindings (nvidia-ml-py) are not installed ({e}).",
                )
            self._nvml = pynvml
        nv = self._nvml
        try:
            nv.nvmlInit()
        except nv.NVMLError as e:
            return self._classify_init_error(e)
        try:
            count = nv.nvmlDeviceGetCount()
        except nv.NVMLError as e:
            self._shutdown()
            return no_gpu("no_nvml", f"No GPU visible: NVML could not count the GPUs ({e}).")
        self._gpus = []
        for i in range(count):
            try:
                h = nv.nvmlDeviceGetHandleByIndex(i)
                self._gpus.append(
                    _Gpu(i, h, _str(nv.nvmlDeviceGetName(h)), self._opt(nv.nvmlDeviceGetUUID, h))
                )
            except nv.NVMLError as e:  # e.g. no permission on a GPU outside this container's cgroup
                log.debug("skipping GPU %d: %s", i, e)
        return None

    def _classify_init_error(self, e: Exception) -> GpuReading:
        code = getattr(e, "value", None)
        if code == DRIVER_NOT_LOADED or (code == LIBRARY_NOT_FOUND and not self._driver_file.exists()):
            return no_gpu(
                "no_driver",
                "No GPU visible: this machine has no NVIDIA driver loaded. "
                "Ask for a GPU or MIG slice when you start your server.",
            )
        return no_gpu(
            "no_nvml",
            f"No GPU visible: the NVIDIA driver is present but NVML could not be used ({e}). "
            "The container may lack libnvidia-ml.so; ask your administrator.",
        )

    def _shutdown(self) -> None:
        if self._gpus is not None and self._nvml is not None:
            try:
                self._nvml.nvmlShutdown()
            except self._nvml.NVMLError as e:
                log.debug("nvmlShutdown: %s", e)
        self._gpus = None
        self._migs.clear()

    def close(self) -> None:
        with self._lock:
            self._shutdown()

    # --- reading -------------------------------------------------------------------------------

    def read(self) -> GpuReading:
        with self._lock:
            if self._gpus is None:
                if self._failure and time.monotonic() - self._failure[0] < self._retry_seconds:
                    return self._failure[1]  # dlopen and driver probes are not free; retry slowly
                failed = self._init()
                if failed is not None:
                    self._failure = (time.monotonic(), failed)
                    return failed
                self._failure = None
            assert self._gpus is not None
            if not self._gpus:
                return no_gpu(
                    "no_device",
                    "No GPU visible: the driver is loaded but no device is assigned to this container.",
                )
            try:
                devices = [self._read_gpu(g) for g in self._gpus]
            except self._nvml.NVMLError as e:
                if getattr(e, "value", None) not in _FATAL:
                    raise
                self._shutdown()
                return no_gpu("no_nvml", f"No GPU visible: NVML stopped answering ({e}); retrying.")
        devices = mark_visible(devices, self._env)
        message = f"{len(devices)} GPU(s) read through NVML."
        return GpuReading(devices, visibility_status(devices, self._env, reason="ok", message=message))

    def read_energy(self) -> dict[str, PowerReading]:
        """Each GPU's energy counter (mJ) and power draw (mW), by UUID, after :meth:`read` found them; empty
        where NVML is not loaded or stopped answering. A GPU without the counter (before Volta) or the
        power reading is asked no more; a MIG slice has neither (its GPU's are read)."""
        with self._lock:
            if not self._gpus:
                return {}
            out = {}
            try:
                for g in self._gpus:
                    if g.uuid:
                        out[g.uuid] = PowerReading(self._energy(g), self._power(g))
            except self._nvml.NVMLError:
                return {}  # fatal: read() starts NVML over
            return out

    def _energy(self, g: _Gpu) -> int | None:
        if g.counter:
            value, g.counter = self._offered(
                getattr(self._nvml, "nvmlDeviceGetTotalEnergyConsumption", None), g
            )
            return None if value is None else int(value)
        return None

    def _power(self, g: _Gpu) -> int | None:
        if g.power:
            value, g.power = self._offered(getattr(self._nvml, "nvmlDeviceGetPowerUsage", None), g)
            return None if value is None else int(value)
        return None

    def _offered(self, fn: Any, g: _Gpu) -> tuple[Any, bool]:
        """A getter's value, and whether to ask again: not where it is not supported (or not bound)."""
        if fn is None:
            return None, False
        try:
            return fn(g.handle), True
        except self._nvml.NVMLError as e:
            code = getattr(e, "value", None)
            if code in _FATAL:
                raise
            return None, code not in (NOT_SUPPORTED, FUNCTION_NOT_FOUND)

    def _opt(self, fn: Any, *args: Any) -> Any:
        """Call an NVML getter; None where this GPU, driver or container does not offer it."""
        try:
            value = fn(*args)
        except self._nvml.NVMLError as e:
            if getattr(e, "value", None) in _FATAL:
                raise
            return None
        return _str(value) if isinstance(value, bytes) else value

    def _memory(self, handle: Any) -> tuple[int | None, int | None]:
        nv = self._nvml
        # v2 reports "used" without the driver's reserve, as nvidia-smi does; v1 includes it.
        version = getattr(nv, "nvmlMemory_v2", None)
        info = self._opt(nv.nvmlDeviceGetMemoryInfo, handle, version) if version else None
        info = info or self._opt(nv.nvmlDeviceGetMemoryInfo, handle)
        return (int(info.used), int(info.total)) if info else (None, None)

    def _processes(self, handle: Any) -> list[GpuProcess]:
        nv = self._nvml
        try:
            raw = nv.nvmlDeviceGetComputeRunningProcesses(handle)
        except nv.NVMLError as e:
            code = getattr(e, "value", None)
            if code == FUNCTION_NOT_FOUND and hasattr(nv, "nvmlDeviceGetComputeRunningProcesses_v2"):
                raw = self._opt(nv.nvmlDeviceGetComputeRunningProcesses_v2, handle) or []
            elif code in _FATAL:
                raise
            else:
                raw = []
        out = []
        for p in raw:
            name = (
                self._opt(nv.nvmlSystemGetProcessName, p.pid)
                if hasattr(nv, "nvmlSystemGetProcessName")
                else None
            )
            used = getattr(p, "usedGpuMemory", None)
            out.append(
                GpuProcess(
                    pid=int(p.pid),
                    name=name or None,
                    used_memory_bytes=int(used) if used is not None else None,
                    gpu_instance_id=_none_if_na(getattr(p, "gpuInstanceId", None)),
                    compute_instance_id=_none_if_na(getattr(p, "computeInstanceId", None)),
                )
            )
        return out

    def _read_gpu(self, g: _Gpu) -> GpuDevice:
        nv = self._nvml
        used, total = self._memory(g.handle)
        util = self._opt(nv.nvmlDeviceGetUtilizationRates, g.handle)  # NotSupported with MIG on
        mode = self._opt(nv.nvmlDeviceGetMigMode, g.handle)
        gpu = GpuDevice(
            index=g.index,
            name=g.name,
            uuid=g.uuid,
            memory_used_bytes=used,
            memory_total_bytes=total,
            utilization_percent=float(util.gpu) if util is not None else None,
            mig_enabled=bool(mode and mode[0] == getattr(nv, "NVML_DEVICE_MIG_ENABLE", 1)),
        )
        if not gpu.mig_enabled:
            gpu.processes = self._processes(g.handle)
            return gpu
        if g.max_mig is None:
            g.max_mig = self._opt(nv.nvmlDeviceGetMaxMigDeviceCount, g.handle) or 0
        for i in range(g.max_mig):
            h = self._opt(nv.nvmlDeviceGetMigDeviceHandleByIndex, g.handle, i)  # NotFound: empty slot
            if h is not None:
                gpu.mig_devices.append(self._read_mig(g, i, h, total))
        return gpu

    def _read_mig(self, g: _Gpu, index: int, h: Any, parent_total: int | None) -> MigDevice:
        uuid = self._opt(self._nvml.nvmlDeviceGetUUID, h)
        static = self._migs.get(uuid) if uuid else None
        if static is None or static.index != index:
            static = self._mig_static(g, index, h, parent_total)
            if uuid:
                self._migs[uuid] = static
        used, total = self._memory(h)
        return MigDevice(
            index=index,
            uuid=uuid,
            profile=static.profile,
            gpu_instance_id=static.gpu_instance_id,
            compute_instance_id=static.compute_instance_id,
            memory_used_bytes=used,
            memory_total_bytes=total,
            sm_count=static.sm_count,
            placement_start=static.placement[0] if static.placement else None,
            placement_size=static.placement[1] if static.placement else None,
            processes=self._processes(h),
        )

    def _mig_static(self, g: _Gpu, index: int, h: Any, parent_total: int | None) -> _MigStatic:
        nv = self._nvml
        gi = self._opt(nv.nvmlDeviceGetGpuInstanceId, h)
        ci = self._opt(nv.nvmlDeviceGetComputeInstanceId, h)
        attrs = self._opt(nv.nvmlDeviceGetAttributes, h)
        name = self._opt(nv.nvmlDeviceGetName, h)
        # The device name ends in the profile ("... MIG 1g.10gb"); the attributes rebuild it otherwise.
        profile = mig.profile_from_device_name(name) if name else None
        if profile is None and attrs is not None and parent_total:
            g_slices, c_slices = int(attrs.gpuInstanceSliceCount), int(attrs.computeInstanceSliceCount)
            mem = mig.memory_label_gb(int(attrs.memorySizeMB) * mig.MIB, parent_total)
            profile = mig.profile_name(g_slices, mem, c_slices) if g_slices else None
        placement = None
        if gi is not None:
            # Needs more privilege than reading does in most containers; then it stays unknown.
            instance = self._opt(nv.nvmlDeviceGetGpuInstanceById, g.handle, gi)
            info = self._opt(nv.nvmlGpuInstanceGetInfo, instance) if instance is not None else None
            if info is not None:
                placement = (int(info.placement.start), int(info.placement.size))
        return _MigStatic(
            index=index,
            gpu_instance_id=gi,
            compute_instance_id=ci,
            sm_count=int(attrs.multiprocessorCount) if attrs is not None else None,
            profile=profile,
            placement=placement,
        )
