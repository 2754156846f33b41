"""The file-copying half of conda's clone: untracked files, and packages copied from the source.

Untracked files are those no conda record owns: pip installs, user files, caches. Like conda's
``clone_env``, they are copied with the source prefix replaced by the new one in text files. Binary
files that embed the prefix are copied unchanged and reported: rewriting a path of a different length
inside a binary would corrupt it.

Blocking functions for a worker thread; each takes a ``stop`` event, checked between files, so a
cancelled clone stops writing before its temporary directory is removed. The source is its owner's to
write: its files are read through :mod:`~jupyter_gpu_env.system.untrusted`, and what is no regular file
(a named pipe) is reported as not copied, never waited on.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import FileRefused
from ..system.untrusted import copy_regular_file, open_regular_file, read_regular_file
from .catalog.prefix import RECORD_BYTES

# As conda's misc.walk_prefix: top-level entries that are never part of an environment's content.
IGNORE_TOP = {
    "pkgs",
    "envs",
    "conda-bld",
    "conda-meta",
    ".conda_lock",
    "users",
    "LICENSE.txt",
    "info",
    "conda-recipes",
    ".index",
    ".unionfs",
    ".nonadmin",
}
BIN_IGNORE = {"conda", "activate", "deactivate"}
_MAX_REWRITE = 64 << 20  # bigger files are copied as they are; text that large holding a prefix is unheard of

Tick = Callable[[int, int], None]


class Stopped(Exception):
    pass


@dataclass
class CopyReport:
    files: int = 0
    rewritten: int = 0
    binary_with_prefix: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)

    def merge(self, other: CopyReport) -> None:
        self.files += other.files
        self.rewritten += other.rewritten
        self.binary_with_prefix += other.binary_with_prefix
        self.unreadable += other.unreadable


def conda_files(records: Iterable[dict[str, Any]]) -> set[str]:
    return {f for r in records for f in r.get("files", ())}


def find_untracked(source: Path, owned: set[str]) -> list[str]:
    """Relative paths of files (and symlinks) under ``source`` that no record owns."""
    out = []
    for entry in os.scandir(source):
        if entry.name in IGNORE_TOP:
            continue
        if not entry.is_dir(follow_symlinks=False):
            out.append(entry.name)
            continue
        for root, dirs, files in os.walk(entry.path):
            rel_root = os.path.relpath(root, source)
            for d in dirs:
                if os.path.islink(os.path.join(root, d)):
                    out.append(os.path.join(rel_root, d))
            for f in files:
                if rel_root == "bin" and f in BIN_IGNORE:
                    continue
                out.append(os.path.join(rel_root, f))
    result = []
    for rel in out:
        if rel in owned or rel.endswith("~"):
            continue
        if rel.endswith(".pyc") and _pyc_source(rel) in owned:
            continue  # bytecode of a conda-owned module: Python rewrites it on first import
        result.append(rel)
    return sorted(result)


def _pyc_source(rel: str) -> str:
    d, f = os.path.split(rel)
    if os.path.basename(d) == "__pycache__":
        return os.path.join(os.path.dirname(d), f.split(".", 1)[0] + ".py")
    return rel[:-1]


def _copy_file(src: Path, dst: Path, old: bytes, new: bytes, report: CopyReport, rel: str) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    if src.is_symlink():
        target = os.readlink(src)
        if target.startswith(old.decode()):
            target = new.decode() + target[len(old) :]
        os.symlink(target, dst)
        report.files += 1
        return
    with open_regular_file(src, name=rel) as f:
        big = os.fstat(f.fileno()).st_size > _MAX_REWRITE
        data = b"" if big else f.read(_MAX_REWRITE + 1)
    if big or len(data) > _MAX_REWRITE:  # copied as it is (checked again as it is opened again)
        copy_regular_file(src, dst, name=rel)
    else:
        if old in data:
            if b"\0" in data[:8192]:
                if not rel.endswith(".pyc"):  # Python fixes a pyc's source path when loading it
                    report.binary_with_prefix.append(rel)
            else:
                data = data.replace(old, new)
                report.rewritten += 1
        dst.write_bytes(data)
    shutil.copystat(src, dst)
    report.files += 1


def copy_untracked(
    source: Path,
    target: Path,
    final_prefix: Path,
    files: list[str],
    *,
    stop: threading.Event | None = None,
    tick: Tick | None = None,
) -> CopyReport:
    report = CopyReport()
    old, new = os.fsencode(source), os.fsencode(final_prefix)
    for i, rel in enumerate(files):
        if stop is not None and stop.is_set():
            raise Stopped
        try:
            _copy_file(source / rel, target / rel, old, new, report, rel)
        except FileNotFoundError:
            continue  # removed from the source while we copied: nothing to carry over
        except (PermissionError, FileRefused):
            # e.g. an admin's private file in a managed environment, or a named pipe
            report.unreadable.append(rel)
        if tick is not None and (i % 200 == 0 or i == len(files) - 1):
            tick(i + 1, len(files))
    return report


class _Linker:
    """Hard links from the source where it may (same filesystem, a source its user does not edit: a
    managed or shared environment), copies otherwise; one refusal (another filesystem, Linux's
    ``protected_hardlinks`` for a file of another owner) turns linking off for the rest."""

    def __init__(self, source: Path, target: Path, allowed: bool) -> None:
        self.on = allowed and _same_device(source, target)

    def put(self, src: Path, dst: Path, rel: str) -> bool:
        """Link ``src`` at ``dst``; False where it copied instead."""
        if self.on:
            try:
                os.link(src, dst, follow_symlinks=False)
                return True
            except FileExistsError:
                raise
            except OSError:
                self.on = False
        copy_regular_file(src, dst, name=rel)
        return False


def _same_device(a: Path, b: Path) -> bool:
    try:
        return os.stat(a).st_dev == os.stat(b).st_dev
    except OSError:
        return False


def _placeholders(rec: dict[str, Any]) -> dict[str, str]:
    """``path -> file_mode`` of the record's files that held a prefix placeholder when installed."""
    paths = rec.get("paths_data", {}).get("paths", []) if isinstance(rec.get("paths_data"), dict) else []
    out = {}
    for p in paths if isinstance(paths, list) else []:
        if not isinstance(p, dict) or not isinstance(p.get("_path"), str):
            continue
        if p.get("prefix_placeholder"):
            out[p["_path"]] = str(p.get("file_mode") or "text")
        elif "entry_point" in str(p.get("path_type", "")):  # written at install, its shebang the prefix
            out[p["_path"]] = "text"
    return out


def binary_replace(data: bytes, old: bytes, new: bytes) -> bytes | None:
    """``old`` replaced by ``new`` in each C string of ``data``, the length kept with the padding of
    NULs that installing wrote after it (as a fresh install from the package would write it); None
    where a string has too little padding for ``new``."""
    pattern = re.compile(re.escape(old) + rb"([^\0]*)(\0+)")
    fits = True

    def put(m: re.Match[bytes]) -> bytes:
        nonlocal fits
        text = m.group(0)[: -len(m.group(2))].replace(old, new)
        pad = len(m.group(0)) - len(text)
        if pad < 1:
            fits = False
            return m.group(0)
        return text + b"\0" * pad

    out = pattern.sub(put, data)
    return out if fits and len(out) == len(data) else None


def _copy_record_file(
    src: Path,
    dst: Path,
    mode: str | None,
    old: bytes,
    new: bytes,
    report: CopyReport,
    rel: str,
    linker: _Linker,
) -> bool:
    """One file of a package: linked or copied as it is where installing wrote no prefix in it, else
    copied with the prefix rewritten (text) or replaced in place (binary). True where it was linked."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    if mode is None or src.is_symlink():
        if src.is_symlink():
            _copy_file(src, dst, old, new, report, rel)
            return False
        linked = linker.put(src, dst, rel)
        report.files += 1
        return linked
    if mode != "binary":
        _copy_file(src, dst, old, new, report, rel)
        return False
    with open_regular_file(src, name=rel) as f:
        data = f.read()
    replaced = binary_replace(data, old, new) if old in data else data
    if replaced is None:
        replaced = data
        report.binary_with_prefix.append(rel)
    elif replaced is not data:
        report.rewritten += 1
    dst.write_bytes(replaced)
    shutil.copystat(src, dst)
    report.files += 1
    return False


def copy_records(
    source: Path,
    target: Path,
    final_prefix: Path,
    wanted: set[str],
    *,
    stop: threading.Event | None = None,
    link: bool = False,
) -> CopyReport:
    """Install the source's records named in ``wanted`` (``name-version-build``) from the source's files.

    What the package cache lacks (a new user's empty cache; a channel that no longer serves it): its
    files are taken from the source prefix, where installing already put them. Files in which
    installing wrote the prefix (the record's placeholders) are copied with it rewritten, text as conda
    does and binary C strings in their padding; the others are hard-linked from the source where
    ``link`` allows it and the filesystem is the same (a managed environment is its admin's to change),
    else copied. The record goes to the target's conda-meta (link type 1, "hardlink", or 3, "copy").
    """
    report = CopyReport()
    old, new = os.fsencode(source), os.fsencode(final_prefix)
    target.mkdir(parents=True, exist_ok=True)
    linker = _Linker(source, target, link)
    for meta in sorted((source / "conda-meta").glob("*.json")):
        try:
            rec = json.loads(read_regular_file(meta, RECORD_BYTES))
        except (OSError, ValueError, RecursionError):
            continue  # no record the engine read: it cannot be wanted
        if not isinstance(rec, dict):
            continue
        if f"{rec.get('name')}-{rec.get('version')}-{rec.get('build')}" not in wanted:
            continue
        modes = _placeholders(rec)
        linked = copied = 0
        for rel in rec.get("files", ()):
            if stop is not None and stop.is_set():
                raise Stopped
            if (source / rel).exists() or (source / rel).is_symlink():
                if _copy_record_file(
                    source / rel, target / rel, modes.get(rel), old, new, report, rel, linker
                ):
                    linked += 1
                else:
                    copied += 1
        rec["link"] = {"source": str(source), "type": 1 if linked and not copied else 3}
        rec.pop("extracted_package_dir", None)
        (target / "conda-meta").mkdir(parents=True, exist_ok=True)
        (target / "conda-meta" / meta.name).write_text(json.dumps(rec, indent=2), encoding="utf-8")
    return report
