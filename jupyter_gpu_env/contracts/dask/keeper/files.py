"""The keeper's side of the cluster folder: the spec and scale read, the state written atomically."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

MAX_SPEC_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class Listed:
    """A worker the pool started that still exists. ``state``: ``queued`` (waiting for the batch
    system) or ``running`` (started; it may not have joined yet). ``once``: started with the scheduler in
    its allocation, which the pool cannot see end by itself: gone for good once it has left."""

    name: str
    state: Literal["queued", "running"]
    reason: str | None = None
    node: str | None = None
    once: bool = False


def read_json(path: Path) -> Any | None:
    """A JSON file the server wrote, or None when it is absent or being replaced."""
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_SPEC_BYTES + 1)
    except FileNotFoundError:
        return None
    if len(raw) > MAX_SPEC_BYTES:
        raise ValueError(f"{path} is larger than {MAX_SPEC_BYTES} bytes")
    return json.loads(raw)


def write_json(path: Path, value: Any) -> None:
    """Replace ``path`` in one rename, so the server never reads half a state."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(value, f, separators=(",", ":"))
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
