"""A sweep's folders: every run's built aside and renamed into place whole (a refused sweep leaves no
folder), and a retried run's made from the old one's snapshot and its record (never its job.json, which
the run's own code could have rewritten)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from ...contracts import jobfiles


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


def make_run(new: Path, raw: bytes, spec: dict[str, Any]) -> None:
    """A retried run's folder: the old run's snapshot and a job.json made from its record, nothing it made."""
    tmp = new.with_name(f".tmp-{new.name}")
    tmp.mkdir()
    try:
        (tmp / jobfiles.INPUT).write_bytes(raw)
        jobfiles.write_json_atomic(tmp / jobfiles.JOB_JSON, spec)
        tmp.rename(new)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
