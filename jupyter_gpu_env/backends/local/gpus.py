"""The local backend's GPUs: what it hands out (whole GPUs, MIG slices), and to whom.

A job that asks for ``gpus: k`` gets k whole GPUs of its own, one that asks for a MIG profile one slice
of it, as ``CUDA_VISIBLE_DEVICES`` (a GPU's or a MIG device's UUID); it waits while none are free. A
job that asks nothing of GPUs sees the machine's GPUs as the server does, shared, and one that asks for
``gpus: 0`` sees none. The inventory comes from ``c.LocalBackend.gpus`` or, left empty, from
``nvidia-smi -L``: every GPU without MIG, and every MIG device of those with it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ...gpu.sources.smi import ListedGpu
from ...models.cluster import CapacityRow
from ...models.resources import MIG_PROFILE_RE, JobResources

WHOLE = "whole"
# what CUDA_VISIBLE_DEVICES takes: an index, or a GPU-/MIG- UUID
_ID = re.compile(r"^([0-9]{1,3}|(GPU|MIG)-[A-Za-z0-9/-]{1,120})$")


@dataclass(frozen=True)
class LocalGpu:
    id: str  # as CUDA_VISIBLE_DEVICES names it
    profile: str | None = None  # a MIG profile; None for a whole GPU
    model: str = "GPU"


def parse_inventory(entries: Sequence[str]) -> list[LocalGpu]:
    """``["GPU-8f..", "MIG-1a..:1g.10gb", "0:whole"]`` -> the GPUs; ValueError naming a bad entry."""
    found: list[LocalGpu] = []
    for entry in entries:
        ident, _, kind = entry.strip().partition(":")
        if not _ID.match(ident):
            raise ValueError(
                f"c.LocalBackend.gpus: '{entry}' does not name a GPU: give an index (0), a GPU-… or MIG-… "
                "UUID (nvidia-smi -L lists them), optionally followed by ':1g.10gb' for a MIG slice."
            )
        if kind and kind != WHOLE and not MIG_PROFILE_RE.match(kind):
            raise ValueError(
                f"c.LocalBackend.gpus: '{entry}': '{kind}' is not a MIG profile such as 1g.10gb."
            )
        if any(g.id == ident for g in found):
            raise ValueError(f"c.LocalBackend.gpus names '{ident}' twice.")
        found.append(LocalGpu(ident, None if kind in ("", WHOLE) else kind))
    return found


def from_listing(listed: Iterable[ListedGpu]) -> list[LocalGpu]:
    """What ``nvidia-smi -L`` lists: a GPU without MIG whole, a GPU with MIG as its slices."""
    found: list[LocalGpu] = []
    for gpu in listed:
        model = gpu.name.replace("NVIDIA ", "")
        if gpu.migs:
            found.extend(LocalGpu(m.uuid, m.profile, model) for m in gpu.migs)
        else:
            found.append(LocalGpu(gpu.uuid, None, model))
    return found


def wants_gpus(res: JobResources) -> bool:
    """Does the job ask for GPUs of its own (rather than the machine's, shared, or none)?"""
    return bool(res.mig_profile) or bool(res.gpus)


def allocate(inventory: Sequence[LocalGpu], taken: Iterable[str], res: JobResources) -> list[str] | None:
    """The devices to give a job that asks for its own, or None while not enough are free."""
    busy = set(taken)
    if res.mig_profile:
        free = [g.id for g in inventory if g.profile == res.mig_profile and g.id not in busy]
        return free[:1] or None
    free = [g.id for g in inventory if g.profile is None and g.id not in busy]
    want = res.gpus or 0
    return free[:want] if want and len(free) >= want else None


def can_ever_fit(inventory: Sequence[LocalGpu], res: JobResources) -> str | None:
    """Why the job could never start here (more GPUs than there are, an absent profile); None if it can."""
    if res.mig_profile:
        if not any(g.profile == res.mig_profile for g in inventory):
            offered = sorted({g.profile for g in inventory if g.profile})
            return f"this machine has no {res.mig_profile} MIG slice (it has: {', '.join(offered) or 'none'})"
        return None
    whole = sum(1 for g in inventory if g.profile is None)
    if res.gpus and res.gpus > whole:
        return f"this machine has {whole} whole GPU{'s' if whole != 1 else ''}, not {res.gpus}"
    return None


def waiting_words(inventory: Sequence[LocalGpu], taken: Iterable[str], res: JobResources) -> str:
    """``Waiting for a free 1g.10gb slice: 2 of 2 in use.``"""
    busy = set(taken)
    if res.mig_profile:
        kind = [g for g in inventory if g.profile == res.mig_profile]
        what = f"a free {res.mig_profile} slice"
    else:
        kind = [g for g in inventory if g.profile is None]
        what = "a free GPU" if res.gpus == 1 else f"{res.gpus} free GPUs"
    used = sum(1 for g in kind if g.id in busy)
    return f"Waiting for {what}: {used} of {len(kind)} in use."


def capacity_rows(inventory: Sequence[LocalGpu], taken: Iterable[str]) -> list[CapacityRow]:
    """Free and total slices and GPUs, by profile and model, as a cluster's capacity reads."""
    busy = set(taken)
    total: Counter[tuple[str | None, str]] = Counter((g.profile, g.model) for g in inventory)
    used: Counter[tuple[str | None, str]] = Counter((g.profile, g.model) for g in inventory if g.id in busy)
    return [
        CapacityRow(
            resource=f"nvidia.com/mig-{profile}" if profile else "nvidia.com/gpu",
            profile=profile,
            gpu_model=model,
            total=n,
            used=used[(profile, model)],
            free=n - used[(profile, model)],
            nodes=1,
        )
        for (profile, model), n in sorted(total.items(), key=lambda kv: (kv[0][0] or "", kv[0][1]))
    ]


def to_preempt(
    inventory: Sequence[LocalGpu],
    held: Mapping[str, Sequence[str]],
    taken: set[str],
    candidates: Sequence[str],
    res: JobResources,
) -> list[str]:
    """Which of ``candidates`` (opportunistic jobs, in the order to stop them) to stop so that a job
    asking ``res`` can start: only those holding GPUs of the kind it asks for, no more than it needs, and
    none at all when stopping every one of them would not be enough (normal jobs hold the rest)."""
    useful = {g.id for g in inventory if g.profile == res.mig_profile}
    holding = [c for c in candidates if useful & set(held.get(c, ()))]
    if allocate(inventory, taken - {d for c in holding for d in held[c]}, res) is None:
        return []
    chosen: list[str] = []
    for c in holding:
        if allocate(inventory, taken - {d for x in chosen for d in held[x]}, res) is not None:
            break
        chosen.append(c)
    return chosen


def taken_by(held: Mapping[str, Sequence[str]], inventory: Sequence[LocalGpu]) -> set[str]:
    """The inventory's devices that running jobs hold (an id no longer in the inventory is ignored)."""
    known = {g.id for g in inventory}
    return {d for devices in held.values() for d in devices if d in known}
