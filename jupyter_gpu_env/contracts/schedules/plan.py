"""What a backend is told of a schedule it keeps itself, and what it answers.

A schedule lives where its runs run, so that a culled Jupyter server stops nothing: SLURM keeps one
job waiting for the next due time (a chain of ``sbatch --begin``), Kubernetes a CronJob. The schedule's
folder (``schedule.json``, the notebook's snapshot, ``runs/``) is on the storage the cluster shares; what
starts a run there is the backend's own tick, which makes the run's folder and its
record, so the server adopts the run when it next looks. A backend that keeps no schedules (local)
leaves them to the server's own timer while it runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ...models.jobs import Job

Overlap = Literal["skip", "allow"]


@dataclass(frozen=True)
class SchedulePlan:
    """One schedule as its backend needs it."""

    id: str
    name: str
    folder: Path  # schedule.json, input.ipynb, runs/: on storage the cluster shares
    template: Job  # what every run's record starts from: backend, queue, resources, runtime
    expression: str  # as the user wrote it: a cron line or an ISO-8601 repeating interval
    cron: str | None  # the five-field cron line, when the expression is (or is written as) one
    timezone: str  # an IANA name
    overlap: Overlap
    active: bool
    next_due: float | None  # Unix time of the next run; None when no run is due any more
    generation: int  # bumped on every change: a tick of an older generation re-reads the schedule
    starting_deadline_seconds: int = 300  # a run that cannot start this late is skipped
    sweep_size: int | None = None  # a scheduled sweep: its runs at each due time


@dataclass(frozen=True)
class Armed:
    """How a backend holds a schedule now."""

    handle: str | None  # SLURM's id of the waiting job; the CronJob's name; None while none is held
    present: bool  # False: the backend no longer holds it (cancelled by an admin, lost in a restart)
    message: str = ""  # in words, for the UI: "Waits in SLURM as job 123 for 06:00 UTC."
