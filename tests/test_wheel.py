"""The wheel carries the built lab extension and the server config: a clean venv needs no node.

Builds from a copy of the source tree (so the check sees what a fresh clone builds), installs the wheel
into a new virtual environment with node removed from PATH, and asks Jupyter what is enabled.
"""

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SKIP = {".venv", "node_modules", ".git", "dist", "build", ".pytest_cache", ".ruff_cache", "ui-tests"}


def _copy_tree(dst: Path) -> None:
    def ignore(folder: str, names: list[str]) -> set[str]:
        skipped = {n for n in names if n in SKIP or n.endswith(".egg-info")}
        if Path(folder).resolve() == ROOT / "jupyter_gpu_env":
            skipped.add("labextension")  # the build under test must produce it
        return skipped

    shutil.copytree(ROOT, dst, ignore=ignore)


def _run(argv, **kw):
    return subprocess.run(argv, check=True, capture_output=True, text=True, **kw)


@pytest.mark.slow
def test_wheel_installs_both_extensions_without_node(tmp_path):
    src = tmp_path / "src"
    _copy_tree(src)
    node_bin = Path(sys.executable).parent  # jlpm lives beside the test interpreter
    env = {**os.environ, "PATH": f"{node_bin}:{os.environ['PATH']}"}
    _run(
        [
            sys.executable,
            "-m",
            "build",
            "--wheel",
            "--no-isolation",
            "--outdir",
            str(tmp_path / "dist"),
            str(src),
        ],
        env=env,
    )
    wheel = next((tmp_path / "dist").glob("jupyter_gpu_env-*.whl"))

    target = tmp_path / "venv"
    venv.create(target, with_pip=True)
    py = target / "bin" / "python"
    no_node = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "VIRTUAL_ENV"))}
    no_node["PATH"] = f"{target / 'bin'}:/usr/bin:/bin"
    if shutil.which("node", path=no_node["PATH"]):
        no_node["PATH"] = f"{target / 'bin'}"
    _run([str(py), "-m", "pip", "install", "-q", str(wheel), "jupyterlab>=4.6,<5"], env=no_node)

    labext = _run([str(py), "-m", "jupyter", "labextension", "list"], env=no_node)
    lab_out = labext.stdout + labext.stderr
    assert "jupyter-gpu-env" in lab_out and "enabled" in lab_out and "OK" in lab_out, lab_out
    server = _run([str(py), "-m", "jupyter", "server", "extension", "list"], env=no_node)
    server_out = server.stdout + server.stderr
    assert "jupyter_gpu_env" in server_out and "enabled" in server_out, server_out
    assert "jupyter_gpu_env 0.1.0 OK" in server_out.replace("\x1b[32m", "").replace("\x1b[0m", "")
