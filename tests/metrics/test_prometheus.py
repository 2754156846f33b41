"""A real Jupyter server's /metrics, as a site sees it: Jupyter Server serves and authenticates it,
``promtool check metrics`` finds nothing to say of the extension's series, and a real Prometheus
(Debian's ``prometheus``, on loopback, its own data folder) scrapes the server with its token under a
JupyterHub-like base URL and answers PromQL for them — every expression of the Grafana dashboard
(docs/grafana/jupyter-gpu-env.json) included. Skipped, saying so, where prometheus is not installed."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import socket
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from helpers import wait_until
from tornado.httpclient import AsyncHTTPClient

from .ledger import energy, ledger_jobs, running_on_a_gpu

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "docs" / "grafana" / "jupyter-gpu-env.json"
# A recorded H100 with MIG slices, for the panel's live GPU series (those checks skip without ../shared).
MIG_CAPTURE = ROOT.parent / "shared" / "fixtures" / "gpu" / "nvgpuexp-capture-h100-mig-590.48.01.txt"
OURS = "jupyter_gpu_env_"
FAMILIES = {
    OURS + name
    for name in (
        "jobs", "gpu_allocated_seconds_total", "gpu_used_seconds_total", "gpu_measured_seconds_total",
        "gpu_idle_seconds_total", "gpu_energy_joules_total", "queue_wait_seconds", "ledger_read_timestamp_seconds",
        "gpu_memory_used_bytes", "gpu_memory_total_bytes", "gpu_utilization_ratio", "host_memory_used_bytes",
        "host_memory_limit_bytes", "host_cpu_used_cores", "host_cpu_limit_cores", "held_gpu_idle_seconds",
    )
}  # fmt: skip


def tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (Debian's `prometheus` package; scripts/test.sh installs it)")
    return found


@pytest.fixture
def jp_base_url():
    return "/user/ada/"  # as JupyterHub serves a user's server


@pytest.fixture
def jp_server_config(jp_server_config, monkeypatch):
    monkeypatch.setenv("JUPYTERHUB_USER", "ada")
    config = {**jp_server_config["GpuEnvApp"], "metrics_user_label": True, "metrics_interval": 0.5}
    if MIG_CAPTURE.is_file():
        config["gpu_recorded_source"] = str(MIG_CAPTURE)
    return {**jp_server_config, "GpuEnvApp": config}


async def started(jp_serverapp):
    """The server's services started, the ledger's records in its store (and one job running on a GPU,
    so the counters grow while Prometheus watches), read once."""
    services = jp_serverapp.web_app.settings["gpu_env_services"]
    await services.start()
    await services.jobs.store.insert_many([*ledger_jobs(), running_on_a_gpu(time.time())])
    await energy(services.jobs.store, "a", 5000.0)
    await services.metrics.refresh()
    await services.gpu.sampler.snapshot()  # the panel's first sample
    return jp_serverapp


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


async def run(*argv: str, stdin: str) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    out, _ = await proc.communicate(stdin.encode())
    return proc.returncode or 0, out.decode().strip()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Prometheus:
    """Debian's Prometheus on loopback, scraping one target every second; queried over its HTTP API."""

    def __init__(self, folder: Path, target_port: int, token: str, base_url: str) -> None:
        self.port = free_port()
        self.folder = folder
        config = {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "scrape_configs": [
                {
                    "job_name": "jupyter",
                    "metrics_path": f"{base_url}metrics",
                    "authorization": {"type": "Bearer", "credentials": token},
                    # What the site's relabelling would take from the pod's labels (docs/admin-metrics.md).
                    "static_configs": [
                        {"targets": [f"127.0.0.1:{target_port}"], "labels": {"group": "physics"}}
                    ],
                }
            ],
        }
        (folder / "prometheus.yml").write_text(json.dumps(config))  # JSON is YAML
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        log = open(self.folder / "prometheus.log", "wb")
        self.proc = await asyncio.create_subprocess_exec(
            tool("prometheus"),
            f"--config.file={self.folder / 'prometheus.yml'}",
            f"--storage.tsdb.path={self.folder / 'data'}",
            f"--web.listen-address=127.0.0.1:{self.port}",
            stdout=log,
            stderr=log,
        )
        log.close()

    async def stop(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.terminate()
            await self.proc.wait()

    async def api(self, path: str, **params: str) -> Any:
        url = f"http://127.0.0.1:{self.port}/api/v1/{path}?{urlencode(params)}"
        try:
            resp = await AsyncHTTPClient().fetch(url, raise_error=False, request_timeout=10)
        except OSError as e:  # not listening yet
            return {"status": "unreachable", "error": str(e)}
        return json.loads(resp.body) if resp.body else {"status": "unreachable", "code": resp.code}

    async def query(self, expr: str) -> Any:
        return await self.api("query", query=expr)

    async def vector(self, expr: str) -> list[Any]:
        """The result of an instant query; [] while Prometheus is starting or has no such series."""
        answer = await self.query(expr)
        return answer["data"]["result"] if answer.get("status") == "success" else []

    def log(self) -> str:
        return (self.folder / "prometheus.log").read_text(errors="replace")[-3000:]


GRAFANA = {"$__range": "1m", "$__rate_interval": "15s", "$__interval": "1s"}
VARIABLES = {"$user": ".*", "$group": ".*", "$backend": ".*"}


def dashboard_queries() -> list[tuple[str, str]]:
    """(panel title, PromQL) of every target, Grafana's and the dashboard's variables substituted."""
    found = []
    for panel in json.loads(DASHBOARD.read_text())["panels"]:
        for target in panel.get("targets", []):
            expr = target["expr"]
            for name, value in {**GRAFANA, **VARIABLES}.items():
                expr = expr.replace(name, value)
            assert "$" not in expr, f"{panel['title']}: an unknown variable in {target['expr']}"
            found.append((panel["title"], expr))
    return found


async def test_a_real_prometheus_scrapes_them_and_answers_the_dashboards_queries(
    jp_serverapp, http_server, tmp_path, jp_http_port, jp_base_url
):
    """(``http_server``: the test server listening on its port for a client outside this process.)"""
    await started(jp_serverapp)
    folder = tmp_path / "prometheus"
    folder.mkdir()
    prometheus = Prometheus(folder, jp_http_port, jp_serverapp.identity_provider.token, jp_base_url)
    await prometheus.start()
    try:
        await scraped_and_queried(prometheus)
    finally:
        await prometheus.stop()


async def scraped_and_queried(prometheus: Prometheus) -> None:
    targets: list[Any] = []

    async def scraped() -> list[Any]:
        answer = await prometheus.api("targets")
        targets[:] = answer.get("data", {}).get("activeTargets", [])
        return await prometheus.vector(f"count_over_time({OURS}ledger_read_timestamp_seconds[1m]) >= 3")

    def why() -> str:
        seen = [(t.get("scrapeUrl"), t.get("health"), t.get("lastError")) for t in targets]
        return (
            f"Prometheus never got the extension's series; its targets: {seen}; its log:\n{prometheus.log()}"
        )

    # three scrapes at least, so that rates and increases have something to compare
    await wait_until(scraped, within=60, every=0.5, what=why)
    up = await prometheus.vector('up{job="jupyter"}')
    assert [s["value"][1] for s in up] == ["1"]
    # C failed on SLURM (the local jobs B and D, which no local runner runs, this server's poll ends)
    failed = await prometheus.vector(f'{OURS}jobs{{state="failed",backend="slurm"}}')
    assert [(s["metric"]["user"], s["metric"]["group"], s["value"][1]) for s in failed] == [
        ("ada", "physics", "1")
    ]
    energy_j = await prometheus.vector(f'{OURS}gpu_energy_joules_total{{backend="local"}}')
    assert [s["value"][1] for s in energy_j] == ["5000"]
    # G runs on one GPU: between two scrapes its GPU-seconds grew by the seconds between the two readings
    allocated = await prometheus.vector(f'{OURS}gpu_allocated_seconds_total{{backend="slurm"}}[1m]')
    read = await prometheus.vector(f"{OURS}ledger_read_timestamp_seconds[1m]")
    grown, elapsed = (float(r["values"][-1][1]) - float(r["values"][0][1]) for r in (allocated[0], read[0]))
    assert elapsed > 0 and grown == pytest.approx(elapsed, abs=1e-3)
    waits = await prometheus.vector(f"{OURS}queue_wait_seconds_count")
    assert sorted((s["metric"]["backend"], s["value"][1]) for s in waits) == [("local", "3"), ("slurm", "2")]

    # The dashboard's variables are Grafana's label_values() over these labels.
    for label, expected in (("user", {"ada"}), ("group", {"physics"}), ("backend", {"local", "slurm"})):
        values = await prometheus.api(f"label/{label}/values", **{"match[]": f"{OURS}jobs"})
        assert set(values["data"]) == expected
    text = DASHBOARD.read_text()
    assert re.findall(r"label_values\((\w+), (\w+)\)", text) == [
        (f"{OURS}jobs", n) for n in ("user", "group", "backend")
    ]

    # The live GPU series need a GPU (the recorded MIG capture here); a MIG slice reports no utilization.
    live = MIG_CAPTURE.is_file()
    empty = []
    for title, expr in dashboard_queries():
        answer = await prometheus.query(expr)
        assert answer["status"] == "success", f"{title}: {expr}: {answer}"
        gpu_now = "utilization_ratio" in expr or ("gpu_memory" in expr and not live)
        if not answer["data"]["result"] and not gpu_now:
            empty.append(f"{title}: {expr}")
    assert empty == [], "dashboard queries with no series from a server that has them"
