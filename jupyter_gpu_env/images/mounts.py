"""Where images are mounted for kernels, and unmounting them again.

A kernel from an image (images/launch.py) mounts it with squashfuse under the user's runtime folder,
``<jupyter_runtime_dir>/gpu-env-mounts/<image id>``, shared by every kernel of that image. squashfuse
runs as its own daemon, so nothing ends the mount when the kernels or the server stop: the server
unmounts them when it stops and when an image is deleted, and sweeps the ones a crash left at start.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

from jupyter_core.paths import jupyter_runtime_dir

from .. import proc


def mount_root() -> Path:
    """Per-user mount points: the image's dest prefix (/opt/...) is usually not writable by users."""
    return Path(jupyter_runtime_dir()) / "gpu-env-mounts"


def _unescape(field: str) -> str:
    # /proc/self/mounts writes blanks and backslashes in paths as octal escapes (\040).
    return field.encode().decode("unicode_escape") if "\\" in field else field


def mounted(root: Path | None = None) -> list[Path]:
    """Mount points at or under ``root`` (default: every one), from /proc/self/mounts (blocking)."""
    base = os.path.realpath(root) if root is not None else None
    try:
        with open("/proc/self/mounts", encoding="utf-8", errors="replace") as f:
            points = [_unescape(line.split()[1]) for line in f if len(line.split()) > 1]
    except OSError:
        return []
    if base is None:
        return [Path(p) for p in points]
    return [Path(p) for p in points if p == base or p.startswith(base + os.sep)]


def is_mounted(path: Path) -> bool:
    target = os.path.realpath(path)
    return any(str(p) == target for p in mounted())


def _tools(lazy: bool) -> list[list[str]]:
    out = []
    for tool in ("fusermount3", "fusermount"):
        if shutil.which(tool):
            out.append([tool, "-u", *(["-z"] if lazy else [])])
    if shutil.which("umount"):
        out.append(["umount", *(["-l"] if lazy else [])])
    return out


async def unmount(path: Path, *, lazy: bool = False) -> bool:
    """Unmount ``path``; True once it is no longer mounted. Without ``lazy``, a busy mount stays."""
    for argv in _tools(lazy):
        res = await proc.run([*argv, str(path)], check=False, timeout=30)
        if res.returncode == 0 or not await asyncio.to_thread(is_mounted, path):
            break
    if await asyncio.to_thread(is_mounted, path):
        return False
    await asyncio.to_thread(_remove_empty, path)
    return True


def _remove_empty(path: Path) -> None:
    try:
        path.rmdir()
    except OSError:
        pass


async def sweep(root: Path | None = None) -> list[Path]:
    """At start: unmount what a previous server left under ``root`` and nothing uses any more.

    A mount still in use (a kernel of the previous server outlived it) stays; one whose squashfuse
    died ("transport endpoint is not connected") is detached.
    """
    root = root or mount_root()
    gone = []
    for point in await asyncio.to_thread(mounted, root):
        alive = await asyncio.to_thread(os.path.isdir, point)
        if await unmount(point, lazy=not alive):
            gone.append(point)
    return gone


async def unmount_all(root: Path | None = None) -> list[Path]:
    """At stop: detach every mount under ``root`` (lazily: kernels shutting down may still hold files)."""
    root = root or mount_root()
    return [p for p in await asyncio.to_thread(mounted, root) if await unmount(p, lazy=True)]
