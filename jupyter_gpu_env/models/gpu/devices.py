"""GPU devices as NVML or nvidia-smi describe them (filled in by the GPU sampler)."""

from __future__ import annotations

from pydantic import Field

from ..common import ApiModel


class GpuProcess(ApiModel):
    pid: int = Field(description="Process id as the driver reports it (the host's PID namespace).")
    used_memory_bytes: int | None = Field(
        default=None, ge=0, description="GPU memory the process holds; null where the driver withholds it."
    )
    name: str | None = Field(default=None, description="The process's executable, as the driver reports it.")
    gpu_instance_id: int | None = Field(default=None, description="MIG GPU instance the process runs in.")
    compute_instance_id: int | None = Field(default=None, description="MIG compute instance it runs in.")
    kernel_id: str | None = Field(default=None, description="This server's kernel that owns the process.")
    notebook_path: str | None = Field(default=None, description="The notebook of that kernel's session.")


class MigDevice(ApiModel):
    index: int | None = Field(
        default=None, description="MIG device index on its GPU (`Device N` in `nvidia-smi -L`)."
    )
    uuid: str | None = Field(default=None, description="MIG-... UUID (from NVML or `nvidia-smi -L`).")
    profile: str | None = Field(default=None, description="e.g. `1g.10gb`, or `1c.3g.71gb` for a shared GI.")
    profile_inferred: bool = Field(
        default=False,
        description="True when no tool printed the profile and it was derived from SM count and memory.",
    )
    gpu_instance_id: int | None = Field(default=None, description="GPU instance (GI) id.")
    compute_instance_id: int | None = Field(
        default=None, description="Compute instance (CI) id within the GI."
    )
    memory_used_bytes: int | None = Field(
        default=None,
        ge=0,
        description="Memory used in the GPU instance; compute instances sharing a GI report the same figure.",
    )
    memory_total_bytes: int | None = Field(default=None, ge=0, description="Memory of the GPU instance.")
    sm_count: int | None = Field(default=None, ge=0, description="Streaming multiprocessors of this device.")
    placement_start: int | None = Field(
        default=None, ge=0, description="First memory slice (of 8) the GPU instance occupies, where known."
    )
    placement_size: int | None = Field(default=None, ge=0, description="Memory slices it occupies.")
    visible: bool = Field(default=True, description="Whether this server's CUDA_VISIBLE_DEVICES admits it.")
    processes: list[GpuProcess] = Field(default_factory=list, description="Compute processes on this device.")


class GpuDevice(ApiModel):
    index: int = Field(description="Device index as NVML and nvidia-smi number it (PCI bus order).")
    name: str = Field(description="Product name, e.g. `NVIDIA H100 80GB HBM3`.")
    uuid: str | None = Field(default=None, description="GPU-... UUID.")
    memory_used_bytes: int | None = Field(
        default=None, ge=0, description="Framebuffer memory used (excluding the driver's reserve)."
    )
    memory_total_bytes: int | None = Field(default=None, ge=0, description="Framebuffer memory in total.")
    utilization_percent: float | None = Field(
        default=None, ge=0, le=100, description="GPU utilization; null where not reported (MIG-enabled GPUs)."
    )
    mig_enabled: bool = Field(default=False, description="Whether MIG mode is currently enabled.")
    mig_devices: list[MigDevice] = Field(
        default_factory=list, description="MIG devices this server can read, in index order."
    )
    visible: bool = Field(
        default=True, description="Whether this server sees the GPU or at least one of its MIG devices."
    )
    processes: list[GpuProcess] = Field(
        default_factory=list,
        description="Compute processes on the GPU that belong to no listed MIG device (all of them without MIG).",
    )
