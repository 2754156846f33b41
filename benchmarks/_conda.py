"""Conda environments for the clone, listing and pack benchmarks, built once in a cache folder and reused.

Layout under CONDA_CACHE (``~/.cache/jupyter-gpu-env-bench/conda``, or ``$JUPYTER_GPU_ENV_BENCH_CACHE/conda``),
all on one filesystem so that packages hard-link:

- ``channel/``, ``pkgs/``, ``managed/demo``: the shipped offline builder's channel, package cache and demo
  environment (``python -m jupyter_gpu_env.demo build``), plus files conda does not track (a pip-style
  package in site-packages, a user file holding the prefix, an activate.d script), like real environments;
- ``data-channel/``: one generated conda package, ``bench-data``, holding about 2 GiB in a realistic mix:
  20,000 files of 4-64 KiB in 200 folders and six files of 224 MiB; content from a seeded generator, in
  64 KiB chunks of which a third are random bytes and two thirds word-like text (so it compresses about
  2:1, like real environments' mix of binaries and text);
- ``managed/big``: the demo's packages plus ``bench-data``, installed from those channels, so that a clone
  relinks every one of its files from the package cache like any other package's;
- ``scratch/``: what one benchmark run makes (clones, copies, images); emptied before and after.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import os
import random
import secrets
import shutil
import stat
import subprocess
import sys
import tarfile
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

CACHE = Path(
    os.environ.get("JUPYTER_GPU_ENV_BENCH_CACHE") or Path.home() / ".cache" / "jupyter-gpu-env-bench"
)
CONDA_CACHE = CACHE / "conda"
CHANNEL = CONDA_CACHE / "channel"
DATA_CHANNEL = CONDA_CACHE / "data-channel"
PKGS = CONDA_CACHE / "pkgs"
MANAGED = CONDA_CACHE / "managed"
DEMO = MANAGED / "demo"
BIG = MANAGED / "big"
SCRATCH = CONDA_CACHE / "scratch"

EXTRAS_MARKER = "bench-extras"  # in conda-meta/, not .json: no package record
SEED = 20261122
SMALL_FILES, SMALL_DIRS, SMALL_MIN, SMALL_MAX = 20_000, 200, 4 << 10, 64 << 10
LARGE_FILES, LARGE_SIZE = 6, 224 << 20
CHUNK = 64 << 10
DATA_PACKAGE = ("bench-data", "1.0", "0")


def say(message: str) -> None:
    print(f"({message})", flush=True)


# ----- the demo environment -----


def add_untracked(prefix: Path) -> None:
    """What users and admins add without conda: a pip-installed package, a user file and an activate.d script."""
    sp = next((prefix / "lib").glob("python3*/site-packages"))
    (sp / "benchnote").mkdir(exist_ok=True)
    (sp / "benchnote" / "__init__.py").write_text(f'DATA = "{prefix}/share/bench"\n')
    dist = sp / "benchnote-1.0.dist-info"
    dist.mkdir(exist_ok=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: benchnote\nVersion: 1.0\n")
    (dist / "INSTALLER").write_text("pip\n")
    (dist / "RECORD").write_text("benchnote/__init__.py,,\nbenchnote-1.0.dist-info/METADATA,,\n")
    (prefix / "share" / "bench").mkdir(parents=True, exist_ok=True)
    (prefix / "share" / "bench" / "notes.txt").write_text(f"data lives in {prefix}/share/bench\n")
    activate = prefix / "etc" / "conda" / "activate.d"
    activate.mkdir(parents=True, exist_ok=True)
    (activate / "bench.sh").write_text('export BENCH_HOME="$CONDA_PREFIX/share/bench"\n')
    (prefix / "conda-meta" / EXTRAS_MARKER).write_text("1\n")


def demo_env() -> Path:
    """The demo managed environment (built with the shipped builder the first time)."""
    if (DEMO / "conda-meta" / EXTRAS_MARKER).is_file():
        return DEMO
    say(f"building the demo channel and environment in {CONDA_CACHE}; once")
    argv = [sys.executable, "-m", "jupyter_gpu_env.demo", "build", "--quiet"]
    argv += ["--channel", str(CHANNEL), "--env", str(DEMO), "--pkgs", str(PKGS)]
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    add_untracked(DEMO)
    return DEMO


# ----- the synthesized ~2 GiB environment -----


def _pools(rng: random.Random) -> tuple[bytes, bytes]:
    """32 MiB of random bytes and 32 MiB of word-like text, both from ``rng``."""
    letters = "abcdefghijklmnopqrstuvwxyz_"
    words = ["".join(rng.choices(letters, k=rng.randint(2, 10))) for _ in range(4096)]
    seps = [" "] * 10 + ["\n", "(", ")", ", ", " = ", ".", "    "]
    text = bytearray()
    while len(text) < 32 << 20:
        picks = rng.choices(words, k=100_000)
        glue = rng.choices(seps, k=100_000)
        text += "".join(w + s for w, s in zip(picks, glue, strict=True)).encode()
    return rng.randbytes(32 << 20), bytes(text[: 32 << 20])


def _content(rng: random.Random, pools: tuple[bytes, bytes], size: int) -> bytes:
    out = bytearray()
    while len(out) < size:
        pool = pools[0] if rng.random() < 1 / 3 else pools[1]
        n = min(CHUNK, size - len(out))
        start = rng.randrange(len(pool) - n)
        out += pool[start : start + n]
    return bytes(out)


def _data_files() -> Iterator[tuple[str, bytes]]:
    rng = random.Random(SEED)
    pools = _pools(rng)
    per_dir = SMALL_FILES // SMALL_DIRS
    for i in range(SMALL_FILES):
        rel = f"share/bench-data/d{i // per_dir:03d}/f{i % per_dir:03d}.dat"
        yield rel, _content(rng, pools, rng.randint(SMALL_MIN, SMALL_MAX))
    for i in range(LARGE_FILES):
        yield f"lib/libbenchdata{i}.so", _content(rng, pools, LARGE_SIZE)


def _write_data_package(subdir: Path) -> Path:
    """Write ``bench-data-1.0-0.conda`` into ``subdir`` (streamed: never the whole payload in memory)."""
    import zstandard

    name, version, build = DATA_PACKAGE
    stem = f"{name}-{version}-{build}"
    subdir.mkdir(parents=True, exist_ok=True)
    pkg_tar = subdir / f".{stem}.pkg.tar.zst"
    mtime = 1_763_769_600  # fixed: the same bytes every time
    paths, files = [], []
    with (
        open(pkg_tar, "wb") as raw,
        zstandard.ZstdCompressor(level=1, threads=-1).stream_writer(raw, closefd=False) as zw,
        tarfile.open(fileobj=zw, mode="w|", format=tarfile.PAX_FORMAT) as tar,
    ):
        for rel, data in _data_files():
            info = tarfile.TarInfo(rel)
            info.size, info.mode, info.mtime = len(data), 0o644, mtime
            tar.addfile(info, io.BytesIO(data))
            paths.append(
                {
                    "_path": rel,
                    "path_type": "hardlink",
                    "sha256": hashlib.sha256(data).hexdigest(),
                    "size_in_bytes": len(data),
                }
            )
            files.append(rel)
    index = {
        "name": name,
        "version": version,
        "build": build,
        "build_number": 0,
        "depends": [],
        "license": "MIT",
        "noarch": "generic",
        "subdir": "noarch",
        "timestamp": mtime * 1000,
    }
    info_files = {
        "info/index.json": json.dumps(index, indent=2, sort_keys=True).encode(),
        "info/paths.json": json.dumps({"paths": paths, "paths_version": 1}).encode(),
        "info/files": "".join(f + "\n" for f in files).encode(),
    }
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for rel, data in info_files.items():
            info = tarfile.TarInfo(rel)
            info.size, info.mode, info.mtime = len(data), 0o644, mtime
            tar.addfile(info, io.BytesIO(data))
    target = subdir / f"{stem}.conda"
    partial = subdir / f".{stem}.conda.partial"
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr("metadata.json", json.dumps({"conda_pkg_format_version": 2}))
        z.write(pkg_tar, f"pkg-{stem}.tar.zst")
        z.writestr(f"info-{stem}.tar.zst", zstandard.ZstdCompressor(level=3).compress(buf.getvalue()))
    pkg_tar.unlink()
    os.replace(partial, target)
    return target


def engine(pkgs: Path = PKGS):
    """The benchmarks' engine over their channels; ``pkgs``: another package cache (a new user's)."""
    from jupyter_gpu_env.envs.rattler.engine import RattlerEngine

    channels = [str(CHANNEL)] + ([str(DATA_CHANNEL)] if (DATA_CHANNEL / "noarch").is_dir() else [])
    return RattlerEngine(channels, pkgs)


def big_env() -> Path:
    """The demo's packages plus ``bench-data`` (about 2 GiB); generated and installed the first time."""
    if (BIG / "conda-meta" / EXTRAS_MARKER).is_file():
        return BIG
    demo_env()
    name, version, build = DATA_PACKAGE
    if not (DATA_CHANNEL / "noarch" / f"{name}-{version}-{build}.conda").is_file():
        say("generating the ~2 GiB bench-data package; once, a few minutes")
        t = time.perf_counter()
        _write_data_package(DATA_CHANNEL / "noarch")
        (DATA_CHANNEL / "linux-64").mkdir(exist_ok=True)
        asyncio.run(engine().index(DATA_CHANNEL))
        say(f"generated in {time.perf_counter() - t:.0f} s")
    say(f"installing the ~2 GiB environment at {BIG}; once")
    if BIG.exists():
        shutil.rmtree(BIG)
    build_dir = MANAGED / f".big.partial-{secrets.token_hex(4)}"
    try:
        asyncio.run(engine().create(BIG, ["python", "ipykernel", "pip", name], build_dir=build_dir))
        os.rename(build_dir, BIG)
    finally:
        shutil.rmtree(build_dir, ignore_errors=True)
    add_untracked(BIG)
    return BIG


# ----- measuring trees -----


def walk(root: Path) -> Iterator[os.stat_result]:
    """lstat of ``root`` and of everything under it."""
    yield os.lstat(root)
    stack = [str(root)]
    while stack:
        with os.scandir(stack.pop()) as it:
            for entry in it:
                st = entry.stat(follow_symlinks=False)
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                yield st


def inodes(*roots: Path) -> set[tuple[int, int]]:
    return {(st.st_dev, st.st_ino) for root in roots for st in walk(root)}


def new_bytes(root: Path, known: set[tuple[int, int]]) -> int:
    """Disk blocks of inodes under ``root`` that are not in ``known`` (hard links to known files cost 0)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for st in walk(root):
        key = (st.st_dev, st.st_ino)
        if key not in known and key not in seen:
            seen.add(key)
            total += st.st_blocks * 512
    return total


def tree_summary(root: Path) -> tuple[int, int]:
    """(files and links, bytes on disk with each inode counted once) under ``root``."""
    seen: set[tuple[int, int]] = set()
    files = size = 0
    for st in walk(root):
        if not stat.S_ISDIR(st.st_mode):
            files += 1
        if (st.st_dev, st.st_ino) not in seen:
            seen.add((st.st_dev, st.st_ino))
            size += st.st_blocks * 512
    return files, size


def fresh_scratch(name: str) -> Path:
    path = SCRATCH / name
    remove(path)
    path.mkdir(parents=True)
    return path


def remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def mb(n: float) -> float:
    return n / 1e6
