import json
import subprocess
import sys

from jupyter_gpu_env.cli import main


def test_gpu_json_reports_memory(capsys):
    assert main(["gpu", "--json"]) == 0
    snap = json.loads(capsys.readouterr().out)
    assert snap["host"]["memory"]["used_bytes"] > 0
    assert snap["host"]["cpu"]["usage_cores"] is not None


def test_gpu_text_says_why_no_gpu(capsys):
    assert main(["gpu"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Memory: ")
    assert "GiB" in out
    assert "No GPU visible" in out


def test_no_command_prints_help(capsys):
    assert main([]) == 2
    assert "gpu" in capsys.readouterr().out


def test_runs_as_jupyter_subcommand():
    out = subprocess.run(
        [sys.executable, "-m", "jupyter", "gpu-env", "openapi"], capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(out)["info"]["title"] == "jupyter-gpu-env"
