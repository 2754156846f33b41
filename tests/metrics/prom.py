"""What the metrics tests that need a real server share: the server's services started with known
records, Debian's Prometheus and promtool (skipped, saying so, where they are not installed), and the
admin guide's own scrape configuration."""

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
import yaml
from tornado.httpclient import AsyncHTTPClient

from .ledger import energy, ledger_jobs, running_on_a_gpu

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "admin-metrics.md"
DASHBOARD = ROOT / "docs" / "grafana" / "jupyter-gpu-env.json"
# A recorded H100 with MIG slices, for the panel's live GPU series (those checks skip without ../shared).
MIG_CAPTURE = ROOT.parent / "shared" / "fixtures" / "gpu" / "nvgpuexp-capture-h100-mig-590.48.01.txt"
OURS = "jupyter_gpu_env_"


def tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (Debian's `prometheus` package; scripts/test.sh installs it)")
    return found


def server_config(base: dict[str, Any], **options: Any) -> dict[str, Any]:
    """The tests' server configuration with the extension's ``options``, its ledger read every 0.5 s
    and the recorded MIG capture as its GPUs where ../shared has it."""
    config = {**base["GpuEnvApp"], "metrics_interval": 0.5, **options}
    if MIG_CAPTURE.is_file():
        config["gpu_recorded_source"] = str(MIG_CAPTURE)
    return {**base, "GpuEnvApp": config}


async def started(jp_serverapp: Any) -> Any:
    """The server's services started, the ledger's records in its store (and one job running on a GPU,
    so the counters grow while Prometheus watches), read once."""
    services = jp_serverapp.web_app.settings["gpu_env_services"]
    await services.start()
    await services.jobs.store.insert_many([*ledger_jobs(), running_on_a_gpu(time.time())])
    await energy(services.jobs.store, "a", 5000.0)
    await services.metrics.refresh()
    await services.gpu.sampler.snapshot()  # the panel's first sample
    return services


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


def guide_scrape_config() -> dict[str, Any]:
    """The scrape job of docs/admin-metrics.md, as written there."""
    blocks = re.findall(r"```yaml\n(.*?)```", GUIDE.read_text(), re.S)
    (job,) = [yaml.safe_load(b)["scrape_configs"][0] for b in blocks if b.startswith("scrape_configs:")]
    return dict(job)


def as_pod(job: dict[str, Any], token_file: Path, pod: dict[str, str]) -> dict[str, Any]:
    """``job`` with Kubernetes' pod discovery replaced by one static target carrying the metadata it would
    give this pod (``pod``: `__meta_kubernetes_pod_*` labels; Debian's Prometheus has no Kubernetes
    discovery), the token read from ``token_file``; its relabelling kept as it is."""
    target = {"targets": ["discovered.invalid:1"], "labels": {"__meta_kubernetes_pod_ip": "127.0.0.1", **pod}}
    assert "kubernetes_sd_configs" in job
    return {
        **{k: v for k, v in job.items() if k != "kubernetes_sd_configs"},
        "scrape_interval": "1s",
        "authorization": {**job["authorization"], "credentials_file": str(token_file)},
        "static_configs": [target],
    }


class Prometheus:
    """Debian's Prometheus on loopback with one scrape job, queried over its HTTP API."""

    def __init__(self, folder: Path, job: dict[str, Any]) -> None:
        self.port = free_port()
        self.folder = folder
        config = {"global": {"scrape_interval": "1s", "evaluation_interval": "1s"}, "scrape_configs": [job]}
        (folder / "prometheus.yml").write_text(json.dumps(config))  # JSON is YAML
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        with open(self.folder / "prometheus.log", "wb") as log:  # the process keeps its own descriptor
            self.proc = await asyncio.create_subprocess_exec(
                tool("prometheus"),
                f"--config.file={self.folder / 'prometheus.yml'}",
                f"--storage.tsdb.path={self.folder / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                stdout=log,
                stderr=log,
            )

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
        if resp.code == 503:  # listening, not ready yet: Prometheus says so in plain text
            return {"status": "unreachable", "code": resp.code}
        return json.loads(resp.body) if resp.body else {"status": "unreachable", "code": resp.code}

    async def query(self, expr: str) -> Any:
        return await self.api("query", query=expr)

    async def vector(self, expr: str) -> list[Any]:
        """The result of an instant query; [] while Prometheus is starting or has no such series."""
        answer = await self.query(expr)
        return answer["data"]["result"] if answer.get("status") == "success" else []

    def log(self) -> str:
        return (self.folder / "prometheus.log").read_text(errors="replace")[-3000:]
