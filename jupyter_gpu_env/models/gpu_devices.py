"""GPU devices as NVML or nvidia-smi describe them (filled in by the GPU sampler)."""

from __future__ import annotations

from pydantic import Field

from .common import ApiModel


class GpuProcess(ApiModel):
    pid: int
    used_memory_bytes: int | None = Field(default=None, ge=0)
    name: str | None = None
    gpu_instance_id: int | None = None
    compute_instance_id: int | None = None
    kernel_id: str | None = Field(default=None, description="This server's kernel that owns the process.")
    notebook_path: str | None = None


class MigDevice(ApiModel):
    uuid: str | None = Field(default=None, description="MIG-... UUID (from NVML or `nvidia-smi -L`).")
    profile: str | None = Field(default=None, description="e.g. `1g.10gb`, or `1c.3g.71gb` for a shared GI.")
    gpu_instance_id: int | None = None
    compute_instance_id: int | None = None
    memory_used_bytes: int | None = Field(default=None, ge=0)
    memory_total_bytes: int | None = Field(default=None, ge=0)
    sm_count: int | None = None
    placement_start: int | None = None
    placement_size: int | None = None
    visible: bool = Field(default=True, description="Whether this server's CUDA_VISIBLE_DEVICES admits it.")
    processes: list[GpuProcess] = Field(default_factory=list)


class GpuDevice(ApiModel):
    index: int
    name: str
    uuid: str | None = None
    memory_used_bytes: int | None = Field(default=None, ge=0)
    memory_total_bytes: int | None = Field(default=None, ge=0)
    utilization_percent: float | None = Field(default=None, ge=0, le=100)
    mig_enabled: bool = False
    mig_devices: list[MigDevice] = Field(default_factory=list)
    visible: bool = True
    processes: list[GpuProcess] = Field(default_factory=list)
