"""Conda fixtures: a real local conda channel and a managed environment built from it (session-scoped),
and environment services over them.

A plugin module registered by the root conftest (``pytest_plugins``): the environment, image, job,
REST-conformance and CLI tests all use it.

The channel is built by the shipped demo builder (``python -m jupyter_gpu_env.demo build``) from this
machine's CPython and pip wheels of ipykernel, pip and tabulate (tabulate is in the channel but not in
the environment, for the install tests). Wheels and channel are cached under
``$JUPYTER_GPU_ENV_TEST_CACHE`` (default ``~/.cache/jupyter-gpu-env-tests``), so only a fresh machine
downloads and builds; the package cache and environments live in the session's temporary folder (one
filesystem, so clones hard-link).

The managed environment gets what conda does not track, like real ones: ``six`` installed with the
environment's own pip, a user file holding the prefix, and an activate.d script.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from jupyter_gpu_env.envs.catalog import EnvironmentCatalog
from jupyter_gpu_env.envs.claims import LOCK_DIR
from jupyter_gpu_env.envs.pip.tool import PipSettings
from jupyter_gpu_env.envs.rattler.engine import RattlerEngine
from jupyter_gpu_env.envs.service import EnvironmentService

T = TypeVar("T")

CACHE = (
    Path(
        os.environ.get("JUPYTER_GPU_ENV_TEST_CACHE")
        or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "jupyter-gpu-env-tests"
    )
    / f"py{sys.version_info.major}{sys.version_info.minor}"
)

ACTIVATE_SCRIPT = """\
# written by the test fixture
export DEMO_HOME="$CONDA_PREFIX/share/demo"
export DEMO_LITERAL='cost: $5'
export DEMO_PATHS="${CONDA_PREFIX}/lib:${LD_LIBRARY_PATH}"
if [ -n "$SOMETHING" ]; then
    export DEMO_CONDITIONAL=1
fi
export DEMO_SUBST="$(hostname)"
DEMO_PLAIN=1
"""


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine on a private loop (session fixtures run outside the tests' loop)."""
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(coro)
    finally:
        loop.close()


def _pip_download(dest: Path, *requirements: str) -> Path:
    if not any(dest.glob("*.whl")):
        dest.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "-q",
                "--only-binary=:all:",
                "-d",
                str(dest),
                *requirements,
            ],
            check=True,
        )
    return dest


@dataclass(frozen=True)
class Demo:
    channel: Path
    pkgs: Path
    managed_dir: Path
    env: Path
    extra_wheels: Path


@pytest.fixture(scope="session")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    wheels = _pip_download(CACHE / "wheels", "ipykernel", "pip", "tabulate")
    extra = _pip_download(CACHE / "extra-wheels", "six")
    root = tmp_path_factory.mktemp("conda")
    d = Demo(CACHE / "channel", root / "pkgs", root / "managed", root / "managed" / "demo", extra)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "jupyter_gpu_env.demo",
            "build",
            "--quiet",
            "--channel",
            str(d.channel),
            "--env",
            str(d.env),
            "--wheels",
            str(wheels),
            "--pkgs",
            str(d.pkgs),
        ],
        check=True,
    )
    subprocess.run(
        [
            str(d.env / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "-q",
            "--no-index",
            "--find-links",
            str(extra),
            "--disable-pip-version-check",
            "--root-user-action=ignore",
            "six",
        ],
        check=True,
    )
    (d.env / "share" / "demo").mkdir(parents=True)
    (d.env / "share" / "demo" / "notes.txt").write_text(f"data lives in {d.env}/share/demo\n")
    (d.env / "share" / "demo" / "blob.bin").write_bytes(b"\0\1binary " + os.fsencode(d.env) + b"\0")
    activate = d.env / "etc" / "conda" / "activate.d"
    activate.mkdir(parents=True)
    (activate / "demo.sh").write_text(ACTIVATE_SCRIPT)
    return d


@pytest.fixture
def demo_app_config(demo: Demo, tmp_path: Path) -> dict[str, Any]:
    """``c.GpuEnvApp`` for a server whose managed environment is the demo one and whose user
    environments go to ``tmp_path/user-envs``; tests add their own options."""
    return {
        "gpu_sample_interval": 0.5,
        "managed_env_dirs": [str(demo.managed_dir)],
        "user_env_dir": str(tmp_path / "user-envs"),
        "conda_channels": [str(demo.channel)],
        "pkgs_dir": str(demo.pkgs),
        # PyPI from the demo's wheels only: no test waits on, or fails for, the network.
        "pip_find_links": [str(demo.extra_wheels)],
        "pip_no_index": True,
    }


def _env_dir_entries(path: Path) -> list[str]:
    return sorted(p.name for p in path.iterdir() if p.name != LOCK_DIR) if path.exists() else []


@pytest.fixture
def env_dir_entries() -> Any:
    """``env_dir_entries(folder)``: what a folder of environments holds, less the lock files of claims
    (kept on purpose), to assert that nothing else was left behind."""
    return _env_dir_entries


def make_service(
    demo: Demo,
    home: Path,
    channels: list[str] | None = None,
    pip: PipSettings | None = None,
    *,
    root: Path | None = None,
    shared: list[Path] | None = None,
) -> EnvironmentService:
    catalog = EnvironmentCatalog(
        [demo.managed_dir],
        home / "envs",
        conda_lists=[home / ".conda" / "environments.txt"],
        kernel_data_dir=home / "jupyter",
        shared_dirs=shared or [],
    )
    engine = RattlerEngine([str(demo.channel)] if channels is None else channels, demo.pkgs)
    return EnvironmentService(
        catalog,
        engine,
        conda_list_path=home / ".conda" / "environments.txt",
        kernel_data_dir=home / "jupyter",
        pip=pip,
        root_dir=root or home,
    )


@pytest.fixture(name="make_service")
def make_service_fixture() -> Any:
    """``make_service(demo, home, channels=None, pip=None, root=home, shared=[])``: a service over its own
    user folder ``home``, reading files under ``root`` and sharing in ``shared``."""
    return make_service


@pytest.fixture
def service(demo: Demo, tmp_path: Path) -> EnvironmentService:
    """A service with an empty user environment folder of its own."""
    return make_service(demo, tmp_path)


@dataclass(frozen=True)
class Cloned:
    service: EnvironmentService
    prefix: Path
    result: Any


@pytest.fixture(scope="session")
def cloned(demo: Demo, tmp_path_factory: pytest.TempPathFactory) -> Cloned:
    """One clone of the managed environment, shared by the tests that only read it."""
    svc = make_service(demo, tmp_path_factory.mktemp("home"))
    result = run_sync(svc.clone("demo", "mine"))
    return Cloned(svc, svc.user_env_dir / "mine", result)
