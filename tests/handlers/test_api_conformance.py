"""The REST API does what its OpenAPI document says: schemathesis, every check and every phase.

A real Jupyter Server with the extension runs in its own process on a real conda environment (the demo
one, listed as `demo-python` as lab.sh names it) with a notebook to submit. schemathesis reads the
served document and sends examples, boundary values, random and stateful sequences (following the
document's links: clone -> task -> environment, submit -> job -> log/cancel/delete). Every answer must
be documented (status, content type, body schema), no answer a 5xx, schema-valid data accepted and
schema-violating data refused. Bounded by ``GPU_ENV_CONFORMANCE_SECONDS`` (default 150).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from helpers import wait_until_sync, write_notebook

CONFIG = Path(__file__).with_name("schemathesis.toml")
SECONDS = int(os.environ.get("GPU_ENV_CONFORMANCE_SECONDS", "150"))
TOKEN = "conformance"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def served_api(demo, tmp_path_factory):
    base = tmp_path_factory.mktemp("conformance")
    root, managed, home = base / "root", base / "managed", base / "home"
    for d in (root, managed, home):
        d.mkdir()
    (managed / "demo-python").symlink_to(demo.env)
    write_notebook(root, "analysis.ipynb", ["print(alpha * 2)"], parameters="alpha = 1")
    config = {
        "ServerApp": {"jpserver_extensions": {"jupyter_gpu_env": True}},
        "GpuEnvApp": {
            "managed_env_dirs": [str(managed)],
            "user_env_dir": str(home / "envs"),
            "conda_channels": [str(demo.channel)],
            "pkgs_dir": str(demo.pkgs),
            "image_dir": str(base / "images"),
            "image_mount_prefix": str(base / "mnt"),
            "state_dir": str(base / "state"),
            "gpu_sample_interval": 1.0,
            "job_refresh_interval": 0.5,
            # PyPI from the demo's wheels only: package lookups never wait on the network.
            "pip_find_links": [str(demo.extra_wheels)],
            "pip_no_index": True,
        },
        "LocalBackend": {"max_concurrent": 1, "kill_grace": 3.0},
    }
    (home / "jupyter_server_config.json").write_text(json.dumps(config))
    env = {
        **os.environ,
        "HOME": str(home),
        "JUPYTER_CONFIG_DIR": str(home),
        "JUPYTER_DATA_DIR": str(home / "data"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
    }
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "server", "--ip=127.0.0.1", f"--port={port}", "--no-browser",
         "--ServerApp.allow_root=True", f"--IdentityProvider.token={TOKEN}", f"--ServerApp.root_dir={root}"],
        env=env, stdout=subprocess.DEVNULL, stderr=(base / "server.log").open("wb"),
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"

    def serving() -> bool:
        try:
            urllib.request.urlopen(f"{url}/gpu-env/api/openapi.json?token={TOKEN}", timeout=2).read()
        except OSError:
            assert server.poll() is None, (base / "server.log").read_text()[-3000:]
            return False
        return True

    wait_until_sync(serving, within=60, every=0.2, what="the server serving its API")
    yield url, base
    server.terminate()
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()


def test_every_answer_conforms_to_the_document(served_api):
    url, base = served_api
    done = subprocess.run(
        [sys.executable, "-m", "schemathesis.cli", "--config-file", str(CONFIG), "run",
         f"{url}/gpu-env/api/openapi.json", "-H", f"Authorization: token {TOKEN}", "--phases", "examples,coverage,fuzzing,stateful", "--max-time", str(SECONDS), "--workers", "1",
         "--no-color", "--seed", os.environ.get("GPU_ENV_CONFORMANCE_SEED", "20261124")],
        capture_output=True, text=True, timeout=SECONDS + 300,
    )  # fmt: skip
    report = done.stdout + done.stderr
    assert done.returncode == 0, (
        report[-12000:] + "\n--- server log ---\n" + (base / "server.log").read_text()[-3000:]
    )
    assert "Stateful" in report and "Coverage" in report
