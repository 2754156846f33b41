"""The job folder: the one contract between the server, every backend and the runner.

The server writes ``job.json`` and ``input.ipynb``; the runner writes ``output.ipynb``, ``progress.json``,
``heartbeat`` and, last, ``status.json``; the backend captures the runner's output in ``log.txt``. Files
another process reads are replaced atomically, so a reader never sees half a JSON document. Kept free of
heavy imports: the runner imports it on the node.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..system.atomic import write_json_atomic

JOB_JSON = "job.json"
INPUT = "input.ipynb"
OUTPUT = "output.ipynb"  # the executed notebook of a job.json that names none (an older server's)
LOG = "log.txt"
STATUS = "status.json"
PROGRESS = "progress.json"
HEARTBEAT = "heartbeat"
PID = "runner.pid"
KERNELS = "kernels"

__all__ = ["write_json_atomic"]  # the runner and the backends write through this module

JOB_FORMAT = 1  # bump when job.json changes incompatibly; the runner refuses what it does not know


def read_json(path: Path) -> dict[str, Any] | None:
    """The JSON object in ``path``, or None when it is missing or not an object."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def read_progress(folder: Path) -> tuple[int, int] | None:
    data = read_json(folder / PROGRESS)
    if data is None:
        return None
    try:
        return int(data["cells_done"]), int(data["cells_total"])
    except (KeyError, TypeError, ValueError):
        return None


def read_status(folder: Path) -> dict[str, Any] | None:
    """The runner's final status, when it wrote one: ``state``, ``reason``, ``message``, ``exit_code``, times."""
    data = read_json(folder / STATUS)
    if data is None or data.get("state") not in ("succeeded", "failed", "cancelled"):
        return None
    return data


def read_log(path: Path, offset: int, limit: int) -> tuple[str, int, int]:
    """Text of ``path`` from byte ``offset``, about ``limit`` bytes, ending on a whole UTF-8 character.

    Returns ``(text, next_offset, size)``; a missing file reads as empty. A follower always advances:
    a limit smaller than one character still returns that character.
    """
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if offset >= size:
                return "", offset, size
            f.seek(offset)
            raw = f.read(min(limit + 3, size - offset))
    except FileNotFoundError:
        return "", offset, 0
    body = raw[:limit]
    # Hold back a character cut by the chunk's end; the next read starts with it.
    cut = _incomplete_tail(body)
    if cut:
        body = body[:-cut] if len(body) > cut else raw[: _char_length(body[0])]
    return body.decode("utf-8", "replace"), offset + len(body), size


def _char_length(lead: int) -> int:
    return 1 if lead < 0x80 else 2 if lead >> 5 == 0b110 else 3 if lead >> 4 == 0b1110 else 4


def _incomplete_tail(raw: bytes) -> int:
    """How many bytes at the end of ``raw`` begin a UTF-8 character that is not complete."""
    for back in range(1, min(4, len(raw)) + 1):
        byte = raw[-back]
        if byte & 0xC0 != 0x80:  # a lead byte (or ASCII): how long should its character be?
            return back if _char_length(byte) > back else 0
    return 0


def first_tagged_cell(nb: Any, tag: str) -> int:
    """Index of the first cell tagged ``tag``, or -1 (papermill's own helper needs papermill's loader)."""
    for i, cell in enumerate(nb.cells):
        if tag in (cell.get("metadata", {}).get("tags") or ()):
            return i
    return -1


def output_name(spec: dict[str, Any]) -> str:
    """The executed notebook's file name in the job folder, as job.json names it."""
    name = spec.get("output")
    return name if isinstance(name, str) and name.endswith(".ipynb") and "/" not in name else OUTPUT


def read_gpu(folder: Path) -> dict[str, Any] | None:
    """The runner's GPU use summary (``gpu.json``), as it last wrote it."""
    return read_json(folder / "gpu.json")
