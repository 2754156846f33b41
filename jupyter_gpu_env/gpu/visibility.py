"""Which GPUs and MIG devices this server (and the kernels it starts) can use.

Two variables decide it, at different layers:

- ``NVIDIA_VISIBLE_DEVICES`` is read by the NVIDIA container runtime when the container is
  created (Kubernetes' device plugin sets it to the GPU or MIG UUIDs it allocated). Inside the
  container, NVML already shows only what the runtime mounted, so this variable only narrows
  the list where it names UUIDs that the reading contains (a privileged container, or recorded
  output of a whole machine). Its indices (``0``, ``0:1``) are host numbers that no longer
  match inside the container and are left alone; ``void``, empty and unset mean the runtime did
  nothing, ``all`` everything, ``none`` nothing.
- ``CUDA_VISIBLE_DEVICES`` is read by CUDA in every process, as CUDA reads it: unset admits
  everything; empty admits nothing; otherwise a comma-separated list of indices, ``GPU-`` or
  ``MIG-`` UUIDs (a unique prefix is enough) and old ``MIG-GPU-<uuid>/<gi>/<ci>`` names, read up
  to the first entry that names no device (so ``-1`` hides every GPU). Indices are taken as
  NVML's, which is CUDA's order with ``CUDA_DEVICE_ORDER=PCI_BUS_ID`` and on any machine whose
  GPUs are all one model. A GPU named by index or UUID admits its MIG devices.

A GPU counts as visible when it is admitted, or, with MIG, when one of its MIG devices is.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, cast

from ..models import GpuDevice, GpuStatus
from ..models.gpu import GpuReason

_LEGACY_MIG = re.compile(r"^MIG-(GPU-[0-9a-f-]+)/(\d+)/(\d+)$", re.IGNORECASE)


@dataclass(frozen=True)
class DeviceFilter:
    mode: Literal["all", "none", "list"]
    entries: tuple[str, ...] = ()


def parse_cuda_visible_devices(value: str | None) -> DeviceFilter:
    if value is None:
        return DeviceFilter("all")
    entries = tuple(e.strip() for e in value.split(","))
    if entries == ("",):
        return DeviceFilter("none")
    return DeviceFilter("list", entries)


def parse_nvidia_visible_devices(value: str | None) -> DeviceFilter:
    value = (value or "").strip()
    if value.lower() in ("", "void", "all"):
        return DeviceFilter("all")
    if value.lower() == "none":
        return DeviceFilter("none")
    return DeviceFilter("list", tuple(e.strip() for e in value.split(",") if e.strip()))


# A device is addressed as (gpu position, MIG position or None for the whole GPU).
Key = tuple[int, int | None]


def _match_uuid(devices: list[GpuDevice], entry: str) -> list[Key]:
    """Devices named by a (possibly abbreviated) UUID; more than one means ambiguous."""
    if m := _LEGACY_MIG.match(entry):
        gpu_uuid, gi, ci = m[1].lower(), int(m[2]), int(m[3])
        return [
            (g, i)
            for g, gpu in enumerate(devices)
            if (gpu.uuid or "").lower() == gpu_uuid
            for i, md in enumerate(gpu.mig_devices)
            if (md.gpu_instance_id, md.compute_instance_id) == (gi, ci)
        ]
    prefix = entry.lower()
    found: list[Key] = []
    for g, gpu in enumerate(devices):
        if (gpu.uuid or "").lower().startswith(prefix):
            found.append((g, None))
        found += [
            (g, i) for i, md in enumerate(gpu.mig_devices) if (md.uuid or "").lower().startswith(prefix)
        ]
    return found


def _cuda_admitted(devices: list[GpuDevice], entries: tuple[str, ...]) -> set[Key]:
    admitted: set[Key] = set()
    for entry in entries:
        if entry.isdigit():
            if int(entry) >= len(devices):
                break
            admitted.add((int(entry), None))
            continue
        found = _match_uuid(devices, entry) if entry[:4].upper() in ("GPU-", "MIG-") else []
        if len(found) != 1:
            break  # CUDA stops at the first entry it cannot resolve
        admitted.add(found[0])
    return admitted


def _nvidia_admitted(devices: list[GpuDevice], entries: tuple[str, ...]) -> set[Key] | None:
    """The devices named by UUID, or None where no UUID entry names anything we can see."""
    found = {k for e in entries if e[:4].upper() in ("GPU-", "MIG-") for k in _match_uuid(devices, e)}
    return found or None


def _admits(keys: set[Key] | None, g: int, i: int | None) -> bool:
    return keys is None or (g, None) in keys or (i is not None and (g, i) in keys)


def mark_visible(devices: list[GpuDevice], env: Mapping[str, str] | None = None) -> list[GpuDevice]:
    """Set ``visible`` on ``devices`` and their MIG devices from the environment (``os.environ``
    by default); returns the same list. In place because readers build fresh devices every
    sample, and copying them would double the cost of one."""
    env = os.environ if env is None else env
    cuda = parse_cuda_visible_devices(env.get("CUDA_VISIBLE_DEVICES"))
    nvidia = parse_nvidia_visible_devices(env.get("NVIDIA_VISIBLE_DEVICES"))
    none: set[Key] = set()
    filters: list[set[Key] | None] = [
        none
        if nvidia.mode == "none"
        else _nvidia_admitted(devices, nvidia.entries)
        if nvidia.entries
        else None,
        none
        if cuda.mode == "none"
        else _cuda_admitted(devices, cuda.entries)
        if cuda.mode == "list"
        else None,
    ]
    for g, gpu in enumerate(devices):
        gpu_admitted = all(_admits(f, g, None) for f in filters)
        for i, md in enumerate(gpu.mig_devices):
            md.visible = all(_admits(f, g, i) for f in filters)
        gpu.visible = any(md.visible for md in gpu.mig_devices) if gpu.mig_devices else gpu_admitted
    return devices


def visibility_status(
    devices: list[GpuDevice], env: Mapping[str, str] | None, *, reason: str, message: str
) -> GpuStatus:
    """The status of a reading whose devices were marked: says which variable hid them all."""
    if any(d.visible for d in devices):
        return GpuStatus(available=True, reason=cast("GpuReason", reason), message=message)
    env = os.environ if env is None else env
    setting = " and ".join(
        f"{k}={env[k]!r}" for k in ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES") if k in env
    )
    return GpuStatus(
        available=False,
        reason=cast("GpuReason", "no_device" if reason == "ok" else reason),
        message=f"No GPU visible: {setting or 'the environment'} hides the {len(devices)} GPU(s) on this machine.",
    )
