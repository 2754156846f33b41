"""The command line's tests: a home with its own Jupyter folders and config pointing at the demo."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from batch_fixtures import Env


@pytest.fixture
def terminal(tmp_path, monkeypatch):
    """A terminal's world in ``tmp_path``: its own home and Jupyter folders, this Python's commands first
    on PATH; ``terminal(config)`` writes ``config`` as the server's configuration there."""
    for var, sub in [
        ("HOME", "home"),
        ("JUPYTER_CONFIG_DIR", "config"),
        ("JUPYTER_DATA_DIR", "data"),
        ("JUPYTER_RUNTIME_DIR", "runtime"),
        ("XDG_CACHE_HOME", "cache"),
    ]:
        (tmp_path / sub).mkdir(exist_ok=True)
        monkeypatch.setenv(var, str(tmp_path / sub))
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])

    def configure(config: dict) -> None:
        (tmp_path / "config" / "jupyter_server_config.json").write_text(json.dumps(config))

    return configure


@pytest.fixture
def home(demo, tmp_path, monkeypatch, terminal) -> Path:
    terminal(
        {
            "GpuEnvApp": {
                "managed_env_dirs": [str(demo.managed_dir)],
                "user_env_dir": str(tmp_path / "envs"),
                "conda_channels": [str(demo.channel)],
                "pkgs_dir": str(demo.pkgs),
                "image_dir": str(tmp_path / "images"),
            }
        }
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def batch_terminal(batch, monkeypatch, terminal) -> Callable[..., Env]:
    """A terminal in the ``batch`` workspace's root (its current directory), for the job, sweep, schedule,
    pipeline and Dask commands: ``batch_terminal(**sections)`` writes the server's configuration (its job
    folder ``jobs``, and the given sections, e.g. ``LocalBackend={...}``) and returns ``batch``."""

    def configure(**sections: dict[str, Any]) -> Env:
        terminal({"GpuEnvApp": {"job_dir": "jobs"}, **sections})
        monkeypatch.chdir(batch.root)
        return batch

    return configure
