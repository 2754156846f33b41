"""Small response models of the environment routes that the library layer has no use for."""

from __future__ import annotations

from pydantic import Field

from ..common import ApiModel


class DeletedEnvironment(ApiModel):
    name: str
    kernel_removed: str | None = Field(default=None, description="The kernelspec removed with it, if any.")


class KernelRemoved(ApiModel):
    kernel_name: str
