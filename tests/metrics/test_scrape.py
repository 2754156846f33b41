"""A real Prometheus (Debian's ``prometheus``, on loopback, its own data folder) scrapes a real Jupyter
server every second through the admin guide's own scrape configuration (docs/admin-metrics.md: the
single-user pod's annotations, the hub's token, `user` and `group` from the pod) and answers PromQL for
the extension's series — every query of the Grafana dashboard (docs/grafana/jupyter-gpu-env.json)
included. Only the pod discovery is replaced by one static target carrying that pod's metadata: Debian's
Prometheus has no Kubernetes discovery. Skipped, saying so, where prometheus is not installed."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from helpers import wait_until

from .prom import (
    DASHBOARD,
    MIG_CAPTURE,
    OURS,
    Prometheus,
    as_pod,
    guide_scrape_config,
    server_config,
    started,
)

GRAFANA = {"$__range": "1m", "$__rate_interval": "15s", "$__interval": "1s"}
VARIABLES = {"$user": ".*", "$group": ".*", "$backend": ".*"}


@pytest.fixture
def jp_base_url():
    return "/user/ada/"  # as JupyterHub serves a user's server


@pytest.fixture
def jp_server_config(jp_server_config):
    return server_config(jp_server_config)  # no `user` label of its own: the pod gives it


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


async def test_the_guides_prometheus_scrapes_them_and_answers_the_dashboards_queries(
    jp_serverapp, http_server, tmp_path, jp_http_port
):
    """(``http_server``: the test server listening on its port for a client outside this process.)"""
    await started(jp_serverapp)
    folder = tmp_path / "prometheus"
    folder.mkdir()
    token = folder / "token"  # the hub service's token in the guide; this server's own here
    token.write_text(jp_serverapp.identity_provider.token)
    pod = {
        "__meta_kubernetes_pod_label_component": "singleuser-server",
        "__meta_kubernetes_pod_annotation_prometheus_io_scrape": "true",
        "__meta_kubernetes_pod_annotation_prometheus_io_path": "/user/ada/metrics",
        "__meta_kubernetes_pod_annotation_prometheus_io_port": str(jp_http_port),
        "__meta_kubernetes_pod_annotation_hub_jupyter_org_username": "ada",
        "__meta_kubernetes_pod_label_gpu_env_group": "physics",
    }
    job = as_pod(guide_scrape_config(), token, pod)
    prometheus = Prometheus(folder, job)
    await prometheus.start()
    try:
        await scraped_and_queried(prometheus, job["job_name"])
    finally:
        await prometheus.stop()


async def scraped_and_queried(prometheus: Prometheus, job: str) -> None:
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
    up = await prometheus.vector(f'up{{job="{job}"}}')
    assert [(s["metric"]["instance"], s["value"][1]) for s in up] == [(targets[0]["labels"]["instance"], "1")]
    assert targets[0]["scrapeUrl"].endswith("/user/ada/metrics")
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
    assert re.findall(r"label_values\((\w+), (\w+)\)", DASHBOARD.read_text()) == [
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
