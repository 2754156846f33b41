"""The demo managed environment: wheels from PyPI, a local channel, an environment solved from it.

Everything is reused when already there: downloaded wheels (a marker lists what was asked for), the
channel (see :mod:`.channel`) and the environment (when it holds python and ipykernel). The
environment is built in a hidden sibling and renamed into place, like clones.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from .. import proc
from ..envs.catalog.prefix import read_records
from ..envs.engine import LogFn, Reporter, part
from ..envs.rattler.engine import RattlerEngine
from ..envs.service import default_pkgs_dir
from ..errors import Conflict
from .channel import build_channel

# tabulate is not installed in the demo environment: it is there to try "add packages" offline.
DEMO_REQUIREMENTS = ("ipykernel", "pip", "tabulate")
DEMO_SPECS = ("python", "ipykernel", "pip")


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "jupyter-gpu-env"


@dataclass
class DemoResult:
    channel: Path
    env: Path
    channel_built: bool
    env_built: bool


async def download_wheels(
    dest: Path, requirements: tuple[str, ...] | list[str] = DEMO_REQUIREMENTS, *, log: LogFn | None = None
) -> Path:
    """``pip download`` binary wheels of ``requirements`` and their dependencies into ``dest``."""
    await asyncio.to_thread(dest.mkdir, parents=True, exist_ok=True)
    await proc.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--only-binary=:all:",
            "--disable-pip-version-check",
            "--dest",
            str(dest),
            *requirements,
        ],
        timeout=900,
        on_stdout=log,
    )
    return dest


def _non_empty(path: Path) -> bool:
    return path.is_dir() and any(path.iterdir()) or path.is_file()


def _is_demo_env(prefix: Path) -> bool:
    names = {r["name"] for r in read_records(prefix)} if (prefix / "conda-meta").is_dir() else set()
    return {"python", "ipykernel"} <= names


def _move_into_place(build: Path, env: Path) -> None:
    if env.is_dir():
        env.rmdir()  # an empty folder made for it beforehand
    os.rename(build, env)


async def build_demo(
    channel: Path,
    env: Path,
    *,
    wheels: Path | None = None,
    pkgs_dir: Path | None = None,
    report: Reporter | None = None,
) -> DemoResult:
    """Make sure a local channel exists at ``channel`` and a managed environment at ``env``.

    Raises Conflict when ``env`` exists but is not such an environment (it is never overwritten).
    """
    cache = default_cache_dir()
    wheel_dir = wheels or cache / "wheels"
    channel, env, wheel_dir = await asyncio.to_thread(
        lambda: (channel.expanduser().resolve(), env.expanduser().resolve(), wheel_dir.expanduser())
    )
    engine = RattlerEngine([str(channel)], pkgs_dir or default_pkgs_dir())
    say = part(report)
    if not await asyncio.to_thread(lambda: any(wheel_dir.glob("*.whl"))):
        say.progress(
            0.0,
            f"Downloading wheels of {' and '.join(DEMO_REQUIREMENTS)} into {wheel_dir} (pip download)",
        )
        await download_wheels(wheel_dir, log=say.log)
    built = await build_channel(channel, wheel_dir, engine, report=part(report, 0.05, 0.6))
    if await asyncio.to_thread(_is_demo_env, env):
        say.progress(1.0, f"Reusing the environment at {env}")
        return DemoResult(channel, env, built, False)
    if await asyncio.to_thread(_non_empty, env):
        raise Conflict(f"{env} exists and is not an environment this command built; choose another path.")
    await asyncio.to_thread(env.parent.mkdir, parents=True, exist_ok=True)
    build = env.parent / f".{env.name}.partial-{secrets.token_hex(4)}"
    try:
        await engine.create(env, list(DEMO_SPECS), build_dir=build, report=part(report, 0.6, 0.95))
        await asyncio.to_thread(_move_into_place, build, env)
    except BaseException:
        await asyncio.shield(asyncio.to_thread(shutil.rmtree, build, True))
        raise
    check = await proc.run(
        [str(env / "bin" / "python"), "-c", "import ipykernel, sys; print(sys.prefix)"], timeout=120
    )
    if check.stdout.strip() != str(env):
        raise Conflict(f"The new environment's Python reports prefix {check.stdout.strip()!r}, not {env}.")
    say.progress(1.0, f"Environment ready at {env}")
    return DemoResult(channel, env, built, True)
