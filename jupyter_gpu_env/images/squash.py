"""Pack an environment into squashfs without a staging copy: conda-pack decides, mksquashfs reads in place.

conda-pack's own squashfs path hard-links every one of an environment's 10,000+ files into a staging
folder before compressing, and on small files that fixed cost is half of a pack. Here conda-pack stays
the authority on what the destination prefix changes (its Python API: which files it packs, which it
rewrites and how), but only the few files whose bytes change are written aside. mksquashfs then reads
the environment folder itself; a pseudo-file definition puts each rewritten file at its place, and an
exclude list takes out the original bytes there (and anything conda-pack would not pack).

The definitions are of the "hard link to a host file" kind (``l``), not "the output of a command" (``F``):
mksquashfs forks a shell for every command, and those forks cost as much as the rest of the plan.
The staged file carries the original's mode and time, so the image sees them as before; its owner is the
packer's user, as it is for the files conda-pack itself rewrites.

The settings were chosen by measurement on this project's benchmark environments (docs/benchmarks.md),
with 1 MiB blocks on every core. On the 140 MB demo, zstd level 6 packs in 1.0 s at 0.89 of conda-pack's
default tar.gz size, level 3 in 0.57 s at 0.95; level 10 with 256 KiB blocks (conda-pack's choice) is
smaller by 3 % and twice as slow. On the 2 GiB one, level 6 takes 18 s and level 3 9 s for 2.9 % more
bytes. So an environment up to 1 GiB is compressed at level 6 (a second or two, for the smaller image),
a larger one at zstd's default level 3, where compression is nearly all of the wait.
"""

from __future__ import annotations

import contextlib
import functools
import os
import pickle
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

from .records import rewrite as records_rewrite

ZSTD_LEVEL = 6
LARGE_ZSTD_LEVEL = 3
LARGE_BYTES = 1 << 30  # environments over this are compressed at LARGE_ZSTD_LEVEL
BLOCK_SIZE = 1 << 20

Tick = Callable[[float, str], None]
T = TypeVar("T")


@dataclass(frozen=True)
class Rewritten:
    """A file of the image whose bytes are not the environment's: they were written to ``staged``, with
    the original's mode and modification time."""

    target: str  # its path in the image, relative, '/'-separated
    staged: Path


@dataclass
class PackPlan:
    """What mksquashfs needs besides the environment folder."""

    rewritten: list[Rewritten] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)  # on disk, but not packed as they are
    files: int = 0  # files conda-pack packs
    # The packed files' bytes, from the package records' sizes and the untracked files' own; a record
    # without sizes (an old conda's) adds nothing, which errs toward the smaller, slower compression.
    size_bytes: int = 0


class UnpackableName(ValueError):
    """A path mksquashfs's exclude and pseudo files cannot express (it holds a line break)."""


@dataclass
class _Beside:
    """What is read beside conda-pack's own reading of the environment (see :func:`plan`)."""

    records: dict[str, tuple[Path, int]]  # conda-meta/NAME.json -> its rewritten copy, its files' bytes
    has_conda: bool


def _beside(root: str, names: list[str], staging: Path) -> _Beside:
    """Rewrite the package records ``names`` as conda-pack does (no local paths)."""
    records: dict[str, tuple[Path, int]] = {}
    has_conda = False
    for i, name in enumerate(names):
        source = os.path.join(root, name)
        out, record = records_rewrite(source)
        has_conda = has_conda or record.get("name") == "conda"
        records[name] = (_stage(staging / f"record-{i}", out, source), _record_bytes(record))
    return _Beside(records, has_conda)


def _stage(staged: Path, data: bytes, like: str) -> Path:
    st = os.stat(like)
    staged.write_bytes(data)
    os.chmod(staged, st.st_mode & 0o7777)
    os.utime(staged, ns=(st.st_atime_ns, st.st_mtime_ns))
    return staged


def plan(
    prefix: Path, dest_prefix: str, staging: Path, tick: Tick | None = None, *, fork: bool = False
) -> PackPlan:
    """Decide, file by file as conda-pack's ``Packer.add`` does with a destination prefix, what the image
    holds; write the bytes that differ from the environment's into ``staging``.

    conda-pack reads the files of conda packages from the package cache: those with a prefix placeholder
    are rewritten from there, exactly as conda-pack does; the others are read in place, from the
    environment's own copy. With ``fork`` (the packer: one thread, a process of its own), the listing
    and the package records are done by a forked child on another core while conda-pack reads the
    environment: they are half of the plan's time.
    """
    from conda_pack.core import CondaEnv, _scripts, is_binary_file
    from conda_pack.prefixes import replace_prefix

    root = os.path.realpath(prefix)
    on_disk, listed = _walk(root)
    names = sorted(n for n in on_disk if _is_record(n))
    beside = (
        forked(_beside, root, names, staging) if fork else functools.partial(_beside, root, names, staging)
    )
    with _listing(root, listed):
        env = CondaEnv.from_prefix(str(prefix))
    done = beside()
    result = PackPlan(files=len(env.files))
    packed: set[str] = set()
    has_conda = done.has_conda
    total = max(len(env.files), 1)

    def stage(target: str, data: bytes, like: str) -> None:
        staged = _stage(staging / f"{len(result.rewritten)}", data, like)
        result.rewritten.append(Rewritten(target, staged))

    for i, f in enumerate(env.files):
        if tick is not None and i % 2000 == 0:
            tick(i / total, f"Checking files for the destination prefix ({i}/{total})")
        target = _normalised(f.target)
        packed.add(target)
        if f.file_mode is None:
            if target in done.records:
                staged, size = done.records.pop(target)
                result.rewritten.append(Rewritten(target, staged))
                result.size_bytes += size
            elif _is_record(f.target):
                out, record = records_rewrite(f.source)
                result.size_bytes += _record_bytes(record)
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
        if not f.is_conda:  # an untracked file (a record counts the others)
            result.size_bytes += len(data)
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

    for staged, _ in done.records.values():  # records conda-pack does not pack
        staged.unlink()
    staged_targets = {r.target for r in result.rewritten}
    result.excluded = sorted(staged_targets | _not_packed(on_disk, packed))
    for name in [*result.excluded, *staged_targets]:
        if "\n" in name or "\r" in name:
            raise UnpackableName(f"the file name {name!r} holds a line break")
    return result


def forked(fn: Callable[..., T], *args: object) -> Callable[[], T]:
    """Start ``fn(*args)`` in a forked child; the function returned waits for its result (or raises its
    error). Only for a single-threaded process; a child killed with its process group says so."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        try:
            os.close(read_end)
            try:
                payload = pickle.dumps((True, fn(*args)))
            except BaseException as e:
                try:
                    payload = pickle.dumps((False, e))
                except Exception:  # an error that cannot travel still says what it was
                    payload = pickle.dumps((False, RuntimeError(f"{type(e).__name__}: {e}")))
            with os.fdopen(write_end, "wb") as out:
                out.write(payload)
        finally:
            os._exit(0)
    os.close(write_end)

    def result() -> T:
        with os.fdopen(read_end, "rb") as got:
            payload = got.read()
        os.waitpid(pid, 0)
        if not payload:
            raise RuntimeError("the packer's helper process ended without an answer")
        ok, value = pickle.loads(payload)
        if not ok:
            raise value
        return cast(T, value)

    return result


def _normalised(path: str) -> str:
    """``os.path.normpath`` of a relative path, skipped where it would change nothing (no empty, ``.``
    or ``..`` part, no trailing slash): that is nearly every path, and the call is a tenth of the loop."""
    if not path or "//" in path or "/." in path or path[0] == "." or path[-1] == "/":
        return os.path.normpath(path)
    return path


def _is_record(path: str) -> bool:
    """``fnmatch(path, "conda-meta/*.json")``, the test conda-pack's ``Packer.add`` makes (its ``*``
    takes slashes too), without a pattern match per file."""
    return path.startswith("conda-meta/") and path.endswith(".json")


def _record_bytes(record: dict[str, Any]) -> int:
    paths = (record.get("paths_data") or {}).get("paths") or []
    return sum(p.get("size_in_bytes") or 0 for p in paths if isinstance(p, dict))


def zstd_level(size_bytes: int) -> int:
    """The compression level for an environment of ``size_bytes`` (see the module's docstring)."""
    return LARGE_ZSTD_LEVEL if size_bytes > LARGE_BYTES else ZSTD_LEVEL


# conda-pack's load_files leaves these out at the top of an environment (conda_pack/core.py)
_NOT_LISTED = {
    "pkgs",
    "envs",
    "conda-bld",
    ".conda_lock",
    "users",
    "conda-recipes",
    ".index",
    ".unionfs",
    ".nonadmin",
    "python.app",
    "Launcher.app",
}


def _walk(root: str) -> tuple[dict[str, bool], set[str]]:
    """One walk of the environment for two readers: every path under ``root`` (relative, with whether it
    is a folder; links are not), and the file list conda-pack's ``load_files`` makes of it.

    conda-pack walks the environment with ``os.walk`` and a ``relpath`` per folder, a third of its
    reading; this is the same list from the ``scandir`` walk the plan makes anyway, element for element
    (``tests/images/test_squash.py`` compares them): files and links to anything, links to folders
    without following them, empty folders, unreadable folders left out, and the top-level names
    conda-pack ignores not descended into.
    """
    on_disk: dict[str, bool] = {}
    listed: set[str] = set()
    stack: list[tuple[str, str]] = []  # (relative folder + "/", its path): below the top, all is listed
    try:
        top = list(os.scandir(root))
    except OSError:
        return on_disk, listed
    for entry in top:
        name = entry.name
        is_dir = entry.is_dir(follow_symlinks=False)
        on_disk[name] = is_dir
        if name in _NOT_LISTED or name.endswith("~") or name.endswith(".DS_STORE"):
            continue
        if entry.is_symlink() or entry.is_file():
            listed.add(name)
        elif is_dir:
            stack.append((name + "/", entry.path))
    while stack:
        rel_dir, path = stack.pop()
        try:
            entries = list(os.scandir(path))
        except OSError:
            continue  # os.walk says nothing of a folder it cannot read
        if not entries:  # an empty folder is an entry of its own
            listed.add(rel_dir[:-1])
        for entry in entries:
            rel = f"{rel_dir}{entry.name}"
            is_dir = entry.is_dir(follow_symlinks=False)
            on_disk[rel] = is_dir
            if is_dir:
                stack.append((rel + "/", entry.path))
            else:  # a file, or a link to anything (a folder's is not followed)
                listed.add(rel)
    return on_disk, listed


@contextlib.contextmanager
def _listing(root: str, listed: set[str]) -> Iterator[None]:
    """conda-pack's ``load_files`` answers ``listed`` for ``root`` while in this block. It patches the
    module for the whole process: :func:`plan` runs in the packer, a process of its own with one thread
    (or in a single-threaded benchmark or test)."""
    import conda_pack.core as core

    own = core.load_files

    def load_files(prefix: str) -> set[str]:
        return set(listed) if os.path.realpath(prefix) == root else own(prefix)

    core.load_files = load_files
    try:
        yield
    finally:
        core.load_files = own


def _not_packed(on_disk: dict[str, bool], packed: set[str]) -> set[str]:
    """Entries on disk that conda-pack leaves out (its own ignores): a folder with nothing packed in it
    is one entry, not one per file. (Paths are relative and normalised, so ``rpartition`` is
    ``os.path.dirname``, at a fraction of its cost on 10,000 paths.)"""
    holding = set()  # folders with something packed inside
    for p in packed:
        p = p.rpartition("/")[0]
        while p and p not in holding:
            holding.add(p)
            p = p.rpartition("/")[0]
    out = set()
    for rel in on_disk.keys() - packed:
        if on_disk[rel] and rel in holding:
            continue
        parent = rel.rpartition("/")[0]
        if not parent or parent in holding or parent in packed:  # else its folder is left out whole
            out.add(rel)
    return out


def pseudo_lines(rewritten: list[Rewritten]) -> list[str]:
    """mksquashfs pseudo definitions: each rewritten file taken from where it was staged."""
    return [f'"{_quoted(r.target)}" l "{_quoted(str(r.staged))}"' for r in rewritten]


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
    level: int = ZSTD_LEVEL,
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
        argv += ["-comp", "zstd", "-Xcompression-level", str(level), "-b", str(BLOCK_SIZE)]
    if pseudo_file is not None:
        argv += ["-pf", str(pseudo_file)]
    if exclude_file is not None:
        argv += ["-ef", str(exclude_file)]
    return argv
