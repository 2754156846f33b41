"""Run the benchmark suite: `python benchmarks/run.py [NAME ...]` (NAME: a bench_*.py stem).

Each benchmark measures our code and its baseline in the same run and prints ratios, so figures from
different machines compare by ratio, not by absolute time.
"""

from __future__ import annotations

import importlib
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(names: list[str]) -> int:
    sys.path.insert(0, str(HERE))
    available = sorted(p.stem for p in HERE.glob("bench_*.py"))
    chosen = [n if n.startswith("bench_") else f"bench_{n}" for n in names] or available
    unknown = [n for n in chosen if n not in available]
    if unknown:
        print(f"unknown benchmark(s) {unknown}; available: {available}", file=sys.stderr)
        return 2
    print(
        f"# {platform.node()} {platform.machine()} python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d %H:%M')}"
    )
    for name in chosen:
        mod = importlib.import_module(name)
        print(f"\n## {name}: {(mod.__doc__ or '').strip().splitlines()[0]}")
        t = time.perf_counter()
        for line in mod.main():
            print(line)
        print(f"({time.perf_counter() - t:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
