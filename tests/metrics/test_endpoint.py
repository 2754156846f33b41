"""A real Jupyter server's /metrics under a JupyterHub-like base URL: Jupyter Server serves the extension's
series, with the user's name where the site asks for it, only to an authenticated caller, and
``promtool check metrics`` (Debian's ``prometheus`` package; skipped, saying so, without it) finds nothing
to say of them."""

from __future__ import annotations

import re

import pytest
from tornado.httpclient import AsyncHTTPClient

from .prom import OURS, run, server_config, started, tool

FAMILIES = {
    OURS + name
    for name in (
        "jobs", "gpu_allocated_seconds_total", "gpu_used_seconds_total", "gpu_measured_seconds_total",
        "gpu_idle_seconds_total", "gpu_energy_joules_total", "queue_wait_seconds", "ledger_read_timestamp_seconds",
        "gpu_memory_used_bytes", "gpu_memory_total_bytes", "gpu_utilization_ratio", "host_memory_used_bytes",
        "host_memory_limit_bytes", "host_cpu_used_cores", "host_cpu_limit_cores", "held_gpu_idle_seconds",
    )
}  # fmt: skip


@pytest.fixture
def jp_base_url():
    return "/user/ada/"  # as JupyterHub serves a user's server


@pytest.fixture
def jp_server_config(jp_server_config, monkeypatch):
    monkeypatch.setenv("JUPYTERHUB_USER", "ada")
    return server_config(jp_server_config, metrics_user_label=True)


async def test_jupyter_server_serves_them_authenticated_and_promtool_passes_them(
    jp_serverapp, jp_fetch, jp_http_port
):
    await started(jp_serverapp)
    text = (await jp_fetch("metrics")).body.decode()
    assert 'jupyter_gpu_env_jobs{backend="slurm",state="failed",user="ada"} 1.0' in text
    assert 'jupyter_gpu_env_gpu_energy_joules_total{backend="local",user="ada"} 5000.0' in text
    assert "jupyter_server_started_timestamp_seconds" in text  # one registry: Jupyter Server's own
    anonymous = await AsyncHTTPClient().fetch(
        f"http://127.0.0.1:{jp_http_port}/user/ada/metrics", raise_error=False
    )
    assert anonymous.code == 403  # ServerApp.authenticate_prometheus, on by default

    ours = "".join(f"{line}\n" for line in text.splitlines() if metric_of(line).startswith(OURS))
    assert {line.split(" ")[2] for line in ours.splitlines() if line.startswith("# TYPE")} == FAMILIES
    rc, out = await run(tool("promtool"), "check", "metrics", stdin=ours)
    assert (rc, out) == (0, "")
    # The whole page: whatever promtool says is of Jupyter Server's own series (2.21 names a gauge
    # `terminal_currently_running_total`), none of ours.
    rc, out = await run(tool("promtool"), "check", "metrics", stdin=text)
    assert [line for line in out.splitlines() if OURS in line] == []


def metric_of(line: str) -> str:
    """The metric a line of the text format is about: `# HELP name ...`, `# TYPE name ...`, `name{...} v`."""
    words = line.split(" ")
    return words[2] if line.startswith("# ") and len(words) > 2 else re.split(r"[{ ]", line, maxsplit=1)[0]
