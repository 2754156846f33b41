"""PyPI packages and plans on the demo environment: one small package added with uv and with pip, and the
time a plan (`dry_run`) takes.

Each round clones the demo afresh (not timed) and adds `tabulate` (one pure-Python wheel, 35 kB) from a
local wheelhouse (`--find-links`, `--no-index`: no network in the figures) through
`EnvironmentService.change_packages(pip_add=...)`: the whole transaction (hard-linked copy, the installer
with the copy's interpreter, scripts relocated to the final path, history, swap), once with uv and once with
the environment's own pip. Beside them, the installers alone (`uv pip install`, `python -m pip install`)
into a `cp -al` copy of the demo: what the transaction adds to each. Then plans on a clone, with a server's
spare conda worker: removing `jedi` (a conda solve with its cascade) and adding `tabulate` from
PyPI on a fresh clone (uv's dry run). Median of 3 rounds; the wheel is fetched once into the benchmark cache with pip.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import _conda

ROUNDS = 3
WHEELHOUSE = _conda.CACHE / "wheelhouse"


def _wheelhouse() -> Path:
    if not list(WHEELHOUSE.glob("tabulate-*.whl")):
        WHEELHOUSE.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
             "-d", str(WHEELHOUSE), "tabulate"],
            check=True,
        )  # fmt: skip
    return WHEELHOUSE


def _service(home: Path, installer: str):
    from jupyter_gpu_env.envs.catalog import EnvironmentCatalog
    from jupyter_gpu_env.envs.pip.tool import PipSettings
    from jupyter_gpu_env.envs.service import EnvironmentService

    conda_list = home / "environments.txt"
    catalog = EnvironmentCatalog(
        [_conda.MANAGED], home / "envs", conda_lists=[conda_list], kernel_data_dir=home / "jupyter"
    )
    pip = PipSettings(installer=installer, find_links=(str(WHEELHOUSE),), no_index=True)
    return EnvironmentService(
        catalog, _conda.engine(), conda_list_path=conda_list, kernel_data_dir=home / "jupyter", pip=pip
    )


def _bare(installer: str, prefix: Path) -> float:
    """The installer alone, into a fresh `cp -al` copy of the demo at ``prefix``."""
    from jupyter_gpu_env.envs.pip.tool import uv_binary

    subprocess.run(["cp", "-al", str(_conda.DEMO), str(prefix)], check=True)
    os.sync()
    python = str(prefix / "bin" / "python")
    source = ["--find-links", str(WHEELHOUSE), "--no-index"]
    if installer == "uv":
        argv = [str(uv_binary()), "pip", "install", "--python", python, "--no-progress", *source, "tabulate"]
    else:
        argv = [
            python,
            "-m",
            "pip",
            "install",
            "--no-input",
            "--disable-pip-version-check",
            *source,
            "tabulate",
        ]
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX")}
    t = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, env=env)
    return time.perf_counter() - t


async def _rounds(scratch: Path) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {
        k: [] for k in ("uv", "pip", "bare uv", "bare pip", "plan conda", "plan pypi")
    }
    services = {name: _service(scratch / name, name) for name in ("uv", "pip")}
    await services["uv"].engine.warm_up()
    for r in range(ROUNDS):
        for name, svc in services.items():
            env = f"r{r}"
            await svc.clone("demo", env)
            os.sync()
            t = time.perf_counter()
            await svc.change_packages(env, [], [], pip_add=["tabulate"])
            times[name].append(time.perf_counter() - t)
            times[f"bare {name}"].append(await asyncio.to_thread(_bare, name, scratch / f"bare-{name}-{r}"))
        svc = services["uv"]
        t = time.perf_counter()
        plan = await svc.plan_packages(f"r{r}", [], ["jedi"])
        times["plan conda"].append(time.perf_counter() - t)
        assert plan.unrequested_removals, plan
        await svc.clone("demo", f"plan{r}")
        t = time.perf_counter()
        await svc.plan_packages(f"plan{r}", [], [], pip_add=["tabulate"])
        times["plan pypi"].append(time.perf_counter() - t)
    await services["uv"].engine.close()
    return times


def main() -> list[str]:
    _conda.demo_env()
    _wheelhouse()
    scratch = _conda.fresh_scratch("pip")
    try:
        times = asyncio.run(_rounds(scratch))
    finally:
        _conda.remove(scratch)
    med = {k: statistics.median(v) for k, v in times.items()}
    lines = [f"{'what':<34}{'seconds':>9}"]
    labels = {
        "uv": "add tabulate, ours with uv",
        "pip": "add tabulate, ours with pip",
        "bare uv": "uv pip install alone",
        "bare pip": "pip install alone",
        "plan conda": "plan: remove jedi (conda)",
        "plan pypi": "plan: add tabulate (PyPI, uv)",
    }
    for key, label in labels.items():
        lines.append(f"{label:<34}{med[key]:>9.2f}")
    lines.append(
        f"ratio ours uv/ours pip: {med['uv'] / med['pip']:.2f}x (uv {med['pip'] / med['uv']:.1f}x faster)"
    )
    lines.append(f"ratio installer alone uv/pip: {med['bare uv'] / med['bare pip']:.2f}x")
    lines.append(
        f"transaction's own cost: {med['uv'] - med['bare uv']:.2f} s with uv, {med['pip'] - med['bare pip']:.2f} s with pip"
    )
    return lines


if __name__ == "__main__":
    print("\n".join(main()))
