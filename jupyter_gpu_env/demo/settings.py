"""The demo's settings, in a Jupyter configuration file that the server and `jupyter gpu-env` both read.

Command-line options given to `jupyter lab` reach the server only, so a terminal's `jupyter gpu-env envs`
would not see the demo. The extension's own file, ``jupyter_jupyter_gpu_env_config.py``, is read by the
server (as an extension app's file) and by the CLI (``cli/config.py``) from every folder of the Jupyter
config path; it is written in this Python's ``{sys.prefix}/etc/jupyter``, so only the Jupyter of this
installation (for ``scripts/lab.sh``, the checkout's ``.venv``) is pointed at the demo. The server's own
``jupyter_server_config`` files still win over it, as they do in the server.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from jupyter_core import paths

from ..errors import Conflict
from ..system.atomic import write_atomic

FILENAME = "jupyter_jupyter_gpu_env_config.py"
# The first line of a file we wrote: only such a file is replaced or removed, never one a person wrote.
MARKER = "# Written by `python -m jupyter_gpu_env.demo build --configure`"


def settings_path(config_dir: Path | None = None) -> Path:
    """The file in ``config_dir``, by default this installation's own Jupyter config folder."""
    return (config_dir or Path(paths.ENV_CONFIG_PATH[0])) / FILENAME


def _ours(path: Path) -> bool:
    try:
        with path.open(encoding="utf-8") as f:
            return f.readline().rstrip("\n") == MARKER
    except FileNotFoundError:
        return True  # nothing there to keep


def write_settings(
    managed_dir: Path, channel: Path, pkgs_dir: Path | None = None, config_dir: Path | None = None
) -> Path:
    """Point ``c.GpuEnvApp`` at the demo: its managed environments' folder, its channel, its package cache."""
    path = settings_path(config_dir)
    if not _ours(path):
        raise Conflict(f"{path} was not written by the demo builder; it is left as it is.", reason="not_ours")
    lines = [
        MARKER,
        "# (scripts/lab.sh): the offline demo's managed environments and conda channel, read by the server",
        "# and by `jupyter gpu-env` alike. `python -m jupyter_gpu_env.demo unconfigure` removes this file.",
        f"c.GpuEnvApp.managed_env_dirs = [{str(managed_dir)!r}]",
        f"c.GpuEnvApp.conda_channels = [{str(channel)!r}]",
    ]
    if pkgs_dir is not None:  # else the server's default cache, the one the builder used too
        lines.append(f"c.GpuEnvApp.pkgs_dir = {str(pkgs_dir)!r}")
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, "\n".join(lines) + "\n")
    return path


def remove_settings(config_dir: Path | None = None) -> Path | None:
    """Remove the file if the demo builder wrote it; the path removed, else None."""
    path = settings_path(config_dir)
    if not path.exists() or not _ours(path):
        return None
    path.unlink()
    return path


def terminal_settings(venv_bin: Path) -> dict[str, Any]:
    """The server setting that makes the lab's terminals find this venv's ``jupyter``.

    Terminals run a login shell, whose /etc/profile sets PATH anew: the shell reads the login files
    first, then puts ``venv_bin`` first on PATH and goes on as the user's interactive shell."""
    shell = f'PATH={shlex.quote(str(venv_bin))}:"$PATH"; export PATH; exec "${{SHELL:-/bin/bash}}" -i'
    return {"ServerApp": {"terminado_settings": {"shell_command": ["/bin/sh", "-l", "-c", shell]}}}


def write_terminal_settings(venv_bin: Path, config_dir: Path | None = None) -> Path:
    """Put :func:`terminal_settings` in this installation's ``jupyter_server_config.json``; returns it.

    The server reads that file whole; of a ``jupyter_server_config.d/`` folder it reads only which
    extensions are enabled, so a terminal setting there is never applied. The file's other settings are
    kept: only ``ServerApp.terminado_settings.shell_command`` is set. Raises Conflict for a file that is
    not a JSON object (a person's, left as it is)."""
    folder = settings_path(config_dir).parent
    path = folder / "jupyter_server_config.json"
    try:
        current = json.loads(path.read_text()) if path.exists() else {}
    except (OSError, ValueError) as e:
        raise Conflict(f"{path} could not be read as JSON ({e}); left as it is.") from None
    if not isinstance(current, dict) or not isinstance(current.get("ServerApp", {}), dict):
        raise Conflict(f"{path} is not a Jupyter JSON configuration; left as it is.")
    server = current.setdefault("ServerApp", {})
    terminado = server.get("terminado_settings")
    server["terminado_settings"] = {
        **(terminado if isinstance(terminado, dict) else {}),
        **terminal_settings(venv_bin)["ServerApp"]["terminado_settings"],
    }
    folder.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(current, indent=2))
    # Where an earlier version wrote it, unread by the server: gone, so nobody edits it in vain.
    (folder / "jupyter_server_config.d" / "jupyter_gpu_env_terminal.json").unlink(missing_ok=True)
    return path
