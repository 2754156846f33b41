"""The Grafana dashboard (docs/grafana/jupyter-gpu-env.json) checked by hand against what Grafana's
dashboard schema requires — its required keys, the core panel types it uses, a grid of 24 columns,
Prometheus targets through the dashboard's own data source variable — and against the code: every
series it queries is one the collector serves. (Grafana's official JSON schema is not available
offline to the tests; test_prometheus.py runs every query on a real Prometheus.)"""

from __future__ import annotations

import json
import re
from pathlib import Path

from jupyter_gpu_env.metrics.collector import GpuEnvCollector

DASHBOARD = Path(__file__).resolve().parents[2] / "docs" / "grafana" / "jupyter-gpu-env.json"
PANEL_TYPES = {"row", "stat", "bargauge", "timeseries"}  # Grafana's built-in panels
BUILTINS = {"__range", "__rate_interval", "__interval"}


def dashboard():
    return json.loads(DASHBOARD.read_text())


def test_the_dashboard_has_what_grafanas_schema_requires():
    dash = dashboard()
    assert isinstance(dash["schemaVersion"], int) and dash["schemaVersion"] >= 36
    assert 8 <= len(dash["uid"]) <= 40 and dash["title"]
    assert dash["time"] == {"from": "now-7d", "to": "now"}
    for annotation in dash["annotations"]["list"]:
        assert {"name", "datasource", "enable", "iconColor"} <= set(annotation)
    variables = dash["templating"]["list"]
    assert all({"type", "name"} <= set(v) for v in variables)
    assert [v["name"] for v in variables if v["type"] == "datasource"] == ["datasource"]
    assert all(v["current"].keys() >= {"text", "value"} for v in variables)

    ids = [p["id"] for p in dash["panels"]]
    assert len(set(ids)) == len(ids) and all(isinstance(i, int) for i in ids)
    cells: set[tuple[int, int]] = set()
    for panel in dash["panels"]:
        assert panel["type"] in PANEL_TYPES, panel["title"]
        grid = panel["gridPos"]
        assert all(isinstance(grid[k], int) for k in "hwxy") and grid["x"] + grid["w"] <= 24, panel["title"]
        mine = {
            (x, y)
            for x in range(grid["x"], grid["x"] + grid["w"])
            for y in range(grid["y"], grid["y"] + grid["h"])
        }
        assert not mine & cells, f"{panel['title']} overlaps another panel"
        cells |= mine
        if panel["type"] == "row":
            continue
        assert panel["description"] and set(panel["fieldConfig"]) == {"defaults", "overrides"}
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        refs = [t["refId"] for t in panel["targets"]]
        assert refs and len(set(refs)) == len(refs)
        assert all(t["datasource"] == panel["datasource"] and t["expr"] for t in panel["targets"])


def test_every_query_uses_defined_variables_and_served_series():
    dash = dashboard()
    defined = {v["name"] for v in dash["templating"]["list"]} | BUILTINS
    collector = GpuEnvCollector(lambda: None)
    served = set()
    for family in collector.describe():
        suffixes = {"counter": ["_total"], "histogram": ["_bucket", "_sum", "_count"]}.get(family.type, [""])
        served |= {family.name + s for s in suffixes}
    queried = set()
    for panel in dash["panels"]:
        for target in panel.get("targets", []):
            used = set(re.findall(r"\$\{?(\w+)", target["expr"]))
            assert used <= defined, f"{panel['title']}: undefined {used - defined}"
            queried |= set(re.findall(r"jupyter_gpu_env_\w+", target["expr"]))
    assert queried - served == set()
    # what the dashboard is for: allocated against used, idle, energy, queue waits, per user and per group
    exprs = " ".join(t["expr"] for p in dash["panels"] for t in p.get("targets", []))
    for needed in ("gpu_allocated_seconds_total", "gpu_used_seconds_total", "gpu_idle_seconds_total",
                   "gpu_energy_joules_total", "queue_wait_seconds_bucket", "by (user)", "by (group)"):  # fmt: skip
        assert needed in exprs
