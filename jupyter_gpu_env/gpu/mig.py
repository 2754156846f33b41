"""MIG profile names: parse them, build them, and infer them where a tool prints none.

A profile name is ``<g>g.<mem>gb`` (``1g.10gb``): ``g`` GPU slices (compute) and the memory of
the GPU instance in marketing gigabytes. Where several compute instances share one GPU
instance the name gains a ``<c>c.`` prefix (``1c.3g.71gb``), and a few profiles carry a
suffix for media engines or graphics (``1g.5gb+me``, ``1g.24gb-me``, ``1g.24gb+gfx``).

``nvidia-smi -q -x`` and the default table print no profile names. NVML and ``nvidia-smi -L``
do; where neither is at hand, :func:`infer_profile` rebuilds the name from the SM count and
memory, and callers mark the result as inferred.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..models import GpuDevice

MIB = 1 << 20
GIB = 1 << 30

# Every MIG-capable GPU so far divides its memory into eighths (A30's quarters are pairs of them).
MEMORY_SLICES = 8
MAX_GPU_SLICES = 7

_PROFILE = re.compile(
    r"(?:(?P<c>\d+)c\.)?(?P<g>\d+)g\.(?P<mem>\d+)gb(?P<extra>(?:[+-][a-z]+(?:\.[a-z]+)*)*)",
    re.IGNORECASE,
)
_WHOLE = re.compile(rf"^\s*(?:mig[\s-]+)?{_PROFILE.pattern}\s*$", re.IGNORECASE)
# "NVIDIA H100 80GB HBM3 MIG 1g.10gb" (NVML device name), "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb"
# (GPU feature discovery), "nvidia.com/mig-1g.10gb" (device-plugin resource).
_IN_NAME = re.compile(rf"\bmig[\s-]+(?P<profile>{_PROFILE.pattern})\s*$", re.IGNORECASE)

# SMs in one GPU slice. Only the generations whose layout is documented are listed: a guess
# for another one would put a confident wrong name in front of users.
_SM_PER_SLICE = {"ampere": 14, "hopper": 16}
_ARCH_BY_NAME = (
    (re.compile(r"\b(A100|A30|A800)\b"), "ampere"),
    (re.compile(r"\b(H100|H200|H800|H20|GH200)\b"), "hopper"),
)


@dataclass(frozen=True)
class MigProfile:
    gpu_slices: int
    memory_gb: int
    compute_slices: int | None = None
    """Set only when the compute instance is smaller than its GPU instance (``1c.3g.71gb``)."""
    extra: str = ""

    @property
    def name(self) -> str:
        return profile_name(self.gpu_slices, self.memory_gb, self.compute_slices) + self.extra

    @property
    def gpu_instance_name(self) -> str:
        """The GPU instance's own profile (``3g.71gb`` for ``1c.3g.71gb``)."""
        return profile_name(self.gpu_slices, self.memory_gb) + self.extra


def profile_name(gpu_slices: int, memory_gb: int, compute_slices: int | None = None) -> str:
    base = f"{gpu_slices}g.{memory_gb}gb"
    if compute_slices is None or compute_slices == gpu_slices:
        return base
    return f"{compute_slices}c.{base}"


def parse_profile(text: str) -> MigProfile | None:
    """``1g.10gb``, ``MIG 1c.3g.71gb``, ``1g.5gb+me`` -> :class:`MigProfile`; anything else -> None."""
    m = _WHOLE.match(text)
    if m is None:
        return None
    c = int(m["c"]) if m["c"] else None
    return MigProfile(int(m["g"]), int(m["mem"]), c, m["extra"].lower())


def profile_from_device_name(name: str) -> str | None:
    """The profile at the end of a MIG device or product name, e.g. ``... MIG 1g.10gb``."""
    m = _IN_NAME.search(name.strip())
    return m["profile"] if m else None


def marketing_gb(total_bytes: int) -> int:
    """The size a GPU is sold as, from the memory the driver reports.

    Drivers report a little less than the sold size (81559 MiB on an "80GB" H100, 143771 MiB on
    a "141GB" H200), so rounding the GiB up recovers it; profile names are eighths of it.
    """
    return math.ceil(total_bytes / GIB - 1e-9)


def memory_label_gb(memory_bytes: int, parent_total_bytes: int) -> int:
    """The ``<mem>gb`` of a profile from its GPU instance's memory and the whole GPU's.

    NVIDIA names a GPU instance by its share of eighths of the sold size, rounded half up:
    4/8 of 141 GB is ``71gb`` although the instance has 69.75 GiB.
    """
    slices = max(1, round(MEMORY_SLICES * memory_bytes / parent_total_bytes))
    return math.floor(marketing_gb(parent_total_bytes) * slices / MEMORY_SLICES + 0.5)


def architecture_from_name(product_name: str) -> str | None:
    for pattern, arch in _ARCH_BY_NAME:
        if pattern.search(product_name):
            return arch
    return None


def sm_per_slice(architecture: str | None, product_name: str | None = None) -> int | None:
    arch = (architecture or "").strip().lower() or None
    if arch not in _SM_PER_SLICE and product_name:
        arch = architecture_from_name(product_name)
    return _SM_PER_SLICE.get(arch or "")


def slices_from_sms(sm_count: int, per_slice: int) -> int:
    # Larger instances get a few extra SMs (3g on H100 has 60, not 48), so round down.
    return min(MAX_GPU_SLICES, max(1, sm_count // per_slice))


def infer_profile(
    sm_count: int | None,
    memory_bytes: int | None,
    parent_total_bytes: int | None,
    per_slice: int | None,
    *,
    gpu_instance_sms: int | None = None,
) -> str | None:
    """Best-effort profile name from what ``nvidia-smi -q`` prints.

    ``gpu_instance_sms`` is the SM total of every compute instance in the same GPU instance,
    given when there is more than one; the name then gets the ``<c>c.`` prefix.
    """
    if not (sm_count and memory_bytes and parent_total_bytes and per_slice):
        return None
    c = slices_from_sms(sm_count, per_slice)
    g = slices_from_sms(gpu_instance_sms, per_slice) if gpu_instance_sms else c
    mem = memory_label_gb(memory_bytes, parent_total_bytes)
    return profile_name(g, mem, c if g != c else None)


def infer_missing_profiles(gpu: GpuDevice, architecture: str | None = None) -> GpuDevice:
    """Fill in the profile of each MIG device that has none, marking it as inferred."""
    per_slice = sm_per_slice(architecture, gpu.name)
    gi_sms: dict[int | None, int] = {}
    gi_count: dict[int | None, int] = {}
    for m in gpu.mig_devices:
        gi_sms[m.gpu_instance_id] = gi_sms.get(m.gpu_instance_id, 0) + (m.sm_count or 0)
        gi_count[m.gpu_instance_id] = gi_count.get(m.gpu_instance_id, 0) + 1
    for m in gpu.mig_devices:
        if m.profile is not None:
            continue
        shared = m.gpu_instance_id is not None and gi_count[m.gpu_instance_id] > 1
        m.profile = infer_profile(
            m.sm_count,
            m.memory_total_bytes,
            gpu.memory_total_bytes,
            per_slice,
            gpu_instance_sms=gi_sms[m.gpu_instance_id] if shared else None,
        )
        m.profile_inferred = m.profile is not None
    return gpu


# --- nvidia-smi mig -lgi: GPU instances and where they sit --------------------------------------


@dataclass(frozen=True)
class GpuInstanceRow:
    gpu_index: int
    profile: str
    profile_id: int
    gpu_instance_id: int
    placement_start: int
    placement_size: int


_LGI_ROW = re.compile(r"^\|\s*(\d+)\s+MIG\s+(\S+)\s+(\d+)\s+(\d+)\s+(\d+):(\d+)\s*\|$")


def parse_mig_lgi(text: str) -> list[GpuInstanceRow]:
    """``nvidia-smi mig -lgi`` -> one row per GPU instance with its placement."""
    rows = []
    for line in text.splitlines():
        if m := _LGI_ROW.match(line.strip()):
            rows.append(GpuInstanceRow(int(m[1]), m[2], *(int(m[i]) for i in range(3, 7))))
    return rows


def apply_placements(devices: list[GpuDevice], rows: Iterable[GpuInstanceRow]) -> list[GpuDevice]:
    by_gi = {(r.gpu_index, r.gpu_instance_id): r for r in rows}
    for gpu in devices:
        for md in gpu.mig_devices:
            r = by_gi.get((gpu.index, md.gpu_instance_id)) if md.gpu_instance_id is not None else None
            if r is not None:
                md.placement_start, md.placement_size = r.placement_start, r.placement_size
    return devices
