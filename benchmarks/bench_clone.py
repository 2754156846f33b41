"""Clone time and new disk use: EnvironmentService.clone against `cp -a` and `cp -al` of the same environment.

Two environments (see _conda): the demo environment (the shipped offline builder's: 145 MB, 9,500 files)
and a synthesized ~2.3 GB one (the same packages plus a generated package of 20,000 small and six 224 MiB
files; 29,500 files). Each method copies the managed environment into the same scratch folder, on the same
filesystem as the package cache:

- ours: `EnvironmentService.clone` as a server runs it (conda's clone semantics: packages relinked from
  the package cache by hard link, files holding the prefix rewritten, untracked files copied with the
  prefix rewritten, built in a hidden sibling and renamed into place, recorded in conda's environment
  list), in one event loop whose engine was warmed up at "server start" (a spare conda worker), one
  second of idle between two clones (the spare that follows a clone starts in it) and the size measured
  in the background before the next method runs;
- ours, first after a start: a new Python process builds the service, warms it up, idles one second
  (a server's start-up), then clones once: the first clone a user makes, module imports included;
- ours, new user: the same clone by a service whose package cache is its own and empty (every new user on a
  hub): what the cache lacks is hard-linked from the managed environment where it is on the same filesystem
  (copied where not), the files holding its prefix rewritten, instead of fetched and extracted again;
- `cp -a`: a full copy, the naive way;
- `cp -al`: hard links for everything, the lower bound for time and disk, but not a usable clone: files
  that hold the prefix still point at the source, and editing a file in place edits the source too.

New disk use is the disk blocks of inodes under the copy that neither the source environment nor the
package cache holds (a hard link costs nothing; every directory is a new inode). Each round runs the
three methods in turn (3 rounds on the demo, 1 on the big one); the median is printed. `os.sync()` runs between methods so that one's write-back does not fall
into the next one's time. The page cache is warm (the sources were just read or written): these are
warm-cache times.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import _conda

ROUNDS = {"demo": 3, "2 GiB": 1}
METHODS = ("ours", "ours, new user", "cp -a", "cp -al")


def _service(home: Path, pkgs: Path | None = None):
    from jupyter_gpu_env.envs.catalog import EnvironmentCatalog
    from jupyter_gpu_env.envs.service import EnvironmentService

    conda_list = home / "environments.txt"
    catalog = EnvironmentCatalog(
        [_conda.MANAGED], home / "envs", conda_lists=[conda_list], kernel_data_dir=home / "jupyter"
    )
    engine = _conda.engine() if pkgs is None else _conda.engine(pkgs)  # a new user's: empty, their own
    return EnvironmentService(catalog, engine, conda_list_path=conda_list, kernel_data_dir=home / "jupyter")


_FIRST = """
import asyncio, json, sys, time
sys.path.insert(0, {here!r})
import bench_clone
from pathlib import Path
service = bench_clone._service(Path({home!r}))
async def main():
    await service.engine.warm_up()
    await asyncio.sleep(1)  # the server's start-up: the spare loads meanwhile
    t = time.perf_counter()
    await service.clone({source!r}, {name!r})
    took = time.perf_counter() - t
    await service.engine.close()
    return took
print(json.dumps(asyncio.run(main())))
"""


def _first_clone(source: Path, scratch: Path, name: str) -> float:
    """A new process's first clone (after its warm-up), in seconds."""
    code = _FIRST.format(
        here=str(Path(__file__).parent), home=str(scratch / "home"), source=source.name, name=name
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(json.loads(out.stdout.strip().splitlines()[-1]))


def _measure(
    label: str, source: Path, scratch: Path
) -> tuple[dict[str, list[float]], dict[str, int], list[str]]:
    service = _service(scratch / "home")
    loop = asyncio.new_event_loop()  # a server's: the spare worker belongs to it
    loop.run_until_complete(service.engine.warm_up())
    known = _conda.inodes(source, _conda.PKGS)
    seconds: dict[str, list[float]] = {m: [] for m in METHODS}
    new: dict[str, int] = {}
    notes: list[str] = []
    first: list[float] = []
    new_user_seconds: list[float] = []

    for r in range(ROUNDS[label]):
        name = f"bench-{source.name}-{r}"
        loop.run_until_complete(asyncio.sleep(1))  # idle, as between two clicks

        def ours(name: str = name) -> Path:
            result = loop.run_until_complete(service.clone(source.name, name))
            if result.report.fetched or result.report.copied_from_source:
                notes.append(
                    f"note: clone did not relink everything from the cache: {result.report.model_dump()}"
                )
            return service.user_env_dir / name

        def cp(flags: str, name: str = name) -> Callable[[], Path]:
            def run() -> Path:
                dst = scratch / f"{name}{flags}"
                subprocess.run(["cp", flags, str(source), str(dst)], check=True)
                return dst

            return run

        def new_user(name: str = name, r: int = r) -> Path:
            # Every new user on a hub: a package cache of their own, still empty (a fresh one each round).
            fresh = _service(scratch / f"new-home-{r}", scratch / f"new-pkgs-{r}")
            loop.run_until_complete(fresh.engine.warm_up())
            loop.run_until_complete(asyncio.sleep(1))
            t = time.perf_counter()
            result = loop.run_until_complete(fresh.clone(source.name, name))
            new_user_seconds.append(time.perf_counter() - t)
            loop.run_until_complete(fresh.engine.close())
            fresh.catalog.wait_measured()
            if result.report.fetched:
                notes.append(f"note: a new user's clone fetched {len(result.report.fetched)} packages")
            return fresh.user_env_dir / name

        runs = {"ours": ours, "ours, new user": new_user, "cp -a": cp("-a"), "cp -al": cp("-al")}
        for method in METHODS:
            os.sync()
            t = time.perf_counter()
            dst = runs[method]()
            took = time.perf_counter() - t
            # a new user's clone is timed inside (its service's start is a server's, not the clone's)
            seconds[method].append(new_user_seconds.pop() if method == "ours, new user" else took)
            service.catalog.wait_measured()  # the background size walk, out of the next method's time
            new[method] = _conda.new_bytes(dst, known)
            _conda.remove(dst)
            os.sync()
        os.sync()
        first.append(_first_clone(source, scratch, f"first-{r}"))
        _conda.remove(scratch / "home" / "envs" / f"first-{r}")
    loop.run_until_complete(service.engine.close())
    loop.close()
    seconds["first"] = first
    return seconds, new, notes


def main() -> list[str]:
    # BENCH_CLONE_ENVS=demo: the demo one only (the 2 GiB one takes minutes to generate the first time)
    chosen = os.environ.get("BENCH_CLONE_ENVS", "demo,2 GiB").split(",")
    makers = {"demo": _conda.demo_env, "2 GiB": _conda.big_env}
    envs = {label: make() for label, make in makers.items() if label in chosen}
    scratch = _conda.fresh_scratch("clone")
    lines = [f"{'environment':<13}{'files':>9}{'size MB':>9}"]
    results = {}
    try:
        for label, source in envs.items():
            files, size = _conda.tree_summary(source)
            lines.append(f"{label:<13}{files:>9}{_conda.mb(size):>9.0f}")
            results[label] = _measure(label, source, scratch)
    finally:
        _conda.remove(scratch)
    lines.append("")
    lines.append(f"{'environment':<13}{'method':<22}{'seconds':>9}{'new MB':>9}")
    for label, (seconds, new, _) in results.items():
        for m in METHODS:
            lines.append(f"{label:<13}{m:<22}{statistics.median(seconds[m]):>9.2f}{_conda.mb(new[m]):>9.1f}")
        lines.append(f"{label:<13}{'ours, first after start':<22}{statistics.median(seconds['first']):>9.2f}")
    for label, (seconds, new, notes) in results.items():
        t = {m: statistics.median(v) for m, v in seconds.items()}
        for base in ("cp -a", "cp -al"):
            lines.append(
                f"ratio ours/{base} ({label}): time {t['ours'] / t[base]:.2f}x, "
                f"new disk {new['ours'] / max(new[base], 1):.3f}x"
            )
        fresh = t["ours, new user"]
        lines.append(
            f"new user, empty package cache ({label}): {fresh:.2f} s = {fresh / t['cp -a']:.2f}x of cp -a "
            f"(aim <= 1.0: {'met' if fresh <= t['cp -a'] else 'NOT met'}), {fresh / t['cp -al']:.2f}x of cp -al"
        )
        if label == "demo":
            near = t["ours"] / t["cp -al"]
            lines.append(
                f"clone targets (demo): first after a start {t['first']:.2f} s (aim < 1.0: "
                f"{'met' if t['first'] < 1.0 else 'NOT met'}), later {near:.2f}x of cp -al (aim <= 1.5: "
                f"{'met' if near <= 1.5 else 'NOT met'})"
            )
        lines += notes
    return lines


if __name__ == "__main__":
    print("\n".join(main()))
