""" "Does this environment see the GPU?": run a check with the environment's own Python and explain it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .. import proc
from ..errors import CommandFailed, Conflict
from ..models.gpu import GpuCheck

_SCRIPT = (Path(__file__).with_name("envcheck_script.py")).read_bytes()


def _verdict(raw: dict[str, Any]) -> tuple[bool, str]:
    driver, fw = raw.get("driver") or {}, raw.get("framework")
    if fw and fw.get("available") and fw.get("computed", True):
        names = ", ".join(fw.get("names") or []) or f"{fw.get('count')} device(s)"
        return True, f"{fw['name']} {fw.get('version', '')} computes on the GPU: {names}."
    if fw and fw.get("error"):
        return False, f"{fw['name']} is installed but cannot use the GPU: {fw['error']}"
    if not driver.get("loaded"):
        return False, "The NVIDIA driver library (libcuda) is not visible here, so no CUDA program can run."
    if not driver.get("count"):
        return False, "The driver loads but no device is visible (check CUDA_VISIBLE_DEVICES and your slice)."
    names = ", ".join(driver.get("names") or [])
    if fw is None:
        return True, f"The driver sees {names}; no torch or cupy in this environment to test a computation."
    return False, f"The driver sees {names}, but {fw['name']} reports no usable device (a CPU-only build?)."


async def check_environment(prefix: Path, limit_seconds: float = 120.0) -> GpuCheck:
    python = prefix / "bin" / "python"
    if not python.exists():
        raise Conflict(f"{prefix} has no bin/python, so nothing can be checked there.", reason="no_python")
    env = {**os.environ, "PATH": f"{prefix}/bin:{os.environ.get('PATH', '')}", "CONDA_PREFIX": str(prefix)}
    try:
        result = await proc.run(
            [str(python), "-"], stdin=_SCRIPT, env=env, timeout=limit_seconds, nice=proc.BACKGROUND
        )
    except CommandFailed as e:
        return GpuCheck(
            ok=False, message=f"The check could not run in this environment: {e.message}", details={}
        )
    raw = json.loads(result.stdout.strip().splitlines()[-1])
    ok, message = _verdict(raw)
    return GpuCheck(ok=ok, message=message, details=raw)
