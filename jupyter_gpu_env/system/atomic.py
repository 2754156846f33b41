"""Replacing a file in one rename, so that no reader ever sees half of it.

Every writer gets its own temporary name (``mkstemp`` beside the target), so two writers of the same
file, in two threads or two processes, never share one: each replaces the file whole and the last one
wins. Kept free of heavy imports: the batch runner uses it on the node.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def write_atomic(
    path: str | os.PathLike[str], data: bytes | str, *, durable: bool = False, mode: int | None = None
) -> None:
    """Replace ``path`` with ``data``. ``durable`` also fsyncs before the rename (final states)."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_json_atomic(
    path: str | os.PathLike[str], data: Any, *, durable: bool = False, indent: int | None = None
) -> None:
    """Replace ``path`` with ``data`` as JSON (see :func:`write_atomic`)."""
    write_atomic(path, json.dumps(data, indent=indent), durable=durable)
