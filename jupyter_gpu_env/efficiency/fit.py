"""The choice itself, pure: which of a backend's offers is the smallest that holds a measured peak of GPU
memory with headroom. Tested alone, against recorded MIG devices of A100s and H100s."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..gpu.mig import parse_profile
from ..models.gpu.advice import SuggestedResources

GB = 10**9


@dataclass(frozen=True)
class Offer:
    """One thing a backend can give a job: a MIG profile, or ``gpus`` whole GPUs."""

    memory_bytes: int | None  # None: not known (a whole GPU of a model never measured)
    mig_profile: str | None = None
    gpus: int = 0
    share: float = 1.0  # of a whole GPU's compute: 1g of 7 is 1/7

    def resources(self) -> SuggestedResources:
        if self.mig_profile is not None:
            return SuggestedResources(mig_profile=self.mig_profile, memory_bytes=self.memory_bytes)
        return SuggestedResources(gpus=self.gpus, memory_bytes=self.memory_bytes)


def profile_memory(profile: str, measured: Mapping[str, int] | None = None) -> int | None:
    """A MIG profile's memory in bytes: as a device of that profile measured it where one was seen,
    else what its name promises in decimal gigabytes (``1g.10gb``: 10 GB). The name never promises more
    than the slice has: NVIDIA rounds its memory down (an H100's 1g.10gb holds 9.75 GiB, 10.5 GB)."""
    if measured and profile in measured:
        return measured[profile]
    parsed = parse_profile(profile)
    return None if parsed is None else parsed.memory_gb * GB


def offers(
    mig_profiles: Iterable[str],
    *,
    whole_gpus: int | None,
    gpu_memory_bytes: int | None,
    measured: Mapping[str, int] | None = None,
) -> list[Offer]:
    """What a backend offers, smallest first: its MIG profiles (by memory, then compute), then 1..N
    whole GPUs (``whole_gpus`` 0: none; None: any number, up to 8 considered)."""
    found: list[Offer] = []
    for name in mig_profiles:
        parsed = parse_profile(name)
        if parsed is None:
            continue
        found.append(Offer(profile_memory(name, measured), mig_profile=name, share=parsed.gpu_slices / 7))
    found.sort(key=lambda o: (o.memory_bytes or 0, o.share, o.mig_profile or ""))
    most = 8 if whole_gpus is None else whole_gpus
    for n in range(1, most + 1):
        found.append(Offer(None if gpu_memory_bytes is None else n * gpu_memory_bytes, gpus=n, share=n))
    return found


def needed(peak_bytes: int, headroom: float) -> int:
    """The memory to ask for: the peak and ``headroom`` over it (0.2: 20 %)."""
    return math.ceil(peak_bytes * (1 + headroom))


def choose(peak_bytes: int, headroom: float, candidates: Sequence[Offer]) -> Offer | None:
    """The smallest offer that holds the peak with headroom. A whole GPU of unknown memory is taken
    to hold it when nothing smaller does; None when nothing offered is enough."""
    want = needed(peak_bytes, headroom)
    for offer in candidates:
        if offer.memory_bytes is not None and offer.memory_bytes >= want:
            return offer
    unknown = [o for o in candidates if o.memory_bytes is None]
    return unknown[0] if unknown else None
