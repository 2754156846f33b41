"""A server killed (SIGKILL) while the PyPI installer works in a transaction's copy: the installer, and
the build backend it started, end with it; the next start removes the copy and says the environment was
left as it was.

The server is a real ``jupyter server`` process; the package installed is a local sdist whose build
backend (in the sdist itself: no index, no download) writes its pid, then takes ten minutes.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tarfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import psutil
import pytest
from helpers import wait_until_sync

TOKEN = "killed"

BACKEND = """\
import os, time

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    with open({started!r}, "w") as f:
        f.write(str(os.getpid()))
    time.sleep(600)
    raise SystemExit("the test should have ended this build long before")
"""


def slow_sdist(folder: Path, started: Path) -> Path:
    """``slowpkg-1.0.tar.gz``: an sdist whose own build backend writes its pid to ``started``, then
    sleeps ten minutes."""
    files = {
        "pyproject.toml": '[build-system]\nrequires = []\nbuild-backend = "slow_backend"\nbackend-path = ["."]\n'
        '\n[project]\nname = "slowpkg"\nversion = "1.0"\n',
        "PKG-INFO": "Metadata-Version: 2.1\nName: slowpkg\nVersion: 1.0\n",
        "slow_backend.py": BACKEND.format(started=str(started)),
    }
    src = folder / "slowpkg-1.0"
    src.mkdir(parents=True)
    for name, text in files.items():
        (src / name).write_text(text)
    sdist = folder / "slowpkg-1.0.tar.gz"
    with tarfile.open(sdist, "w:gz") as tar:
        tar.add(src, arcname=src.name)
    return sdist


class Server:
    """A ``jupyter server`` process with this extension, over the folders of ``base``."""

    def __init__(self, base: Path, app: dict[str, Any]) -> None:
        self.base = base
        self.home = base / "home"
        self.home.mkdir(parents=True)
        config = {"ServerApp": {"jpserver_extensions": {"jupyter_gpu_env": True}}, "GpuEnvApp": app}
        (self.home / "jupyter_server_config.json").write_text(json.dumps(config))
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = ""

    def start(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        env = {
            **os.environ,
            "HOME": str(self.home),
            "JUPYTER_CONFIG_DIR": str(self.home),
            "JUPYTER_DATA_DIR": str(self.home / "data"),
            "JUPYTER_RUNTIME_DIR": str(self.home / "runtime"),
        }
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "jupyter", "server", "--ip=127.0.0.1", f"--port={port}", "--no-browser",
             "--ServerApp.allow_root=True", f"--IdentityProvider.token={TOKEN}",
             f"--ServerApp.root_dir={self.base}"],
            env=env, stdout=subprocess.DEVNULL, stderr=(self.base / "server.log").open("ab"),
        )  # fmt: skip
        self.url = f"http://127.0.0.1:{port}/gpu-env/api/"

        def serving() -> bool:
            try:
                self.call("GET", "environments")
            except OSError:
                assert self.proc is not None and self.proc.poll() is None, self.log()
                return False
            return True

        wait_until_sync(serving, within=60, every=0.2, what="the server serving its API")

    def log(self) -> str:
        return (self.base / "server.log").read_text()[-3000:]

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            f"{self.url}{path}", data=data, method=method, headers={"Authorization": f"token {TOKEN}"}
        )
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return resp.status, json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")

    def task(self, task_id: str, within: float = 120) -> Any:
        """``GET tasks/{id}`` once it has ended."""

        def ended() -> Any:
            task = self.call("GET", f"tasks/{task_id}")[1]
            return task if task["state"] not in ("pending", "running") else None

        return wait_until_sync(ended, within=within, every=0.2, what=f"task {task_id} ending")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.fixture
def servers(tmp_path):
    made: list[Server] = []

    def make(base: Path, app: dict[str, Any]) -> Server:
        made.append(Server(base, app))
        return made[-1]

    yield make
    for server in made:
        server.stop()


def test_a_server_killed_mid_install_leaves_no_installer_running_and_no_copy(demo, tmp_path, servers):
    started = tmp_path / "build-started"
    wheels = tmp_path / "wheels"
    slow_sdist(wheels, started)
    user_envs = tmp_path / "envs"
    app = {
        "managed_env_dirs": [str(demo.managed_dir)],
        "user_env_dir": str(user_envs),
        "conda_channels": [str(demo.channel)],
        "pkgs_dir": str(demo.pkgs),
        "state_dir": str(tmp_path / "state"),
        "image_dir": str(tmp_path / "images"),
        "pip_find_links": [str(wheels)],
        "pip_no_index": True,
    }
    first = servers(tmp_path / "first", app)
    first.start()
    code, task = first.call("POST", "environments", {"source": "demo", "name": "slow"})
    assert code == 202 and first.task(task["id"])["state"] == "succeeded"
    code, task = first.call("POST", "environments/slow/packages", {"pip_add": ["slowpkg"]})
    assert code == 202, task

    wait_until_sync(lambda: started.exists() and started.read_text(), within=120, what="the build starting")
    backend = int(started.read_text())
    installer = [
        p for p in psutil.Process(first.proc.pid).children(recursive=True)  # type: ignore[union-attr]
        if os.getpgid(p.pid) == os.getpgid(backend)
    ]  # fmt: skip
    try:
        assert any("install" in p.cmdline() for p in installer), [p.cmdline() for p in installer]
        assert [p.name for p in user_envs.iterdir() if p.name.startswith(".slow.txn-")]  # it works there
        os.kill(first.proc.pid, signal.SIGKILL)  # type: ignore[union-attr]
        first.proc.wait()  # type: ignore[union-attr]
        wait_until_sync(
            lambda: not any(_alive(p.pid) for p in installer),
            within=15,
            what=lambda: f"the installer ending: {[p.cmdline()[:3] for p in installer if _alive(p.pid)]}",
        )
    finally:
        for p in installer:
            if _alive(p.pid):
                p.kill()

    second = servers(tmp_path / "second", app)
    second.start()
    told = second.task(task["id"], within=5)
    assert (told["state"], told["reason"]) == ("failed", "interrupted"), told
    assert "left exactly as it was before the change" in told["message"], told
    assert sorted(p.name for p in user_envs.iterdir() if p.name.startswith(".slow.")) == []
    python = str(user_envs / "slow" / "bin" / "python")
    assert subprocess.run([python, "-c", "import slowpkg"], capture_output=True).returncode != 0
    assert subprocess.run([python, "-c", "import six"]).returncode == 0
