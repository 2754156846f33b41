"""Which tool opens a packed image on this machine: asked in one place.

Jobs run a notebook inside an image with apptainer (or singularity) or a squashfuse mount; kernels from
an image mount it with squashfuse where FUSE is usable, else bind it with apptainer; SIF images are built
with apptainer.
"""

from __future__ import annotations

import os
import shutil

from ..errors import Conflict


def apptainer() -> str | None:
    """apptainer (or its former name, singularity), if installed."""
    return shutil.which("apptainer") or shutil.which("singularity")


def squashfuse() -> str | None:
    """squashfuse, if installed and FUSE is usable here (/dev/fuse)."""
    tool = shutil.which("squashfuse")
    return tool if tool and os.path.exists("/dev/fuse") else None


def for_jobs() -> str | None:
    """The tool that could run a job in a packed image here, by name, or None."""
    for tool in ("apptainer", "singularity", "squashfuse"):
        if shutil.which(tool):
            return tool
    return None


def for_kernels(container: str | None) -> str:
    """Which tool will open the image for a kernel, or Conflict saying what is missing."""
    if squashfuse():
        return "squashfuse"
    if apptainer() and container:
        return "apptainer"
    raise Conflict(
        "A kernel from an image needs squashfuse (with /dev/fuse) or apptainer with "
        "c.GpuEnvApp.image_kernel_container set; neither is available on this server. Register the "
        "environment itself as a kernel instead.",
        reason="tool_missing",
    )
