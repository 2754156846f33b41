"""`EnvironmentCatalog.list()` over 200 environments, cold and warm, against a naive scan of every conda-meta record.

The 200 environments are `cp -al` copies of the demo environment (real prefixes of ~10,800 entries each,
hard-linked so they cost only their directories), made once under the benchmark cache. Cases:

- ours, cold: a new catalog's first `list()`: locates the environments and describes each one (reads its
  package records and pip packages, walks the whole prefix for its size on disk);
- ours, warm: `list()` again on the same catalog: descriptions come from the cache, checked against the
  modification times of each prefix's `conda-meta/` and `site-packages/`;
- ours, one changed: `list()` after one environment's `conda-meta/` was touched (one re-described);
- naive: what an implementation without a cache does per request: `os.scandir` of the folder, then
  `json.load` of every `conda-meta/*.json` of every environment (no size, no pip packages).

"Cold" means a cold catalog, not a cold page cache: the files were read recently, so the operating
system serves them from memory.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import _conda

N_ENVS = 200
WARM_ROUNDS = 20
NAIVE_ROUNDS = 3
COLD_ROUNDS = 2


def envs_root() -> Path:
    """200 `cp -al` copies of the demo environment, made the first time."""
    demo = _conda.demo_env()
    root = _conda.CONDA_CACHE / "listing" / f"envs-{N_ENVS}"
    marker = root / ".complete"
    if marker.is_file() and marker.read_text() == str(demo.stat().st_ino):
        return root
    _conda.say(f"making {N_ENVS} environments (cp -al of the demo environment) in {root}; once")
    _conda.remove(root)
    root.mkdir(parents=True)
    for i in range(N_ENVS):
        subprocess.run(["cp", "-al", str(demo), str(root / f"env-{i:03d}")], check=True)
    marker.write_text(str(demo.stat().st_ino))
    return root


def naive(root: Path) -> int:
    records = 0
    for entry in os.scandir(root):
        meta = os.path.join(entry.path, "conda-meta")
        if not os.path.isdir(meta):
            continue
        for rec in os.scandir(meta):
            if rec.name.endswith(".json"):
                with open(rec.path, encoding="utf-8") as f:
                    json.load(f)
                records += 1
    return records


def _timed(fn, *args) -> tuple[float, object]:
    t = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - t, out


def main() -> list[str]:
    from jupyter_gpu_env.envs.discovery import EnvironmentCatalog

    root = envs_root()
    empty = Path(tempfile.mkdtemp(prefix="gpu-env-bench-listing-"))

    def catalog() -> EnvironmentCatalog:
        return EnvironmentCatalog([root], empty / "envs", conda_lists=[], kernel_data_dir=empty / "jupyter")

    naive(root)  # the same page cache for every case
    cold, warm, changed, naive_s = [], [], [], []
    count = records = 0
    for _ in range(COLD_ROUNDS):
        cat = catalog()
        s, listed = _timed(lambda c=cat: asyncio.run(c.list()))
        cold.append(s)
        count = len(listed)
    for _ in range(WARM_ROUNDS):
        warm.append(_timed(lambda c=cat: asyncio.run(c.list()))[0])
    for i in range(3):
        os.utime(root / f"env-{i:03d}" / "conda-meta")
        changed.append(_timed(lambda c=cat: asyncio.run(c.list()))[0])
    for _ in range(NAIVE_ROUNDS):
        s, records = _timed(naive, root)
        naive_s.append(s)
    shutil.rmtree(empty, ignore_errors=True)

    m = {k: statistics.median(v) for k, v in (("cold", cold), ("warm", warm), ("changed", changed))}
    nv = statistics.median(naive_s)
    return [
        f"{count} environments listed; the naive scan parsed {records} records",
        f"{'case':<22}{'ms':>10}{'ms/env':>9}",
        f"{'ours, cold':<22}{m['cold'] * 1000:>10.1f}{m['cold'] * 1000 / N_ENVS:>9.2f}",
        f"{'ours, warm':<22}{m['warm'] * 1000:>10.1f}{m['warm'] * 1000 / N_ENVS:>9.3f}",
        f"{'ours, one changed':<22}{m['changed'] * 1000:>10.1f}{m['changed'] * 1000 / N_ENVS:>9.3f}",
        f"{'naive scan + json.load':<22}{nv * 1000:>10.1f}{nv * 1000 / N_ENVS:>9.2f}",
        f"ratio ours/naive: cold {m['cold'] / nv:.2f}x, warm {m['warm'] / nv:.3f}x, "
        f"one changed {m['changed'] / nv:.3f}x",
    ]


if __name__ == "__main__":
    print("\n".join(main()))
