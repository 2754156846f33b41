from __future__ import annotations

from typing import Literal

from pydantic import Field

from .common import ApiModel

ImageFormat = Literal["squashfs", "sif"]
Compression = Literal["zstd", "xz", "none"]


class ImageRequest(ApiModel):
    format: ImageFormat = Field(
        default="squashfs", description="`squashfs` (always) or `sif` (needs apptainer)."
    )
    compression: Compression = Field(
        default="zstd", description="`zstd` (fast, default), `xz` (smaller, mounts on old kernels) or `none`."
    )


class ImageUsage(ApiModel):
    """Exact command lines to use an image; `MOUNT` is where the environment was packed to live."""

    mount_path: str = Field(
        description="The path the environment expects to live at (conda-pack --dest-prefix)."
    )
    apptainer: str = Field(description="Run Python from the image inside any container image with apptainer.")
    squashfuse: str = Field(
        description="Mount the image without root at a folder the user may make (`squashfuse_mount`), "
        "then use its bin/python."
    )
    squashfuse_mount: str = Field(
        default="", description="Where the squashfuse line mounts it, as the shell expands it."
    )
    unmount: str = Field(
        default="",
        description="Unmount what the squashfuse line mounted (fusermount3, fusermount or umount).",
    )
    unsquashfs: str = Field(description="Extract the image where FUSE is not available.")


class Image(ApiModel):
    id: str
    environment: str = Field(description="Name of the environment the image was packed from.")
    source_prefix: str
    content_hash: str = Field(
        description="sha256 over the environment's package records and untracked files."
    )
    format: ImageFormat
    compression: Compression
    path: str = Field(description="The image file on this server.")
    size_bytes: int = Field(ge=0)
    file_count: int = Field(ge=0, description="Files in the environment, all now in this one file.")
    env_size_bytes: int = Field(ge=0, description="The environment's size on disk when packed.")
    created_at: float
    pack_seconds: float = Field(ge=0)
    tools: dict[str, str] = Field(default_factory=dict, description="Versions of the tools that built it.")
    usage: ImageUsage


class ImageList(ApiModel):
    images: list[Image]
