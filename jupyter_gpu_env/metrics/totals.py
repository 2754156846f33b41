"""Pure: what one reading of the job records says for /metrics, and how readings follow each other as
Prometheus counters — never lower than the reading before (``Totals.after``).

The ledger's totals only grow while records are kept (a deleted job's record is hidden, its usage kept),
but a running job's figures are its runner's latest summary, whose idle share and mean utilization move
both ways between two readings; a counter that went down would read to Prometheus as a restart.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from ..models.jobs import JOB_STATES

# Upper bounds of the queue-wait histogram's buckets, in seconds (+Inf follows): from an idle cluster's
# seconds to a busy one's day.
WAIT_BUCKETS: tuple[float, ...] = (
    10.0,
    30.0,
    60.0,
    300.0,
    900.0,
    1800.0,
    3600.0,
    3 * 3600.0,
    6 * 3600.0,
    12 * 3600.0,
    24 * 3600.0,
)


@dataclass(frozen=True)
class Waits:
    """The queue waits of a backend's jobs that started: cumulative counts, one per bucket of
    ``WAIT_BUCKETS`` then +Inf (the count of all), and their sum."""

    buckets: tuple[int, ...] = (0,) * (len(WAIT_BUCKETS) + 1)
    sum_seconds: float = 0.0

    @property
    def count(self) -> int:
        return self.buckets[-1]

    def covers(self, earlier: Waits) -> bool:
        """Whether this histogram may follow ``earlier`` (no bucket and no sum lower)."""
        return self.sum_seconds >= earlier.sum_seconds and all(
            a >= b for a, b in zip(self.buckets, earlier.buckets, strict=True)
        )


@dataclass(frozen=True)
class BackendTotals:
    """A backend's counters since its first job: GPU-seconds (whole-GPU equivalents; a MIG slice counts
    its share) allocated, used (weighted by measured utilization), measured (whose utilization was
    measured), and idle (allocated while every device the job saw was under 5 %); energy; queue waits."""

    allocated_seconds: float = 0.0
    used_seconds: float = 0.0
    measured_seconds: float = 0.0
    idle_seconds: float = 0.0
    energy_joules: float = 0.0
    waits: Waits = field(default_factory=Waits)

    def after(self, earlier: BackendTotals) -> BackendTotals:
        return BackendTotals(
            allocated_seconds=max(self.allocated_seconds, earlier.allocated_seconds),
            used_seconds=max(self.used_seconds, earlier.used_seconds),
            measured_seconds=max(self.measured_seconds, earlier.measured_seconds),
            idle_seconds=max(self.idle_seconds, earlier.idle_seconds),
            energy_joules=max(self.energy_joules, earlier.energy_joules),
            waits=self.waits if self.waits.covers(earlier.waits) else earlier.waits,
        )


@dataclass(frozen=True)
class Totals:
    """One reading: the visible jobs by (backend, state), and each backend's counters."""

    read_at: float
    jobs: dict[tuple[str, str], int] = field(default_factory=dict)
    backends: dict[str, BackendTotals] = field(default_factory=dict)

    def job_counts(self) -> dict[tuple[str, str], int]:
        """Every state of every backend known, 0 where none is in it (a gauge that vanished would read
        as unknown, not as none)."""
        names = sorted({b for b, _ in self.jobs} | set(self.backends))
        return {(b, s): self.jobs.get((b, s), 0) for b in names for s in JOB_STATES}

    def after(self, earlier: Totals | None) -> Totals:
        """This reading as the counters' next values: each no lower than ``earlier``'s, a backend it no
        longer shows kept as it was."""
        if earlier is None:
            return self
        backends = dict(earlier.backends)
        for name, now in self.backends.items():
            backends[name] = now.after(earlier.backends[name]) if name in earlier.backends else now
        return dataclasses.replace(self, backends=backends)
