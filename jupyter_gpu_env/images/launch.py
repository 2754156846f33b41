"""Start a kernel from a squashfs image: mount it (squashfuse) or bind it (apptainer), then exec Python.

Run by a kernelspec as ``python -m jupyter_gpu_env.images.launch IMAGE MOUNT [--container SIF] -- ARGS``.
The mount is shared by every kernel of the same image and stays until the machine restarts or the
user unmounts it; the kernel's process replaces this one, so Jupyter signals the kernel directly.

This is a separate program that Jupyter starts as the kernel command, not server code: it blocks and
execs by design, so it does not use the server's asyncio subprocess seam.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from . import runtime
from .mounts import is_mounted


def mount(image: Path, mountpoint: Path) -> None:
    if is_mounted(mountpoint):
        return
    mountpoint.mkdir(parents=True, exist_ok=True)
    # squashfuse daemonizes once the mount is ready, so waiting for it is waiting for the mount.
    done = subprocess.run(["squashfuse", str(image), str(mountpoint)], capture_output=True, text=True)  # noqa: S603
    if done.returncode != 0 and not is_mounted(mountpoint):
        raise SystemExit(f"squashfuse could not mount {image} at {mountpoint}: {done.stderr.strip()}")


def kernel_env(prefix: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{prefix}/bin:{env.get('PATH', '/usr/bin:/bin')}"
    env["CONDA_PREFIX"] = prefix
    return env


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m jupyter_gpu_env.images.launch")
    parser.add_argument("image", type=Path)
    parser.add_argument("mount", type=Path, help="where the environment appears (the pack's dest prefix)")
    parser.add_argument("--container", help="with apptainer: the container to run in")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments for ipykernel_launcher")
    ns = parser.parse_args(argv)
    args = ns.args[1:] if ns.args[:1] == ["--"] else ns.args
    python_args = ["-m", "ipykernel_launcher", *args]
    if runtime.squashfuse():
        mount(ns.image, ns.mount)
        python = str(ns.mount / "bin" / "python")
        os.execve(python, [python, *python_args], kernel_env(str(ns.mount)))
    tool = runtime.apptainer()
    if tool and ns.container:
        bind = f"{ns.image}:{ns.mount}:image-src=/"
        python = f"{ns.mount}/bin/python"
        argv_ = [tool, "exec", "--bind", bind, ns.container, python, *python_args]
        os.execve(tool, argv_, kernel_env(str(ns.mount)))
    raise SystemExit("Neither squashfuse (with /dev/fuse) nor apptainer is available to open the image.")


if __name__ == "__main__":
    main(sys.argv[1:])
