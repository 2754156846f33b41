"""Pack an environment into squashfs without a staging copy: conda-pack decides, mksquashfs reads in place.

conda-pack's own squashfs path hard-links every one of an environment's 10,000+ files into a staging
folder before compressing, and on small files that fixed cost is half of a pack. Here conda-pack stays
the authority on what the destination prefix changes (its Python API: which files it packs, which it
rewrites and how), but only the few files whose bytes change are written aside. mksquashfs then reads
the environment folder itself; a pseudo-file definition puts each rewritten file at its place, and an
exclude list takes out the original bytes there (and anything conda-pack would not pack).

The settings were chosen by measurement on this project's benchmark environment (docs/benchmarks.md):
zstd level 6 with 1 MiB blocks packs it at 0.89 of conda-pack's default tar.gz size in well under a
third of its time; level 10 with 256 KiB blocks (conda-pack's choice) is smaller by 3 % and twice as slow.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ZSTD_LEVEL = 6
BLOCK_SIZE = 1 << 20
# A pseudo file's content is what its command prints: mksquashfs runs it with /bin/sh -c.
_COPY = "cat"

Tick = Callable[[float, str], None]


@dataclass(frozen=True)
class Rewritten:
    """A file of the image whose bytes are not the environment's: they were written to ``staged``."""

    target: str  # its path in the image, relative, '/'-separated
    staged: Path
    mode: int
    uid: int
    gid: int
    mtime: int


@dataclass
class PackPlan:
    """What mksquashfs needs besides the environment folder."""

    rewritten: list[Rewritten] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)  # on disk, but not packed as they are
    files: int = 0  # files conda-pack packs


class UnpackableName(ValueError):
    """A path mksquashfs's exclude and pseudo files cannot express (it holds a line break)."""


def plan(prefix: Path, dest_prefix: str, staging: Path, tick: Tick | None = None) -> PackPlan:
    """Decide, file by file as conda-pack's ``Packer.add`` does with a destination prefix, what the image
    holds; write the bytes that differ from the environment's into ``staging``.

    conda-pack reads the files of conda packages from the package cache: those with a prefix placeholder
    are rewritten from there, exactly as conda-pack does; the others are read in place, from the
    environment's own copy.
    """
    from conda_pack.core import CondaEnv, _scripts, is_binary_file, rewrite_conda_meta
    from conda_pack.prefixes import replace_prefix

    env = CondaEnv.from_prefix(str(prefix))
    root = os.path.realpath(env.prefix)
    on_disk = _entries(Path(root))
    result = PackPlan(files=len(env.files))
    packed: set[str] = set()
    has_conda = False
    total = max(len(env.files), 1)

    def stage(target: str, data: bytes, like: str) -> None:
        st = os.stat(like)
        staged = staging / f"{len(result.rewritten)}"
        staged.write_bytes(data)
        result.rewritten.append(
            Rewritten(target, staged, st.st_mode & 0o7777, st.st_uid, st.st_gid, int(st.st_mtime))
        )

    for i, f in enumerate(env.files):
        if tick is not None and i % 2000 == 0:
            tick(i / total, f"Checking files for the destination prefix ({i}/{total})")
        target = os.path.normpath(f.target)
        packed.add(target)
        if f.file_mode is None:
            if fnmatch.fnmatch(f.target, "conda-meta/*.json"):
                out, record = rewrite_conda_meta(f.source)
                has_conda = has_conda or record.get("name") == "conda"
                stage(target, out, f.source)
            elif target not in on_disk:
                # conda-pack reads a package's files from the package cache; the environment's own
                # copy (a hard link of it, as a rule) is what the image holds, unless it is missing
                stage(target, Path(f.source).read_bytes(), f.source)
            continue
        if os.path.isdir(f.source) or os.path.islink(f.source):
            if target not in on_disk:
                raise UnpackableName(f"{target} is missing from the environment")
            continue
        with open(f.source, "rb") as fh:
            data = fh.read()
        mode, placeholder = f.file_mode, f.prefix_placeholder
        if mode == "unknown":
            placeholder = env.prefix
            mode = "unknown" if is_binary_file(data) else "text"
        new = replace_prefix(data, mode, placeholder, dest_prefix) if mode != "unknown" else data
        if new != data or target not in on_disk:
            stage(target, new, f.source)

    if not has_conda:  # conda-pack's activate scripts, unless conda itself is in the environment
        for source, target in _scripts:
            packed.add(target)
            stage(target, Path(source).read_bytes(), source)

    staged_targets = {r.target for r in result.rewritten}
    result.excluded = sorted(staged_targets | _not_packed(on_disk, packed))
    for name in [*result.excluded, *staged_targets]:
        if "\n" in name or "\r" in name:
            raise UnpackableName(f"the file name {name!r} holds a line break")
    return result


def _entries(root: Path) -> dict[str, bool]:
    """Every path under ``root``, relative, each with whether it is a folder (links are not)."""
    out: dict[str, bool] = {}
    stack = [("", str(root))]
    while stack:
        rel_dir, path = stack.pop()
        try:
            entries = list(os.scandir(path))
        except OSError:
            continue
        for entry in entries:
            rel = f"{rel_dir}{entry.name}"
            is_dir = entry.is_dir(follow_symlinks=False)
            out[rel] = is_dir
            if is_dir:
                stack.append((rel + "/", entry.path))
    return out


def _not_packed(on_disk: dict[str, bool], packed: set[str]) -> set[str]:
    """Entries on disk that conda-pack leaves out (its own ignores): a folder with nothing packed in it
    is one entry, not one per file."""
    holding = set()  # folders with something packed inside
    for p in packed:
        p = os.path.dirname(p)
        while p and p not in holding:
            holding.add(p)
            p = os.path.dirname(p)
    out = set()
    for rel, is_dir in on_disk.items():
        if rel in packed or (is_dir and rel in holding):
            continue
        parent = os.path.dirname(rel)
        if not parent or parent in holding or parent in packed:  # else its folder is left out whole
            out.add(rel)
    return out


def pseudo_lines(rewritten: list[Rewritten]) -> list[str]:
    """mksquashfs pseudo definitions: each rewritten file, with the original's mode, owner and time."""
    return [
        f'"{_quoted(r.target)}" F {r.mtime} {r.mode:o} {r.uid} {r.gid} {_COPY} {r.staged}' for r in rewritten
    ]


def _quoted(name: str) -> str:
    return name.replace("\\", "\\\\").replace('"', '\\"')


def mksquashfs_argv(
    source: Path,
    output: Path,
    *,
    compression: str,
    processors: int,
    pseudo_file: Path | None,
    exclude_file: Path | None,
) -> list[str]:
    argv = ["mksquashfs", str(source), str(output), "-noappend", "-processors", str(processors)]
    # No xattrs: an environment's carry nothing a Python needs, and reading them is a call per file
    # (slow on shared filesystems).
    argv += ["-quiet", "-no-progress", "-no-xattrs"]
    if compression == "none":
        argv += ["-noI", "-noD", "-noF", "-noX"]
    elif compression == "xz":
        argv += ["-comp", "xz"]
    else:
        argv += ["-comp", "zstd", "-Xcompression-level", str(ZSTD_LEVEL), "-b", str(BLOCK_SIZE)]
    if pseudo_file is not None:
        argv += ["-pf", str(pseudo_file)]
    if exclude_file is not None:
        argv += ["-ef", str(exclude_file)]
    return argv
