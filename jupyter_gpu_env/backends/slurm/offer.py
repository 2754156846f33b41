"""What a SLURM backend offers (its ``info``): the partitions ``sinfo`` reported, within the site's
settings (``c.SlurmBackend.partitions``, ``default_partition``, ``priorities``), as queues with their
limits, MIG profiles and priorities, and notes in words. Pure: tested without SLURM.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...models.backends import NORMAL_WORDS, OPPORTUNISTIC_WORDS, BackendInfo, PriorityOffer, ResourceLimits
from ...models.resources import MIG_PROFILE_RE
from .options import SlurmOptions
from .parse import Partition


def offered(options: SlurmOptions, partitions: Sequence[Partition], error: str | None) -> BackendInfo:
    """What the backend offers: its queues, their limits and MIG profiles from the last ``sinfo``
    (``partitions``; ``error``: why it failed), within the site's settings, in words too."""
    known = list(partitions)
    hidden = priority_partition(options)  # reached by the priority, not offered as a queue of its own
    known = [p for p in known if p.name != hidden or p.name in options.partitions]
    shown = [p for p in known if not options.partitions or p.name in options.partitions]
    queues = list(options.partitions) or [p.name for p in known]
    default = options.default_partition or next((p.name for p in shown if p.default), None)
    if default is None and queues:
        default = queues[0]
    limits = ResourceLimits()
    mig: list[str] = []
    supports_gpus = True  # until sinfo says otherwise
    if shown:
        times = [p.max_time_seconds for p in shown]
        limits = ResourceLimits(
            max_cpus=max(p.max_cpus for p in shown) or None,
            max_memory_bytes=(max(p.max_memory_mb for p in shown) << 20) or None,
            max_gpus=max(p.max_gpus for p in shown),
            max_time_limit_seconds=None if None in times else max(t or 0 for t in times),
        )
        supports_gpus = any(p.max_gpus for p in shown)
        types = set().union(*(p.gpu_types for p in shown))
        mig = sorted(t for t in types if MIG_PROFILE_RE.fullmatch(t))
    notes = [
        "Runs the notebook with SLURM (sbatch); job folders must be on a filesystem the nodes share.",
        "SLURM checks each request when it is submitted; what it refuses is shown with its own message.",
    ]
    if not supports_gpus:
        notes.append("No partition offered here has GPUs (gres gpu).")
    elif options.gpu_type:
        notes.append(f"Whole GPUs are requested as gres gpu:{options.gpu_type}:N.")
    if options.image_runtime:
        notes.append(f"Packed images are opened on the node with {options.image_runtime}.")
    else:
        notes.append(
            "Packed images are off for this backend (set c.SlurmBackend.image_runtime once the nodes "
            "have apptainer or squashfuse)."
        )
    if error:
        notes.append(f"SLURM could not be asked for its partitions: {error}")
    return BackendInfo(
        name=options.name,
        kind=options.kind,
        queues=queues,
        default_queue=default,
        limits=limits,
        mig_profiles=mig,
        supports_images=bool(options.image_runtime),
        supports_gpus=supports_gpus,
        enforced=["cpus", "memory", "gpus", "time_limit"],
        notes=notes,
        priorities=_priorities(options),
    )


def _priorities(options: SlurmOptions) -> list[PriorityOffer]:
    offers = [PriorityOffer(name="normal", description=NORMAL_WORDS)]
    if (opportunistic := options.priorities.get("opportunistic")) is not None:
        words = opportunistic.get("description") or OPPORTUNISTIC_WORDS
        offers.append(PriorityOffer(name="opportunistic", description=words))
    return offers


def priority_partition(options: SlurmOptions) -> str | None:
    """The partition opportunistic jobs go to (reached by the priority, not offered as a queue)."""
    return (options.priorities.get("opportunistic") or {}).get("partition")
