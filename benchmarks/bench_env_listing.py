"""`EnvironmentCatalog.list()` over 200 environments: first after a start, after a restart, warm; against a naive scan.

The 200 environments are `cp -al` copies of the demo environment (real prefixes of ~10,800 entries each,
hard-linked so they cost only their directories), made once under the benchmark cache. Cases:

- ours, first after a start: a new catalog with no saved state: locates the environments and reads
  the listings of each one's `conda-meta/` and `site-packages/`; sizes are "measuring";
- sizes measured: how long the background thread then takes to measure all 200 (not a request);
- ours, after a restart: a new catalog whose state file the first one saved: nothing is re-read;
- ours, warm: `list()` again on the same catalog: entries checked against the modification times of
  each prefix's `conda-meta/` and `site-packages/`;
- ours, one changed: `list()` after one environment's `conda-meta/` was touched (one re-read);
- naive: what an implementation without a cache does per request: `os.scandir` of the folder, then
  `json.load` of every `conda-meta/*.json` of every environment (no size, no pip packages).

Targets (issue 12): the first list under 300 ms, later ones under 20 ms.
"First" means a cold catalog, not a cold page cache: the files were read recently, so the operating
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
    from jupyter_gpu_env.envs.catalog import EnvironmentCatalog

    root = envs_root()
    empty = Path(tempfile.mkdtemp(prefix="gpu-env-bench-listing-"))

    def catalog(state: Path | None = None) -> EnvironmentCatalog:
        return EnvironmentCatalog(
            [root], empty / "envs", conda_lists=[], kernel_data_dir=empty / "jupyter", state_file=state
        )

    naive(root)  # the same page cache for every case
    cold, measured, restart, warm, changed, naive_s = [], [], [], [], [], []
    count = records = 0
    for r in range(COLD_ROUNDS):
        state = empty / f"state-{r}.json"
        cat = catalog(state)
        s, listed = _timed(lambda c=cat: asyncio.run(c.list()))
        cold.append(s)
        count = len(listed)
        assert all(e.size_state == "measuring" for e in listed)
        measured.append(_timed(cat.wait_measured)[0] + s)
        s, listed = _timed(lambda st=state: asyncio.run(catalog(st).list()))
        restart.append(s)
        assert all(e.size_state == "measured" for e in listed)
    for _ in range(WARM_ROUNDS):
        warm.append(_timed(lambda c=cat: asyncio.run(c.list()))[0])
    for i in range(3):
        os.utime(root / f"env-{i:03d}" / "conda-meta")
        changed.append(_timed(lambda c=cat: asyncio.run(c.list()))[0])
        cat.wait_measured()
    for _ in range(NAIVE_ROUNDS):
        s, records = _timed(naive, root)
        naive_s.append(s)
    shutil.rmtree(empty, ignore_errors=True)

    cases = (("cold", cold), ("restart", restart), ("warm", warm), ("changed", changed))
    m = {k: statistics.median(v) for k, v in cases}
    nv = statistics.median(naive_s)

    def row(label: str, seconds: float) -> str:
        return f"{label:<26}{seconds * 1000:>10.1f}{seconds * 1000 / N_ENVS:>9.3f}"

    return [
        f"{count} environments listed; the naive scan parsed {records} records",
        f"{'case':<26}{'ms':>10}{'ms/env':>9}",
        row("ours, first after a start", m["cold"]),
        row("  sizes all measured after", statistics.median(measured)),
        row("ours, after a restart", m["restart"]),
        row("ours, warm", m["warm"]),
        row("ours, one changed", m["changed"]),
        row("naive scan + json.load", nv),
        f"first list: {m['cold'] * 1000:.0f} ms (aim < 300: {'met' if m['cold'] < 0.3 else 'NOT met'}); "
        f"after a restart: {m['restart'] * 1000:.0f} ms; later: {m['warm'] * 1000:.1f} ms "
        f"(aim < 20: {'met' if m['warm'] < 0.02 else 'NOT met'})",
        f"ratio ours/naive: first {m['cold'] / nv:.3f}x, restart {m['restart'] / nv:.3f}x, "
        f"warm {m['warm'] / nv:.3f}x, one changed {m['changed'] / nv:.3f}x",
    ]


if __name__ == "__main__":
    print("\n".join(main()))
