"""One sample of the host and its GPUs, the history kept of them, the GPU check and the idle state."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ..common import ApiModel
from .devices import GpuDevice

MemorySource = Literal["cgroup2", "cgroup1", "host"]
GpuReason = Literal["ok", "no_driver", "no_nvml", "no_device", "recorded"]


class MemoryUsage(ApiModel):
    used_bytes: int = Field(
        ge=0, description="Memory charged to this container (cgroup) or used on the machine."
    )
    limit_bytes: int = Field(
        gt=0, description="The container's memory limit; the machine's total memory when no limit is set."
    )
    limited: bool = Field(
        description="True when `limit_bytes` is a real cgroup limit, not the machine total."
    )


class CpuUsage(ApiModel):
    limit_cores: float = Field(gt=0, description="CPU quota in cores (cgroup), else the machine's CPU count.")
    limited: bool = Field(description="True when `limit_cores` comes from a cgroup quota or cpuset.")
    usage_cores: float | None = Field(
        default=None,
        ge=0,
        description="Average cores busy over the last sampling interval; null on the first sample.",
    )


class HostResources(ApiModel):
    source: MemorySource = Field(
        description="Where the numbers come from: cgroup v2, cgroup v1 or the whole machine."
    )
    memory: MemoryUsage
    cpu: CpuUsage


class GpuStatus(ApiModel):
    available: bool = Field(description="True when at least one GPU is visible to this server.")
    reason: GpuReason = Field(
        description="`ok`; `no_driver` (no NVIDIA driver on this machine), `no_nvml` (driver present but "
        "NVML could not be loaded), `no_device` (driver present, no device visible to this container), or "
        "`recorded` (data replayed from recorded tool output)."
    )
    message: str = Field(description="A sentence saying what the user sees and why.")


class KernelUsage(ApiModel):
    """One of this server's kernels and the host memory its process tree holds."""

    kernel_id: str
    kernel_name: str = Field(description="The kernelspec name, e.g. `python3`.")
    notebook_path: str | None = Field(
        default=None, description="The notebook of the kernel's session, if any."
    )
    pid: int
    processes: int = Field(ge=1, description="Processes in the kernel's tree (the kernel and its children).")
    host_memory_bytes: int = Field(ge=0, description="Resident memory of the tree, summed.")
    gpu_memory_bytes: int | None = Field(
        default=None, ge=0, description="GPU memory held by the tree's processes, when GPUs are visible."
    )


class GpuSnapshot(ApiModel):
    """What `GET gpu` answers: the latest sample, taken in the background and served from cache."""

    sampled_at: float = Field(description="Unix time of the sample.")
    interval_seconds: float = Field(gt=0, description="How often the server samples.")
    host: HostResources
    gpus: list[GpuDevice] = Field(default_factory=list)
    gpu_status: GpuStatus
    kernels: list[KernelUsage] = Field(
        default_factory=list, description="This server's kernels, largest host memory first."
    )
    idle: IdleState | None = Field(default=None, description="Whether held GPU memory sits unused.")


class DeviceMemoryPoint(ApiModel):
    memory_used_bytes: int | None = None
    utilization_percent: float | None = None


class HistoryPoint(ApiModel):
    t: float = Field(description="Unix time of the sample.")
    host_memory_used_bytes: int
    host_memory_limit_bytes: int
    cpu_usage_cores: float | None = None
    devices: dict[str, DeviceMemoryPoint] = Field(
        default_factory=dict,
        description="Per GPU or MIG device, keyed by UUID (or `gpu<index>` without one).",
    )


class GpuHistory(ApiModel):
    """Past samples, oldest first, for sparklines."""

    interval_seconds: float
    points: list[HistoryPoint]


class GpuCheck(ApiModel):
    """The answer to "does this environment see the GPU?", checked with the environment's own Python."""

    ok: bool = Field(description="True when a device is usable from the environment.")
    message: str = Field(description="What was found, in a sentence.")
    details: dict[str, Any] = Field(
        description="Raw findings: python, prefix, CUDA_VISIBLE_DEVICES, driver (loaded, count, names), "
        "framework (torch or cupy: version, available, computed)."
    )


class IdleState(ApiModel):
    """Whether this server holds GPU memory without using the GPU."""

    idle: bool = Field(description="True once the held GPU has shown no utilization for `threshold_seconds`.")
    idle_seconds: float = Field(ge=0, description="How long the held GPU has been unused so far.")
    threshold_seconds: float
    kernels: list[str] = Field(default_factory=list, description="Kernels of this server holding GPU memory.")
    message: str = ""


class ReleaseResult(ApiModel):
    shut_down: list[str] = Field(description="Kernel ids shut down to release GPU memory.")


GpuSnapshot.model_rebuild()
