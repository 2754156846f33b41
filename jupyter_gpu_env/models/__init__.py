"""Pydantic models of every request and response; the OpenAPI document is generated from them."""

from .common import ApiError, ApiModel
from .gpu import (
    CpuUsage,
    DeviceMemoryPoint,
    GpuHistory,
    GpuSnapshot,
    GpuStatus,
    HistoryPoint,
    HostResources,
    KernelUsage,
    MemoryUsage,
)
from .gpu_devices import GpuDevice, GpuProcess, MigDevice

__all__ = [
    "ApiError",
    "ApiModel",
    "CpuUsage",
    "DeviceMemoryPoint",
    "GpuDevice",
    "GpuHistory",
    "GpuProcess",
    "GpuSnapshot",
    "GpuStatus",
    "HistoryPoint",
    "HostResources",
    "KernelUsage",
    "MemoryUsage",
    "MigDevice",
]
