"""Models of the GPU resources: what one sample of the host and its GPUs holds, its history and the GPU
check (`snapshot`), and the devices as NVML or nvidia-smi describe them (`devices`).

``models.gpu`` names what both hold, as one resource.
"""

from .devices import GpuDevice, GpuProcess, MigDevice
from .snapshot import (
    CpuUsage,
    DeviceMemoryPoint,
    GpuCheck,
    GpuHistory,
    GpuReason,
    GpuSnapshot,
    GpuStatus,
    HistoryPoint,
    HostResources,
    IdleState,
    KernelUsage,
    MemorySource,
    MemoryUsage,
    ReleaseResult,
)

__all__ = [
    "CpuUsage",
    "DeviceMemoryPoint",
    "GpuCheck",
    "GpuDevice",
    "GpuHistory",
    "GpuProcess",
    "GpuReason",
    "GpuSnapshot",
    "GpuStatus",
    "HistoryPoint",
    "HostResources",
    "IdleState",
    "KernelUsage",
    "MemorySource",
    "MemoryUsage",
    "MigDevice",
    "ReleaseResult",
]
