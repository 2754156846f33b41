"""What an environment holds: files owned by conda packages, untracked files, and a content hash.

The hash decides whether an existing image can be reused, so it covers what changes an environment:
every package record (name, version, build, hashes) and every untracked file (pip installs, user files)
by path, size, mode and modification time. Hashing the bytes of untracked files would make a cache
check of a multi-gigabyte environment as slow as packing it.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InvalidRequest


@dataclass(frozen=True)
class EnvContent:
    content_hash: str
    file_count: int
    size_bytes: int


def _records(prefix: Path) -> list[dict[str, Any]]:
    meta = prefix / "conda-meta"
    if not meta.is_dir():
        raise InvalidRequest(f"{prefix} is not a conda environment (it has no conda-meta folder).")
    out = []
    for p in sorted(meta.glob("*.json")):
        try:
            out.append(json.loads(p.read_text()))
        except (OSError, ValueError):
            continue  # conda-meta also holds our own provenance file and history; not package records
    return [r for r in out if "name" in r and "version" in r]


def tracked_files(records: list[dict[str, Any]]) -> set[str]:
    files: set[str] = set()
    for r in records:
        for f in r.get("files", ()):
            files.add(os.path.normpath(str(f)))
    return files  # relative, '/'-separated, as the walk in scan() spells paths


def scan(prefix: str | os.PathLike[str]) -> EnvContent:
    """Walk the environment once: count files, add up sizes, and hash records plus untracked files.

    One ``scandir`` per folder and the stat it already made per entry: no second ``lstat`` per file,
    no path normalisation per file (a 10,000-file environment is read in tens of milliseconds).
    """
    root = Path(prefix)
    records = _records(root)
    tracked = tracked_files(records)
    digest = hashlib.sha256()
    for r in sorted(records, key=lambda r: (r["name"], r.get("version", ""), r.get("build", ""))):
        key = [r["name"], r.get("version"), r.get("build"), r.get("sha256") or r.get("md5") or r.get("url")]
        digest.update(json.dumps(key).encode())
    count, size = 0, 0
    seen: set[tuple[int, int]] = set()
    untracked: list[str] = []
    stack = [("", str(root))]
    while stack:
        rel_dir, path = stack.pop()
        try:
            entries = list(os.scandir(path))  # in any order: the untracked lines are sorted once, below
        except OSError:
            continue
        for entry in entries:
            rel = f"{rel_dir}{entry.name}"
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                stack.append((rel + "/", entry.path))
                continue
            count += 1
            ident = (st.st_dev, st.st_ino)
            if ident not in seen:
                seen.add(ident)
                size += st.st_blocks * 512
            if rel in tracked or rel.startswith("conda-meta/") or "__pycache__" in rel:
                continue
            untracked.append(f"{rel}\0{st.st_size}\0{st.st_mode}\0{st.st_mtime_ns}\n")
    for line in sorted(untracked):  # in path order, whatever order the folders were read in
        digest.update(line.encode())
    return EnvContent(digest.hexdigest(), count, size)
