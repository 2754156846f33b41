"""A throw-away kernelspec that runs a conda environment's Python, for one job.

The job folder doubles as a Jupyter data directory: ``JOB_FOLDER/kernels/<name>/kernel.json``, found
through ``JUPYTER_PATH``. Written on the node, at run time, so PATH is the node's.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from . import jobfiles as jf

ENV_KERNEL = "gpu-env-job"


def env_kernelspec(prefix: str | os.PathLike[str], env_name: str, base_env: Mapping[str, str]) -> dict:
    """The kernel.json content: ENV/bin/python -m ipykernel_launcher, with the environment activated.

    Activation is what ``conda activate`` does that matters to a kernel: the env's ``bin`` first on
    PATH (so ``!pip``, compilers and CUDA tools come from it) and ``CONDA_PREFIX`` (which many
    libraries use to find their data).
    """
    prefix = Path(prefix)
    path = os.pathsep.join(p for p in (str(prefix / "bin"), base_env.get("PATH", os.defpath)) if p)
    return {
        "argv": [str(prefix / "bin" / "python"), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": f"Python ({env_name})",
        "language": "python",
        "interrupt_mode": "signal",
        "env": {"PATH": path, "CONDA_PREFIX": str(prefix), "CONDA_DEFAULT_ENV": env_name},
        "metadata": {"debugger": True},
    }


def write_env_kernelspec(
    folder: Path,
    prefix: str | os.PathLike[str],
    *,
    env_name: str,
    kernel_name: str = ENV_KERNEL,
    base_env: Mapping[str, str] | None = None,
) -> Path:
    """Write ``folder/kernels/<kernel_name>/kernel.json``; return its path. Add ``folder`` to JUPYTER_PATH."""
    spec_dir = folder / jf.KERNELS / kernel_name
    spec_dir.mkdir(parents=True, exist_ok=True)
    target = spec_dir / "kernel.json"
    jf.write_json_atomic(
        target, env_kernelspec(prefix, env_name, os.environ if base_env is None else base_env)
    )
    return target
