"""Reading a conda prefix from disk: its package records, pip-only packages, size and provenance.

Pure, blocking functions; callers in the server run them through ``asyncio.to_thread``. Records are
read as plain JSON (never through py-rattler, which only runs in a child process). A prefix is its
owner's to write: every file is read through :mod:`~jupyter_gpu_env.system.untrusted` (a named pipe or
an oversized file is skipped, never waited on).
"""

from __future__ import annotations

import json
import os
import pwd
import time
from dataclasses import dataclass, field
from email.message import Message
from email.parser import HeaderParser
from pathlib import Path
from typing import Any

from ...models.envs.packages import Package
from ...system.atomic import write_atomic
from ...system.untrusted import read_regular_file, read_regular_head

# Provenance of environments we create. Not a .json file on purpose: conda and rattler parse every
# conda-meta/*.json as a package record.
ORIGIN_FILE = "jupyter-gpu-env-origin"
# A package record lists its files: a few MB for the largest packages.
RECORD_BYTES = 64 << 20
# A distribution's headers come first in its METADATA; its description may follow, long.
METADATA_HEAD_BYTES = 1 << 20


@dataclass
class PrefixSummary:
    """What the listing shows of a prefix, from folder listings only (no record parsed, no walk)."""

    python_version: str | None
    package_count: int
    has_ipykernel: bool
    origin: dict[str, Any] = field(default_factory=dict)


def _record_names(meta: Path) -> dict[str, str]:
    """name -> version of each package record, from its file name (``NAME-VERSION-BUILD.json``)."""
    out = {}
    with os.scandir(meta) as it:
        for entry in it:
            name = entry.name
            if name.endswith(".json") and not name.startswith(".") and name.count("-") >= 2:
                pkg, version, _build = name[:-5].rsplit("-", 2)
                out[pkg] = version
    return out


def _compared(name: str) -> str:
    """A package or distribution name as conda and pip names are compared: ``Foo_Bar.x`` -> ``foo-bar-x``."""
    return name.lower().replace("_", "-").replace(".", "-")


def summarize(prefix: Path) -> PrefixSummary:
    """The listing's view of ``prefix`` from ``conda-meta/`` and ``site-packages/`` listings.

    Distributions in site-packages that no record's name matches count as pip-installed; where a
    conda package's name differs from its distribution's, :func:`describe` (which reads the records'
    file lists) has the exact count.
    """
    records = _record_names(prefix / "conda-meta")
    pyver = records.get("python")
    sp = site_packages(prefix, pyver)
    dists: set[str] = set()
    if sp is not None:
        with os.scandir(sp) as it:
            dists = {
                _compared(e.name.split("-", 1)[0])  # Foo_Bar-1.0.dist-info
                for e in it
                if e.name.endswith((".dist-info", ".egg-info"))
            }
    conda_names = {_compared(n) for n in records}
    pip_only = dists - conda_names
    has_ipykernel = ("ipykernel" in conda_names or "ipykernel" in dists) and (
        sp is not None and (sp / "ipykernel").is_dir()
    )
    return PrefixSummary(pyver, len(records) + len(pip_only), has_ipykernel, read_origin(prefix))


@dataclass
class PrefixInfo:
    """A prefix read whole: its package records and pip packages (its size is :func:`disk_usage`'s)."""

    python_version: str | None
    packages: list[Package]
    has_ipykernel: bool
    origin: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> PrefixSummary:
        return PrefixSummary(self.python_version, len(self.packages), self.has_ipykernel, self.origin)


def is_env(path: Path) -> bool:
    return (path / "conda-meta").is_dir()


def read_records(prefix: Path) -> list[dict[str, Any]]:
    """The package records of ``prefix`` (``conda-meta/*.json``), sorted by name; unreadable ones skipped."""
    out = []
    meta = prefix / "conda-meta"
    for entry in sorted(os.scandir(meta), key=lambda e: e.name):
        if not entry.name.endswith(".json") or entry.name.startswith("."):
            continue
        try:
            rec = json.loads(read_regular_file(entry.path, RECORD_BYTES))
        except (OSError, ValueError, RecursionError):
            continue
        if isinstance(rec, dict) and "name" in rec and "version" in rec:
            out.append(rec)
    return sorted(out, key=lambda r: r["name"])


def python_version(records: list[dict[str, Any]]) -> str | None:
    return next((r["version"] for r in records if r["name"] == "python"), None)


def site_packages(prefix: Path, pyver: str | None) -> Path | None:
    if pyver:
        short = ".".join(pyver.split(".")[:2])
        sp = prefix / "lib" / f"python{short}" / "site-packages"
        return sp if sp.is_dir() else None
    found = sorted((prefix / "lib").glob("python3*/site-packages"))
    return found[0] if found else None


def channel_label(rec: dict[str, Any]) -> str | None:
    channel = rec.get("channel") or ""
    channel = channel.rstrip("/")
    for base in ("https://conda.anaconda.org/", "http://conda.anaconda.org/"):
        if channel.startswith(base):
            return channel[len(base) :]
    return channel or None


def pypi_packages(prefix: Path, records: list[dict[str, Any]], sp: Path | None) -> list[Package]:
    """Distributions in site-packages that no conda record owns (installed with pip)."""
    if sp is None:
        return []
    owned: set[str] = set()
    rel_sp = sp.relative_to(prefix).as_posix() + "/"
    for rec in records:
        for f in rec.get("files", ()):
            if f.startswith(rel_sp):
                owned.add(f[len(rel_sp) :].split("/", 1)[0])
    out = []
    for entry in os.scandir(sp):
        name = entry.name
        if name in owned or not (name.endswith(".dist-info") or name.endswith(".egg-info")):
            continue
        meta = Path(entry.path) / ("METADATA" if name.endswith(".dist-info") else "PKG-INFO")
        if entry.is_file():  # a single-file .egg-info
            meta = Path(entry.path)
        try:
            headers = read_headers(meta)
        except OSError:
            continue
        if headers.get("Name") and headers.get("Version"):
            out.append(Package(name=headers["Name"], version=headers["Version"], kind="pypi"))
    return sorted(out, key=lambda p: p.name.lower())


def read_headers(meta: Path) -> Message:
    """The headers of a distribution's METADATA (or PKG-INFO)."""
    text = read_regular_head(meta, METADATA_HEAD_BYTES).decode("utf-8", errors="replace")
    return HeaderParser().parsestr(text, headersonly=True)


def disk_usage(prefix: Path) -> tuple[int, int]:
    """(bytes on disk, of which in files also linked from outside the prefix); each inode counted once."""
    seen: dict[tuple[int, int], list[int]] = {}  # inode -> [links seen here, st_nlink, bytes]
    stack = [str(prefix)]
    while stack:
        try:
            it = os.scandir(stack.pop())
        except OSError:
            continue
        with it:
            for entry in it:
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                key = (st.st_dev, st.st_ino)
                if key in seen:
                    seen[key][0] += 1
                else:
                    seen[key] = [1, st.st_nlink, st.st_blocks * 512]
    total = sum(v[2] for v in seen.values())
    shared = sum(v[2] for v in seen.values() if v[1] > v[0])
    return total, shared


def user_name(uid: int | None = None) -> str:
    """The name of the user ``uid`` (this process's by default), or the number where it has none."""
    uid = os.getuid() if uid is None else uid
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def owner_uid(path: Path) -> int | None:
    """Who owns ``path`` itself (a link's own owner, not its target's): the filesystem says so, not a
    file anyone who can write there could have edited. None when it is gone."""
    try:
        return os.lstat(path).st_uid
    except OSError:
        return None


def read_origin(prefix: Path) -> dict[str, Any]:
    try:
        data = json.loads(read_regular_file(prefix / "conda-meta" / ORIGIN_FILE, 1 << 20))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def write_origin(prefix: Path, **fields: Any) -> None:
    """Where the environment came from: our record, readable by whoever may read the environment."""
    data = {"created_at": time.time(), "created_by": "jupyter-gpu-env", **fields}
    write_atomic(prefix / "conda-meta" / ORIGIN_FILE, json.dumps(data, indent=2), mode=0o644)


def describe(prefix: Path) -> PrefixInfo:
    """``prefix``'s packages, conda and pip, read from every record (blocking)."""
    records = read_records(prefix)
    pyver = python_version(records)
    sp = site_packages(prefix, pyver)
    packages = [
        Package(
            name=r["name"],
            version=str(r["version"]),
            build=r.get("build", ""),
            channel=channel_label(r),
            kind="conda",
        )
        for r in records
    ]
    packages += pypi_packages(prefix, records, sp)
    has_ipykernel = any(p.name.lower() == "ipykernel" for p in packages) and (
        sp is not None and (sp / "ipykernel").is_dir()
    )
    return PrefixInfo(pyver, packages, has_ipykernel, read_origin(prefix))


def site_dirs(prefix: Path) -> tuple[Path, ...]:
    """The site-packages folders whose modification time is part of :func:`cache_key`."""
    return tuple(sorted((prefix / "lib").glob("python3*/site-packages")))


def cache_key(prefix: Path, sites: tuple[Path, ...] | None = None) -> tuple[int, ...]:
    """Changes whenever conda or pip change the prefix (conda-meta or site-packages entries).

    ``sites``: the :func:`site_dirs` found last time; conda cannot add or remove one without changing
    conda-meta, whose time comes first in the key, so they need not be looked for again while it holds.
    """
    key = []
    for p in (prefix / "conda-meta", *(site_dirs(prefix) if sites is None else sites)):
        try:
            key.append(p.stat().st_mtime_ns)
        except OSError:
            key.append(0)
    return tuple(key)
