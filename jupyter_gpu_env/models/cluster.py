from __future__ import annotations

from pydantic import Field

from .common import ApiModel


class CapacityRow(ApiModel):
    resource: str = Field(
        description="The extended resource, e.g. `nvidia.com/mig-1g.10gb` or `nvidia.com/gpu`."
    )
    profile: str | None = Field(default=None, description="The MIG profile; null for whole GPUs.")
    gpu_model: str = Field(
        description="From the node label nvidia.com/gpu.product, e.g. NVIDIA-H100-80GB-HBM3."
    )
    total: int = Field(ge=0, description="Allocatable on the schedulable nodes.")
    used: int = Field(ge=0, description="Requested by pods that are not finished.")
    free: int = Field(ge=0)
    nodes: int = Field(ge=0, description="Nodes offering this resource.")


class ClusterCapacity(ApiModel):
    """Free and total GPUs and MIG slices per profile and GPU model, from nodes and pods."""

    available: bool = Field(description="False when no cluster source is configured or it cannot be read.")
    message: str = ""
    rows: list[CapacityRow] = Field(default_factory=list)
    read_at: float | None = None
