"""Kernelspecs that run Python from a packed image instead of from an environment folder."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from ..errors import Conflict, NotFound
from ..kernels import METADATA_KEY, install_spec, kernels_dir, unregister
from ..models.envs import KernelInfo
from ..models.images import Image
from .mounts import mount_root


def runtime_available(container: str | None) -> str:
    """Which tool will open the image, or Conflict saying what is missing."""
    if shutil.which("squashfuse") and os.path.exists("/dev/fuse"):
        return "squashfuse"
    if (shutil.which("apptainer") or shutil.which("singularity")) and container:
        return "apptainer"
    raise Conflict(
        "A kernel from an image needs squashfuse (with /dev/fuse) or apptainer with "
        "c.GpuEnvApp.image_kernel_container set; neither is available on this server. Register the "
        "environment itself as a kernel instead.",
        reason="tool_missing",
    )


def register_image_kernel(
    image: Image,
    *,
    display_name: str | None = None,
    container: str | None = None,
    data_dir: Path | None = None,
) -> KernelInfo:
    tool = runtime_available(container)
    name = image_kernel_name(image)
    mount = mount_root() / image.id if tool == "squashfuse" else Path(image.usage.mount_path)
    argv = [sys.executable, "-m", "jupyter_gpu_env.images.launch", image.path, str(mount)]
    if tool == "apptainer" and container:
        argv += ["--container", container]
    spec = {
        "argv": [*argv, "--", "-f", "{connection_file}"],
        "display_name": display_name or f"Python ({image.environment}, image)",
        "language": "python",
        "interrupt_mode": "signal",
        "metadata": {METADATA_KEY: {"prefix": str(mount), "env_name": image.environment, "image": image.id}},
    }
    root = kernels_dir(data_dir)
    install_spec(root, root / name, spec)
    return KernelInfo(
        kernel_name=name,
        display_name=spec["display_name"],
        resource_dir=str(root / name),
        prefix=str(mount),
        env_name=image.environment,
        env={},
    )


def image_kernel_name(image: Image) -> str:
    return f"gpu-env-image-{image.id}".lower()


def unregister_image_kernel(image: Image, data_dir: Path | None = None, *, missing_ok: bool = False) -> str:
    """Remove the image's kernelspec; NotFound when there is none, unless ``missing_ok``."""
    name = image_kernel_name(image)
    try:
        unregister(name, data_dir)
    except NotFound:
        if not missing_ok:
            raise
    return name
