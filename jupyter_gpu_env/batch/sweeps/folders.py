"""A sweep's folders: every run's built aside and renamed into place whole (a refused sweep leaves no
folder), and a retried run's made from the old one's snapshot."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from .. import jobfiles


def build_sweep_folder(base: Path, raw: bytes, runs: list[tuple[Path, dict[str, Any]]]) -> None:
    """Every run's folder (the snapshot, hard-linked, and its job.json) in a hidden sibling of ``base``,
    renamed into place whole."""
    tmp = base.with_name(f".tmp-{base.name}")
    tmp.mkdir(parents=True)
    try:
        first: Path | None = None
        for folder, spec in runs:
            run = tmp / folder.name
            run.mkdir()
            if first is None:
                first = run / jobfiles.INPUT
                first.write_bytes(raw)
            else:
                (run / jobfiles.INPUT).hardlink_to(first)  # the runner reads it and never writes it
            jobfiles.write_json_atomic(run / jobfiles.JOB_JSON, spec)
        tmp.rename(base)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


class SnapshotMissing(Exception):
    """A run's folder no longer holds what a retry copies (removed by hand, or never complete)."""


def copy_run(old: Path, new: Path, job_id: str) -> None:
    """A retried run's folder: the old one's snapshot and job.json (with the new id), nothing it made.
    :class:`SnapshotMissing`, saying what is missing, when the old folder does not hold them."""
    spec = jobfiles.read_json(old / jobfiles.JOB_JSON)
    if spec is None:
        raise SnapshotMissing(f"{old / jobfiles.JOB_JSON} is missing or unreadable")
    tmp = new.with_name(f".tmp-{new.name}")
    tmp.mkdir()
    try:
        try:
            shutil.copy2(old / jobfiles.INPUT, tmp / jobfiles.INPUT)
        except OSError as e:
            raise SnapshotMissing(f"{old / jobfiles.INPUT}: {e.strerror}") from None
        jobfiles.write_json_atomic(tmp / jobfiles.JOB_JSON, {**spec, "id": job_id})
        tmp.rename(new)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
