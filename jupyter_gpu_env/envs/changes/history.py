"""The record of changes made to an environment, kept inside it: ``conda-meta/jupyter-gpu-env-history``;
and its identity, ``conda-meta/jupyter-gpu-env-id``.

One JSON object per line, oldest first. A transaction appends its entry to the copy it builds, before
the swap, so the live environment's history says exactly which changes it holds: after a crash, a
change whose id is in the live history was applied, one whose id is not was not. Not a ``.json`` file:
conda and rattler parse every ``conda-meta/*.json`` as a package record.

The identity is written once, when the environment is made (:meth:`..building.Builder.make`), and goes
with every copy a change makes of it, so each state kept for undo says which environment it is a state
of: another made later under the same name has another identity.
"""

from __future__ import annotations

import json
import secrets
import time
from pathlib import Path
from typing import Any

HISTORY_FILE = "jupyter-gpu-env-history"
IDENTITY_FILE = "jupyter-gpu-env-id"


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


def drop(prefix: Path, change_id: str) -> None:
    """Remove the entry ``change_id`` from the history of ``prefix`` (one written for a swap that a
    crash kept from happening)."""
    path = path_of(prefix)
    try:
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    except OSError:
        return
    kept = [line for line in lines if _id_of(line) != change_id]
    if len(kept) != len(lines):
        path.write_text("".join(kept), encoding="utf-8")


def _id_of(line: str) -> object:
    try:
        entry = json.loads(line)
    except ValueError:
        return None
    return entry.get("id") if isinstance(entry, dict) else None


def identity(prefix: Path) -> str | None:
    """Which environment ``prefix`` is (or is a kept state of); None for one made before identities."""
    try:
        return (prefix / "conda-meta" / IDENTITY_FILE).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def new_identity(prefix: Path) -> None:
    """Give ``prefix``, a new environment being made, an identity of its own (a clone's source's is
    replaced)."""
    meta = prefix / "conda-meta"
    if meta.is_dir():
        (meta / IDENTITY_FILE).unlink(missing_ok=True)  # never written through a link shared with another
        (meta / IDENTITY_FILE).write_text(secrets.token_hex(16) + "\n", encoding="utf-8")
