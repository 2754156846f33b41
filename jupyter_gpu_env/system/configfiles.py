"""Configuration files as the server reads them, for what runs without the server.

The server reads ``jupyter_config`` and ``jupyter_server_config`` (``.py`` and ``.json``) from every
folder of the Jupyter config path, and the extension's own ``jupyter_jupyter_gpu_env_config``; the
server's files win over the extension's. The CLI and :func:`jupyter_gpu_env.dask.connect` read the same
files in the same order, so ``c.GpuEnvApp.*`` and the backends' ``c.LocalBackend.*`` (...) mean the
same in all three. Nothing here imports the server.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from jupyter_core.paths import jupyter_config_path, jupyter_runtime_dir
from traitlets.config import Config
from traitlets.config.loader import ConfigFileNotFound, JSONFileConfigLoader, PyFileConfigLoader

from ..errors import InvalidRequest

# Lowest priority first: the extension's own file, then the server's (which the server applies last).
CONFIG_FILES = ("jupyter_jupyter_gpu_env_config", "jupyter_config", "jupyter_server_config")


def warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def load_file_config(paths: Sequence[str] | None = None) -> Config:
    """Merge the config files found on ``paths`` (default: the Jupyter config path, first wins)."""
    config = Config()
    folders = list(jupyter_config_path() if paths is None else paths)
    for base in CONFIG_FILES:
        for folder in reversed(folders):
            for loader_class, ext in ((PyFileConfigLoader, ".py"), (JSONFileConfigLoader, ".json")):
                loader = loader_class(base + ext, path=folder)
                try:
                    config.merge(loader.load_config())
                except ConfigFileNotFound:
                    continue
                except Exception as e:  # the server logs a broken file and goes on; so do we
                    warn(
                        f"could not load {loader.full_filename or os.path.join(folder, loader.filename)}: {e}"
                    )
    return config


def serving_root(folder: Path) -> Path | None:
    """The root folder of this user's running Jupyter server that serves ``folder`` (the innermost, if
    several do), from the servers' runtime files; None when none runs or none serves it."""
    roots = []
    for runtime_file in Path(jupyter_runtime_dir()).glob("jpserver-*.json"):
        with contextlib.suppress(OSError, KeyError, TypeError, ValueError):
            info = json.loads(runtime_file.read_text())
            os.kill(int(info["pid"]), 0)  # a file left by a server that died raises here
            root = Path(info["root_dir"]).expanduser().resolve()
            if folder == root or root in folder.parents:
                roots.append(root)
    return max(roots, key=lambda r: len(r.parts), default=None)


def root_dir(explicit: str | None, config: Config) -> str:
    """``--root``, else the server's configured ``c.ServerApp.root_dir``, else the root of the running
    Jupyter server that serves the current folder, else the current folder.

    Job records name their folders relative to the root, so a command run from a subfolder of what the
    server serves must use the server's root, or the server would not find the jobs it submits.
    """
    configured = config.ServerApp.get("root_dir") if "ServerApp" in config else None
    here = Path.cwd().resolve()
    root = Path(explicit or configured or serving_root(here) or here).expanduser().resolve()
    if not root.is_dir():
        raise InvalidRequest(f"The root directory {root} does not exist.")
    return str(root)
