"""Writing a ``.conda`` package from a staged folder: info/ metadata, then zip(tar.zst, tar.zst).

Text files that contain one of ``text_prefixes`` are declared with that string as their prefix
placeholder, so the installer replaces it with the environment's prefix (conda's "text" mode).
Binary files are never declared: replacing a path inside a binary needs same-length padding that
the files built here were not made for.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import zstandard

# Where scripts written by this builder point before installation; the installer replaces it.
PLACEHOLDER = "/opt/jupyter-gpu-env-placeholder/" + "placehold_" * 8


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _text_prefix(path: Path, prefixes: Sequence[bytes]) -> str | None:
    if not prefixes or path.stat().st_size > (32 << 20):
        return None
    data = path.read_bytes()
    if b"\0" in data[:8192]:
        return None
    return next((p.decode() for p in prefixes if p in data), None)


def _walk(stage: Path) -> list[str]:
    out = []
    for root, dirs, files in os.walk(stage):
        dirs.sort()
        rel_root = os.path.relpath(root, stage)
        if rel_root == "info" or rel_root.startswith("info" + os.sep):
            dirs.clear()
            continue
        links = [d for d in dirs if os.path.islink(os.path.join(root, d))]
        for name in sorted(files) + sorted(links):
            out.append(os.path.normpath(os.path.join(rel_root, name)))
    return out


def _tar_zst(stage: Path, members: list[str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for m in members:
            tar.add(stage / m, arcname=m, recursive=False)
    return zstandard.ZstdCompressor(level=3, threads=-1).compress(buf.getvalue())


def write_package(
    stage: Path,
    out_dir: Path,
    index: dict[str, Any],
    *,
    link: dict[str, Any] | None = None,
    text_prefixes: Sequence[str] = (),
) -> Path:
    """Package the payload in ``stage`` as ``<out_dir>/<name>-<version>-<build>.conda``."""
    prefixes = [p.encode() for p in text_prefixes]
    paths = []
    files = _walk(stage)
    for rel in files:
        full = stage / rel
        if full.is_symlink():
            target = os.readlink(full).encode()
            paths.append(
                {
                    "_path": rel,
                    "path_type": "softlink",
                    "sha256": hashlib.sha256(target).hexdigest(),
                    "size_in_bytes": len(target),
                }
            )
            continue
        entry: dict[str, Any] = {
            "_path": rel,
            "path_type": "hardlink",
            "sha256": _sha256(full),
            "size_in_bytes": full.stat().st_size,
        }
        placeholder = _text_prefix(full, prefixes)
        if placeholder:
            entry.update(prefix_placeholder=placeholder, file_mode="text")
        paths.append(entry)
    info = stage / "info"
    info.mkdir(exist_ok=True)
    (info / "index.json").write_text(json.dumps(index, indent=2, sort_keys=True))
    (info / "paths.json").write_text(json.dumps({"paths": paths, "paths_version": 1}, indent=2))
    (info / "files").write_text("".join(f + "\n" for f in files))
    with_prefix = [p for p in paths if "prefix_placeholder" in p]
    if with_prefix:
        (info / "has_prefix").write_text(
            "".join(f"{p['prefix_placeholder']} text {p['_path']}\n" for p in with_prefix)
        )
    if link:
        (info / "link.json").write_text(json.dumps(link, indent=2))
    stem = f"{index['name']}-{index['version']}-{index['build']}"
    out_dir.mkdir(parents=True, exist_ok=True)
    package = out_dir / f"{stem}.conda"
    info_members = ["info"] + [f"info/{n}" for n in sorted(os.listdir(info))]
    with zipfile.ZipFile(package, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr("metadata.json", json.dumps({"conda_pkg_format_version": 2}))
        z.writestr(f"pkg-{stem}.tar.zst", _tar_zst(stage, files))
        z.writestr(f"info-{stem}.tar.zst", _tar_zst(stage, info_members))
    return package
