"""Choose how GPUs are read on this machine and say plainly why none is visible."""

from __future__ import annotations

from pathlib import Path

from ..models import GpuStatus
from .sampler import GpuReading

_DRIVER_FILE = Path("/proc/driver/nvidia/version")


def _no_gpu(reason: str, message: str) -> GpuReading:
    return GpuReading([], GpuStatus(available=False, reason=reason, message=message))  # type: ignore[arg-type]


def probe_gpu(driver_file: Path = _DRIVER_FILE, dev_dir: Path = Path("/dev")) -> GpuReading:
    """Classify a machine without readable GPUs: no driver, no NVML library, or no device."""
    if not driver_file.exists() and not any(dev_dir.glob("nvidia[0-9]*")):
        return _no_gpu(
            "no_driver",
            "No GPU visible: this machine has no NVIDIA driver loaded (no /proc/driver/nvidia). "
            "Ask for a GPU or MIG slice when you start your server.",
        )
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception as e:
        return _no_gpu(
            "no_nvml",
            f"No GPU visible: the NVIDIA driver is present but NVML could not be loaded ({e}). "
            "The container may lack libnvidia-ml.so; ask your administrator.",
        )
    try:
        count = pynvml.nvmlDeviceGetCount()
    finally:
        pynvml.nvmlShutdown()
    if count == 0:
        return _no_gpu(
            "no_device",
            "No GPU visible: the driver is loaded but no device is assigned to this container.",
        )
    return _no_gpu("no_device", f"{count} GPU(s) found but device details are not read yet.")
