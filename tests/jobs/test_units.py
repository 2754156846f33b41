"""Small pieces: resource parsing, the env kernelspec, log chunks, folder names."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from jupyter_client.kernelspec import KernelSpecManager

from jupyter_gpu_env.contracts import jobfiles
from jupyter_gpu_env.contracts.jobfiles import slug
from jupyter_gpu_env.errors import InvalidRequest
from jupyter_gpu_env.jobs.submission import parse_request
from jupyter_gpu_env.kernelspecs import JOB_KERNEL, write_job_kernelspec
from jupyter_gpu_env.models.resources import (
    JobResources,
    format_time_limit,
    mig_fraction,
    parse_memory,
    parse_time_limit,
)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [(90, 5400), ("90", 5400), ("1:00:00", 3600), ("10:30", 630), ("2-0", 172800), ("1-12:30", 131400),
     ("1-00:00:01", 86401), ("30-00:00:00", 30 * 86400), ("31-0", 31 * 86400), (" 0:01 ", 1), ("90:00", 5400)],
)  # fmt: skip
def test_time_limits_in_slurm_forms(text, seconds):
    assert parse_time_limit(text) == seconds


@pytest.mark.parametrize(
    "text", ["1:60:00", "abc", "1-25", "-1", 0, "0:00", "0-00:00:00", True, 1.5, "1²", "1:00:00\n", "１"]
)
def test_bad_time_limits(text):
    with pytest.raises(ValueError):
        parse_time_limit(text)


def test_memory_and_mig():
    assert parse_memory("4G") == 4 << 30 == parse_memory("4GiB") == parse_memory("4gb")
    assert parse_memory("512M") == 512 << 20 and parse_memory(1 << 30) == 1 << 30
    assert parse_memory("16T") == 16 << 40 and parse_memory("1.5K") == 1536 and parse_memory(1000) == 1000
    for bad in ("100", "4X", "0G", "0.0M", "1" * 7 + "G", 0, -1, True, 1.0, "4G\n", "４G", 1 << 60):
        with pytest.raises(ValueError):
            parse_memory(bad)
    assert mig_fraction("1g.10gb") == pytest.approx(1 / 7) and mig_fraction("7g.80gb") == 1.0
    assert JobResources(mig_profile="3g.40gb").gpu_units() == pytest.approx(3 / 7)
    assert format_time_limit(3600) == "1:00:00" and format_time_limit(90061) == "1-01:01:01"


def test_normalized_resources_and_clear_messages():
    req = parse_request(
        {
            "notebook_path": "a.ipynb",
            "resources": {"cpus": 4, "memory": "8G", "time_limit": "2:00:00", "gpus": 1},
        }
    )
    assert req.resources.normalized() == JobResources(
        cpus=4, memory_bytes=8 << 30, gpus=1, time_limit_seconds=7200
    )
    with pytest.raises(InvalidRequest) as err:
        parse_request({"notebook_path": "a.ipynb", "resources": {"cpus": 0, "memory": "-4G"}})
    assert "CPUs must be a whole number from 1 to 1024" in err.value.message
    assert "memory '-4G' is not valid; write it like '512M'" in err.value.message
    assert "constrained-int" not in err.value.message
    assert "resources." not in err.value.message  # words a user knows, never a field path


def test_refusals_name_fields_in_words_without_paths():
    with pytest.raises(InvalidRequest) as err:
        parse_request(
            {
                "resources": {"time_limit": "soon", "mig_profile": "x"},
                "parameters": {"x": [1, {"a": {1, 2}}]},
                "sweep": {"alpha": []},
                "max_concurrent": 0,
                "colour": "red",
            }
        )
    message = err.value.message
    assert "notebook path is required" in message
    assert "time limit 'soon' is not valid; write minutes ('90')" in message
    assert "MIG profile 'x' is not valid" in message
    assert "parameter 'x' (item 2) must be text" in message
    assert "parameter 'alpha': list should have at least 1 item" in message
    assert "runs at once must be a whole number from 1" in message
    assert "'colour' is not something this takes" in message
    assert not re.search(r"\b[a-z_]+\.[a-z_]+\b", message), message  # no dotted path anywhere
    assert "Input should be" not in message and "function-after" not in message


def test_env_kernelspec_on_a_fake_prefix(tmp_path):
    prefix = tmp_path / "envs" / "torch"
    folder = tmp_path / "job"
    path = write_job_kernelspec(folder, prefix, env_name="torch", base_env={"PATH": "/usr/bin:/bin"})
    assert path == folder / "kernels" / JOB_KERNEL / "kernel.json"
    spec = json.loads(path.read_text())
    assert spec["argv"] == [str(prefix / "bin/python"), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    assert spec["env"] == {
        "PATH": f"{prefix}/bin:/usr/bin:/bin",
        "CONDA_PREFIX": str(prefix),
        "CONDA_DEFAULT_ENV": "torch",
    }
    assert spec["language"] == "python"
    # jupyter_client finds and loads it from the job folder, as the runner's papermill will.
    found = KernelSpecManager(kernel_dirs=[str(folder / "kernels")]).get_kernel_spec(JOB_KERNEL)
    assert found.argv[0] == str(prefix / "bin/python") and found.env["CONDA_PREFIX"] == str(prefix)


def test_log_chunks_end_on_whole_characters_and_always_advance(tmp_path):
    path = tmp_path / "log.txt"
    text = "héllo → wörld ✓ 𝄞\n" * 20
    path.write_text(text, encoding="utf-8")
    size = path.stat().st_size
    for limit in (1, 2, 3, 5, 7, 64, 10_000):
        parts, offset = [], 0
        while offset < size:
            chunk, nxt, total = jobfiles.read_log(path, offset, limit)
            assert total == size and nxt > offset and "\ufffd" not in chunk
            parts.append(chunk)
            offset = nxt
        assert "".join(parts) == text, limit
    assert jobfiles.read_log(path, size, 10) == ("", size, size)
    assert jobfiles.read_log(tmp_path / "missing", 0, 10) == ("", 0, 0)


def test_slug():
    assert slug("My Notebook (v2)") == "my-notebook-v2"
    assert slug("///") == "job" and len(slug("x" * 100)) == 40


def test_the_send_dialog_checks_fields_in_the_servers_words():
    """The dialog's field checks (resource-values.ts) quote the server's hints word for word."""
    source = (Path(__file__).parents[2] / "labextension/src/jobs/submit/resource-values.ts").read_text()
    hints = dict(re.findall(r"export const (MEMORY_HINT|TIME_LIMIT_HINT) =\s*\"([^\"]+)\"", source))
    with pytest.raises(InvalidRequest) as err:
        parse_request({"notebook_path": "a.ipynb", "resources": {"memory": "lots", "time_limit": "soon"}})
    assert f"memory 'lots' is not valid; {hints['MEMORY_HINT']}" in err.value.message
    assert f"time limit 'soon' is not valid; {hints['TIME_LIMIT_HINT']}" in err.value.message
