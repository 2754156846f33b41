"""Job folders on disk, as the service keeps them: half-built ones an earlier process left removed, and a
deleted job's folder removed whole, only when it is recognisably that job's. Off the event loop."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

from ..contracts import jobfiles
from ..models.jobs import Job
from ..system.trees import remove_tree

STALE_TEMPORARY = 600.0  # seconds after which a half-built job folder is surely abandoned


def clean_temporaries(job_dir: Path) -> None:
    if not job_dir.is_dir():
        return
    # Spare recent ones: another process (the CLI) may be building a job right now.
    cutoff = time.time() - STALE_TEMPORARY
    for entry in job_dir.iterdir():
        if entry.name.startswith((".tmp-", ".trash-")) and entry.is_dir() and entry.stat().st_mtime < cutoff:
            remove_tree(entry)


def discard(folder: Path, job: Job, job_dir: Path) -> None:
    """Remove ``job``'s ``folder`` (and its sweep's, once empty); anything else is left alone."""
    if not folder.name.endswith(job.id) or not (folder / jobfiles.JOB_JSON).is_file():
        return
    trash = folder.with_name(f".trash-{folder.name}")
    try:
        folder.rename(trash)  # at once gone from view; a runner still writing writes nowhere
    except OSError:
        trash = folder
    remove_tree(trash)
    if job.group_id and folder.parent != job_dir:
        with contextlib.suppress(OSError):
            folder.parent.rmdir()  # the sweep's folder, once its last run's is gone (only if empty)
