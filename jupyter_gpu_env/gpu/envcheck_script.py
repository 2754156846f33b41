"""Run INSIDE a conda environment's own Python (fed on stdin): can this environment use the GPU?

It must work with nothing but the standard library, since the environment may hold no package of
ours; it prints one JSON object. Frameworks are tried in the order users rely on them.
"""

import ctypes
import json
import os
import sys
from typing import Any

# Return annotations are strings (locals are never evaluated): this runs on whatever Python the environment holds.


def _driver() -> "dict[str, Any]":
    for name in ("libcuda.so.1", "libcuda.so"):
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        if lib.cuInit(0) != 0:
            return {"loaded": True, "count": 0, "error": "cuInit failed: no usable device"}
        count = ctypes.c_int()
        lib.cuDeviceGetCount(ctypes.byref(count))
        names = []
        for i in range(count.value):
            dev, buf = ctypes.c_int(), ctypes.create_string_buffer(128)
            lib.cuDeviceGet(ctypes.byref(dev), i)
            lib.cuDeviceGetName(buf, 128, dev)
            names.append(buf.value.decode(errors="replace"))
        return {"loaded": True, "count": count.value, "names": names}
    return {"loaded": False, "count": 0, "error": "libcuda.so.1 (the NVIDIA driver library) cannot be loaded"}


def _framework() -> "dict[str, Any] | None":
    try:
        import torch

        info: dict[str, Any] = {
            "name": "torch",
            "version": torch.__version__,
            "cuda_build": torch.version.cuda,
        }
        info["available"] = bool(torch.cuda.is_available())
        info["count"] = torch.cuda.device_count() if info["available"] else 0
        if info["available"]:
            x = torch.ones(1024, device="cuda")
            info["computed"] = float((x * 2).sum().item()) == 2048.0
            info["names"] = [torch.cuda.get_device_name(i) for i in range(info["count"])]
        return info
    except ImportError:
        pass
    except Exception as e:
        return {"name": "torch", "available": False, "error": f"{type(e).__name__}: {e}"}
    try:
        import cupy

        info = {"name": "cupy", "version": cupy.__version__}
        info["count"] = cupy.cuda.runtime.getDeviceCount()
        info["available"] = info["count"] > 0
        if info["available"]:
            info["computed"] = int((cupy.ones(1024) * 2).sum()) == 2048
        return info
    except ImportError:
        return None
    except Exception as e:
        return {"name": "cupy", "available": False, "error": f"{type(e).__name__}: {e}"}


print(
    json.dumps(
        {
            "python": sys.version.split()[0],
            "prefix": sys.prefix,
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
            "driver": _driver(),
            "framework": _framework(),
        }
    )
)
