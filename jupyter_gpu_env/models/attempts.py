"""A job's earlier attempts: an opportunistic job stopped for other work, requeued and resumed."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .common import ApiModel
from .gpu.jobuse import JOULES, EnergySource

AttemptEnd = Literal["preempted", "evicted", "node_lost"]
_HOURS = 1e7  # GPU-hours beyond any job's
_CELLS = 1_000_000


class JobAttempt(ApiModel):
    """One earlier attempt of a job that was stopped and requeued. The runner writes it in the job's
    folder, where the job's own code can write too: every value is bounded."""

    number: int = Field(ge=1, le=10_000, description="1 for the first attempt.")
    started_at: float | None = Field(default=None, ge=0)
    ended_at: float | None = Field(default=None, ge=0)
    reason: AttemptEnd = Field(
        description="Why it ended: `preempted` (the scheduler stopped it for other work), `evicted` "
        "(Kueue took its quota back), `node_lost` (its node or pod went away)."
    )
    message: str = Field(default="", max_length=2000)
    cells_done: int = Field(default=0, ge=0, le=_CELLS, description="Code cells it had finished.")
    gpu_hours_allocated: float | None = Field(default=None, ge=0, le=_HOURS)
    gpu_hours_used: float | None = Field(default=None, ge=0, le=_HOURS)
    energy_joules: float | None = Field(
        default=None, ge=0, le=JOULES, allow_inf_nan=False, description="Energy its GPUs drew."
    )
    energy_source: EnergySource | None = None
    resumed_at: float | None = Field(
        default=None, ge=0, description="When the next attempt started: between, the job waited in its queue."
    )


_WORDS = {"preempted": "preempted", "evicted": "evicted", "node_lost": "lost with its node"}
_TIMES = {1: "once", 2: "twice"}


def attempts_summary(attempts: list[JobAttempt]) -> str:
    """``"preempted twice, resumed"``: how a job's earlier attempts ended, for its message; "" for none."""
    if not attempts:
        return ""
    counts: dict[str, int] = {}
    for a in attempts:
        counts[a.reason] = counts.get(a.reason, 0) + 1
    parts = [f"{_WORDS[r]} {_TIMES.get(n, f'{n} times')}" for r, n in counts.items()]
    return ", ".join(parts) + ", resumed"


def with_summary(message: str, attempts: list[JobAttempt]) -> str:
    """``Running on n1 (SLURM job 7; preempted once, resumed).``, ``All cells ran (preempted once,
    resumed).``: a message that says how a resumed job got here (once, however often it is applied)."""
    summary = attempts_summary(attempts)
    if not summary or not message or summary in message:
        return message
    text = message.rstrip(".")
    return text[:-1] + f"; {summary})." if text.endswith(")") else f"{text} ({summary})."
