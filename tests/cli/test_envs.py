"""`jupyter gpu-env envs|clone|kernel|install|export|remove-env|pack|images|check` on the real demo environment.

Each test gets its own home: HOME, the Jupyter config/data/runtime folders and the cache point into
tmp_path, and a jupyter_server_config.json there sets c.GpuEnvApp.* as a server would read it.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import run_cli, wait_until_sync

from jupyter_gpu_env.cli import main


def test_envs_lists_the_demo_environment(home, capsys):
    code, out, _ = run_cli(capsys, "envs")
    assert code == 0
    header, *rows = out.splitlines()
    assert header.split() == ["NAME", "KIND", "PYTHON", "PACKAGES", "SIZE", "KERNEL", "SOURCE"]
    demo_row = next(r.split() for r in rows if r.startswith("demo "))
    assert demo_row[1] == "managed" and demo_row[2].startswith("3.")

    code, out, _ = run_cli(capsys, "envs", "--json")
    assert code == 0
    assert [e["name"] for e in json.loads(out)] == ["demo"]


def test_clone_with_kernel_then_export_and_remove(home, capsys):
    code, out, err = run_cli(capsys, "clone", "demo", "mine", "--kernel", "--display-name", "My env")
    assert code == 0, err
    assert "Cloned 'demo' as 'mine'" in out
    assert "Registered kernel" in out and "(My env)" in out
    # Not a terminal: progress as plain lines, ending complete.
    assert err.splitlines()[-1].startswith("[100%]")
    assert "\r" not in err
    kernel_json = next((home / "data" / "kernels").glob("*/kernel.json"))
    assert json.loads(kernel_json.read_text())["display_name"] == "My env"
    assert str(home / "envs" / "mine") in (home / "home" / ".conda" / "environments.txt").read_text()

    code, out, _ = run_cli(capsys, "envs")
    mine = next(r.split() for r in out.splitlines() if r.startswith("mine "))
    assert mine[1] == "own" and mine[-1] == "demo" and mine[-2] != "-"

    code, out, _ = run_cli(capsys, "export", "mine", "--format", "explicit")
    assert code == 0 and "@EXPLICIT" in out
    code, _, err = run_cli(capsys, "export", "mine", "-o", str(home / "mine.yml"))
    assert code == 0 and "name: mine" in (home / "mine.yml").read_text()

    code, out, _ = run_cli(capsys, "kernel", "mine", "--remove")
    assert code == 0 and "Removed kernel" in out
    assert not list((home / "data" / "kernels").glob("*/kernel.json"))

    # Not a terminal and no --yes: refused as a usage error; nothing deleted.
    code, _, err = run_cli(capsys, "remove-env", "mine")
    assert code == 2 and "--yes" in err
    assert (home / "envs" / "mine").is_dir()
    code, out, _ = run_cli(capsys, "remove-env", "mine", "--yes")
    assert code == 0 and "Deleted 'mine'" in out
    assert not (home / "envs" / "mine").exists()


def test_errors_exit_1_with_the_message(env_dir_entries, home, capsys):
    code, out, err = run_cli(capsys, "clone", "demo", "../x")
    assert (code, out) == (1, "")
    assert err.startswith("error: Invalid environment name '../x'")
    code, _, err = run_cli(capsys, "clone", "nope", "x")
    assert code == 1 and err.startswith("error: ") and "nope" in err
    code, _, err = run_cli(capsys, "install", "demo", "tabulate")
    assert code == 1 and "managed environment" in err
    code, _, err = run_cli(capsys, "remove-env", "demo")  # managed: refused without asking
    assert code == 1 and "managed environment" in err
    code, _, err = run_cli(capsys, "kernel", "demo", "--display-name", "   ")
    assert code == 1 and "display_name" in err
    code, _, err = run_cli(capsys, "envs", "--config", "GpuEnvApp.no_such_option=1")
    assert code == 1 and "unknown option GpuEnvApp.no_such_option" in err
    assert main(["clone", "demo"]) == 2  # a usage error (missing NAME)
    assert env_dir_entries(home / "envs") == []


@pytest.mark.skipif(not shutil.which("mksquashfs"), reason="mksquashfs is not installed")
def test_pack_prints_the_image_and_its_usage_lines(home, capsys):
    code, out, err = run_cli(capsys, "pack", "demo")
    assert code == 0, err
    path, *rest = out.splitlines()
    assert Path(path).is_file() and Path(path).parent == home / "images"
    text = "\n".join(rest)
    assert f"apptainer exec --bind {path}:/opt/gpu-env/demo:image-src=/" in text
    image_id = Path(path).stem
    assert f'squashfuse {path} "${{TMPDIR:-/tmp}}/gpu-env-{image_id}"' in text
    assert f'unmount:  fusermount3 -u "${{TMPDIR:-/tmp}}/gpu-env-{image_id}"' in text
    assert f"unsquashfs -d /opt/gpu-env/demo {path}" in text
    assert "[100%]" in err

    code, out, _ = run_cli(capsys, "images")
    header, row = out.splitlines()
    assert header.split() == ["ID", "ENV", "FORMAT", "SIZE", "FILES", "AGE"]
    assert row.split()[:3] == [Path(path).stem, "demo", "squashfs/zstd"]
    # An unchanged environment is not packed again.
    code, out, err = run_cli(capsys, "pack", "demo")
    assert code == 0 and out.splitlines()[0] == path and "identical image" in err


def check_report(out: str) -> tuple[str, dict[str, str]]:
    """`check`'s verdict line, and its facts by label."""
    verdict, *lines = out.splitlines()
    return verdict, {label.strip(): value.strip() for label, value in (line.split(":", 1) for line in lines)}


def test_check_reports_what_the_environment_sees(home, demo, capsys):
    code, out, err = run_cli(capsys, "check", "demo")
    verdict, facts = check_report(out)
    # The environment's own Python ran the check, and the report says what it found there.
    assert facts["Python"] == f"{sys.version.split()[0]} at {demo.env}"
    assert facts["CUDA_VISIBLE_DEVICES"] == os.environ.get("CUDA_VISIBLE_DEVICES", "not set")
    assert facts["Computation"] == "not tried: neither torch nor cupy is installed"
    assert "Checking 'demo'" in err
    if not os.path.exists("/proc/driver/nvidia/version"):  # this machine kind: no NVIDIA driver
        assert code == 1
        assert verdict.startswith("No usable GPU in 'demo': The NVIDIA driver library (libcuda)")
        assert facts["Driver"].startswith("not loaded: libcuda.so.1")

    code, out, _ = run_cli(capsys, "check", str(demo.env), "--json")  # by prefix, as the server resolves it
    check = json.loads(out)
    assert code == (0 if check["ok"] else 1)
    assert check["details"]["prefix"] == str(demo.env) and check["details"]["framework"] is None

    code, out, err = run_cli(capsys, "check", "nope")
    assert (code, out) == (1, "") and err.startswith("error: No environment named 'nope'")


# A stand-in for torch on a machine with a GPU: what the check asks of it, answered as a working build does.
FAKE_TORCH = """
__version__ = "2.4.0"
class version:
    cuda = "12.4"
class cuda:
    is_available = staticmethod(lambda: True)
    device_count = staticmethod(lambda: 1)
    get_device_name = staticmethod(lambda i: "NVIDIA H100 80GB HBM3")
class _Tensor:
    def __init__(self, value):
        self.value = value
    def __mul__(self, k):
        return _Tensor(self.value * k)
    def sum(self):
        return self
    def item(self):
        return self.value
def ones(n, device=None):
    return _Tensor(float(n))
"""


def test_check_exits_0_when_a_framework_computes_on_the_gpu(home, tmp_path, monkeypatch, capsys):
    (tmp_path / "fake" / "torch").mkdir(parents=True)
    (tmp_path / "fake" / "torch" / "__init__.py").write_text(FAKE_TORCH)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "fake"))  # the check runs with this process's environment
    code, out, _ = run_cli(capsys, "check", "demo")
    verdict, facts = check_report(out)
    assert code == 0, out
    assert verdict == "GPU usable in 'demo': torch 2.4.0 computes on the GPU: NVIDIA H100 80GB HBM3."
    assert facts["Computation"] == "torch 2.4.0, CUDA 12.4: 1 device(s), a computation gave the right answer"


def test_ctrl_c_cancels_a_clone_from_the_terminal(env_dir_entries, home, demo):
    """As `jupyter gpu-env`, in a process of its own: SIGINT mid-clone exits 130 and keeps nothing.

    Its stderr is a pipe filled to the brim beforehand, so the clone cannot get past its first
    progress line until the test reads: the interrupt surely lands while the clone is under way.
    """
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 4096)
    size = fcntl.fcntl(write_end, fcntl.F_GETPIPE_SZ)
    os.write(write_end, b"." * size)
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "gpu-env", "clone", "demo", "copy"],
        stderr=write_end,
        # as from a terminal: a run started in the background (`pytest &`) ignores SIGINT, and so would it
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    os.close(write_end)
    with os.fdopen(read_end, "rb") as stderr:
        try:
            wait_until_sync(lambda: env_dir_entries(home / "envs"), what="the clone's build folder")
            proc.send_signal(signal.SIGINT)
        finally:
            rest = stderr.read()[size:].decode()  # unblocks the clone, then reads to its end
    assert proc.wait(timeout=60) == 130, rest
    assert "Cancelled" in rest and rest.rstrip().endswith("interrupted")
    assert env_dir_entries(home / "envs") == []
    conda_list = home / "home" / ".conda" / "environments.txt"
    assert not conda_list.exists() or "copy" not in conda_list.read_text()
