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

from ...errors import FileRefused
from ...system.atomic import write_atomic
from ...system.untrusted import append_regular_file, read_regular_file

HISTORY_FILE = "jupyter-gpu-env-history"
# Far beyond any real history (an entry is a few KB), far below what would hurt to read.
HISTORY_BYTES = 32 << 20
IDENTITY_FILE = "jupyter-gpu-env-id"


def path_of(prefix: Path) -> Path:
    return prefix / "conda-meta" / HISTORY_FILE


def read(prefix: Path) -> list[dict[str, Any]]:
    """Every entry, oldest first; unreadable lines are skipped (and the whole when it is no regular file,
    or too large)."""
    try:
        data = read_regular_file(path_of(prefix), HISTORY_BYTES)
    except OSError:
        return []
    lines = data.decode("utf-8", errors="replace").splitlines()
    out = []
    for line in lines:
        try:
            entry = json.loads(line)
        except (ValueError, RecursionError):
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
    line = (json.dumps(entry, sort_keys=True) + "\n").encode("utf-8")
    try:
        append_regular_file(path, line)
    except FileRefused:  # no history there (a named pipe, say): :func:`read` finds none; one starts now
        path.unlink()
        append_regular_file(path, line)
    return entry


def holds(prefix: Path, change_id: str) -> bool:
    return any(e.get("id") == change_id for e in read(prefix))


def snapshot(prefix: Path) -> bytes | None:
    """The history file's bytes (None when there is none, or none :func:`read` can read), for
    :func:`restore`."""
    try:
        return read_regular_file(path_of(prefix), HISTORY_BYTES)
    except (FileNotFoundError, FileRefused):
        return None


def restore(prefix: Path, saved: bytes | None) -> None:
    """Put back what :func:`snapshot` read (an entry written for a swap that did not happen)."""
    path = path_of(prefix)
    if saved is None:
        path.unlink(missing_ok=True)
    else:  # replaced, never opened: whatever is there now
        write_atomic(path, saved)


def drop(prefix: Path, change_id: str) -> None:
    """Remove the entry ``change_id`` from the history of ``prefix`` (one written for a swap that a
    crash kept from happening)."""
    path = path_of(prefix)
    try:
        lines = read_regular_file(path, HISTORY_BYTES).decode("utf-8", "replace").splitlines(keepends=True)
    except OSError:  # missing, or refused: a FIFO, a runaway file
        return
    kept = [line for line in lines if _id_of(line) != change_id]
    if len(kept) != len(lines):
        write_atomic(path, "".join(kept))


def _id_of(line: str) -> object:
    try:
        entry = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return entry.get("id") if isinstance(entry, dict) else None


def identity(prefix: Path) -> str | None:
    """Which environment ``prefix`` is (or is a kept state of); None for one made before identities."""
    try:
        raw = read_regular_file(prefix / "conda-meta" / IDENTITY_FILE, 256)
    except OSError:  # missing, or refused: a FIFO, a runaway file
        return None
    return raw.decode("utf-8", "replace").strip() or None


def new_identity(prefix: Path) -> None:
    """Give ``prefix``, a new environment being made, an identity of its own (a clone's source's is
    replaced)."""
    meta = prefix / "conda-meta"
    if meta.is_dir():
        (meta / IDENTITY_FILE).unlink(missing_ok=True)  # never written through a link shared with another
        (meta / IDENTITY_FILE).write_text(secrets.token_hex(16) + "\n", encoding="utf-8")
