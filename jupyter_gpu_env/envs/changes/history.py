"""The record of changes made to an environment, kept inside it: ``conda-meta/jupyter-gpu-env-history``.

One JSON object per line, oldest first. A transaction appends its entry to the copy it builds, before
the swap, so the live environment's history says exactly which changes it holds: after a crash, a
change whose id is in the live history was applied, one whose id is not was not. Not a ``.json`` file:
conda and rattler parse every ``conda-meta/*.json`` as a package record.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

HISTORY_FILE = "jupyter-gpu-env-history"


def path_of(prefix: Path) -> Path:
    return prefix / "conda-meta" / HISTORY_FILE


def read(prefix: Path) -> list[dict[str, Any]]:
    """Every entry, oldest first; unreadable lines are skipped."""
    try:
        lines = path_of(prefix).read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            out.append(entry)
    return out


def append(prefix: Path, entry: dict[str, Any]) -> dict[str, Any]:
    """Add ``entry`` (stamped with ``at``) to the history of ``prefix``; returns what was written.

    Only ever called on a transaction's own copy, whose conda-meta files are its own (never hard links
    shared with the live environment), so appending in place is safe.
    """
    entry = {"at": time.time(), **entry}
    path = path_of(prefix)
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry, sort_keys=True) + "\n")
    return entry


def holds(prefix: Path, change_id: str) -> bool:
    return any(e.get("id") == change_id for e in read(prefix))


def snapshot(prefix: Path) -> bytes | None:
    """The history file's bytes (None when there is none), for :func:`restore`."""
    try:
        return path_of(prefix).read_bytes()
    except FileNotFoundError:
        return None


def restore(prefix: Path, saved: bytes | None) -> None:
    """Put back what :func:`snapshot` read (an entry written for a swap that did not happen)."""
    path = path_of(prefix)
    if saved is None:
        path.unlink(missing_ok=True)
    else:
        path.write_bytes(saved)
