"""conda's own list of environments, ``~/.conda/environments.txt``.

conda appends a line per environment it creates; ``conda env list`` reads it. We add our clones and
remove them on delete, rewriting the file atomically so that a crash never leaves it truncated.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from ..system.atomic import write_atomic
from ..system.untrusted import read_regular_file

_lock = threading.Lock()
LIST_BYTES = 16 << 20


def default_path() -> Path:
    return Path.home() / ".conda" / "environments.txt"


def read(path: Path) -> list[Path]:
    """Entries of the list that exist as environments, without duplicates, in file order."""
    try:
        lines = _text(path).splitlines()
    except OSError:
        return []
    out: list[Path] = []
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        p = Path(line)
        if p.is_absolute() and (p / "conda-meta").is_dir() and p not in out:
            out.append(p)
    return out


def _rewrite(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, "".join(line + "\n" for line in lines))


def _text(path: Path) -> str:
    """The list's text; OSError (FileRefused among them) when it is no regular file or too large."""
    return read_regular_file(path, LIST_BYTES).decode("utf-8", errors="replace")


def _lines(path: Path) -> list[str]:
    try:
        return [ln.rstrip("\n") for ln in _text(path).splitlines()]
    except FileNotFoundError:
        return []


def add(path: Path, prefix: Path) -> None:
    """Record ``prefix`` (idempotent)."""
    with _lock:
        lines = _lines(path)
        if any(os.path.normpath(ln.strip()) == os.path.normpath(prefix) for ln in lines if ln.strip()):
            return
        _rewrite(path, [ln for ln in lines if ln.strip()] + [str(prefix)])


def remove(path: Path, prefix: Path) -> None:
    """Forget ``prefix``; every other line is kept as it was."""
    with _lock:
        lines = _lines(path)
        keep = [ln for ln in lines if os.path.normpath(ln.strip() or ".") != os.path.normpath(prefix)]
        if keep != lines:
            _rewrite(path, keep)
