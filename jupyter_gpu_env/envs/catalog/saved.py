"""The environment catalog on disk: what is known of each prefix, so a restart need not measure it again.

One JSON file, replaced whole. Each entry carries the modification times it was valid for (the same
key that decides freshness in memory), so an entry of a prefix changed while the server was down is
simply not used. An unreadable or foreign file is ignored: the catalog is a cache.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

from ...system.atomic import write_json_atomic
from .prefix import PrefixSummary

VERSION = 1


E = TypeVar("E")


def load(path: Path, make: type[E]) -> dict[Path, E]:
    """The entries saved at ``path``, each built as ``make(key, summary, size)``; {} when there are none."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != VERSION:
        return {}
    out: dict[Path, E] = {}
    for prefix, raw in (data.get("prefixes") or {}).items():
        try:
            summary = PrefixSummary(
                raw["python_version"], int(raw["package_count"]), bool(raw["has_ipykernel"]), raw["origin"]
            )
            size = raw["size"]
            entry = make(  # type: ignore[call-arg]
                tuple(int(k) for k in raw["key"]), summary, (int(size[0]), int(size[1])) if size else None
            )
        except (KeyError, TypeError, ValueError, IndexError):
            continue
        out[Path(prefix)] = entry
    return out


def save(path: Path, entries: dict[Path, Any]) -> None:
    prefixes: dict[str, Any] = {}
    for prefix, e in entries.items():
        s = e.summary
        prefixes[str(prefix)] = {
            "key": list(e.key),
            "python_version": s.python_version,
            "package_count": s.package_count,
            "has_ipykernel": s.has_ipykernel,
            "origin": s.origin,
            "size": list(e.size) if e.size else None,
        }
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, {"version": VERSION, "prefixes": prefixes})
