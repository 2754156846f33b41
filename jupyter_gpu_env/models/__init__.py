"""Pydantic models of every request and response; the OpenAPI document is generated from them."""

from .common import ApiError, ApiModel
from .gpu import (
    CpuUsage,
    DeviceMemoryPoint,
    GpuDevice,
    GpuHistory,
    GpuProcess,
    GpuSnapshot,
    GpuStatus,
    HistoryPoint,
    HostResources,
    KernelUsage,
    MemoryUsage,
    MigDevice,
)

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
