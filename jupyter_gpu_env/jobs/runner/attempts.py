"""A job's attempts, as the runner sees them: which attempt this is, what the notebook is told of it,
and the record of an attempt that was stopped for other work.

Every job gets a checkpoint folder (``checkpoint/`` in its folder) and is told whether it resumes, in
the environment (``GPU_ENV_CHECKPOINT_DIR``, ``GPU_ENV_RESUMED``: ``1`` or ``0``) and, where the
notebook's parameters cell declares them, as the parameters ``checkpoint_dir`` and ``resumed``. Only an
opportunistic job is ever resumed: its scheduler requeues it and starts this runner again in the same
folder, which finds the earlier attempts in ``attempts.json``.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...contracts import jobfiles

CHECKPOINT_ENV = "GPU_ENV_CHECKPOINT_DIR"
RESUMED_ENV = "GPU_ENV_RESUMED"
ATTEMPT_ENV = "GPU_ENV_ATTEMPT"
# The parameters the runner gives a notebook that declares them (the server lists which in job.json).
RESUME_PARAMETERS = ("checkpoint_dir", "resumed")


@dataclass
class Attempt:
    folder: Path
    number: int
    started_at: float
    resumable: bool
    checkpoint_dir: Path
    parameters: dict[str, Any] = field(default_factory=dict)

    @property
    def resumed(self) -> bool:
        return self.number > 1

    def cancel_requested(self) -> bool:
        """Did the server ask for this job to stop (a cancel), rather than its scheduler (a preemption)?"""
        return (self.folder / jobfiles.CANCEL_MARK).exists()


def begin_attempt(folder: Path, job: dict[str, Any], started_at: float) -> Attempt:
    """Which attempt starts now; prepares the checkpoint folder, the environment and the parameters,
    and keeps an earlier attempt's executed notebook under its own name."""
    try:
        earlier = jobfiles.read_attempts(folder)
    except jobfiles.Damaged:
        earlier = []  # the job's code wrote over it; the count starts again rather than not at all
    number = len(earlier) + 1
    checkpoint = folder / jobfiles.CHECKPOINT
    checkpoint.mkdir(exist_ok=True)
    attempt = Attempt(
        folder=folder,
        number=number,
        started_at=started_at,
        resumable=job.get("priority") == "opportunistic",
        checkpoint_dir=checkpoint,
    )
    os.environ[CHECKPOINT_ENV] = str(checkpoint)
    os.environ[RESUMED_ENV] = "1" if attempt.resumed else "0"
    os.environ[ATTEMPT_ENV] = str(number)
    declared = job.get("resume_parameters") or ()
    values = {"checkpoint_dir": str(checkpoint), "resumed": attempt.resumed}
    attempt.parameters = {k: v for k, v in values.items() if k in declared}
    if attempt.resumed:
        _keep_earlier_output(folder, job, number - 1)
    return attempt


def _keep_earlier_output(folder: Path, job: dict[str, Any], earlier: int) -> None:
    """``output.ipynb`` -> ``output.attempt-1.ipynb``: what the stopped attempt executed stays readable."""
    output = folder / jobfiles.output_name(job)
    kept = output.with_name(f"{output.stem}.attempt-{earlier}.ipynb")
    try:
        if output.is_file() and not kept.exists():
            os.replace(output, kept)
    except OSError:
        pass  # the new attempt writes its own output regardless


def record_attempt(
    folder: Path,
    attempt: Attempt,
    reason: str | None,
    message: str,
    cells_done: int,
    gpu: dict[str, Any] | None,
) -> None:
    """Append the attempt that is ending to ``attempts.json`` (atomically, durably)."""
    try:
        earlier = [a.model_dump(mode="json") for a in jobfiles.read_attempts(folder)]
    except jobfiles.Damaged:
        earlier = []
    earlier = [a for a in earlier if a.get("number") != attempt.number]
    entry: dict[str, Any] = {
        "number": attempt.number,
        "started_at": attempt.started_at,
        "ended_at": time.time(),
        "reason": reason if reason in ("preempted", "evicted", "node_lost") else "preempted",
        "message": message[:2000],
        "cells_done": cells_done,
    }
    for key in ("gpu_hours_allocated", "gpu_hours_used", "energy_joules"):
        if gpu and isinstance(gpu.get(key), int | float):
            entry[key] = gpu[key]
    if gpu and entry.get("energy_joules") is not None:
        entry["energy_source"] = gpu.get("energy_source")
    jobfiles.write_json_atomic(folder / jobfiles.ATTEMPTS, {"attempts": [*earlier, entry]}, durable=True)
