"""Cluster capacity from Kubernetes node and pod objects (pure), with real GPU feature discovery labels."""

import json
import logging

import pytest

from jupyter_gpu_env.backends.kubernetes.capacity import allocatable_from_labels, capacity

H100_LABELS = "cnd-h100-gfd-node-labels-mig-mixed-all-balanced-550.54.15.json"


def node(name, labels=None, allocatable=None, unschedulable=False):
    return {
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"unschedulable": unschedulable},
        "status": {"allocatable": allocatable or {}},
    }


def pod(node_name, phase="Running", **requests):
    res = {k.replace("_", "."): str(v) for k, v in requests.items()}
    return {
        "spec": {"nodeName": node_name, "containers": [{"resources": {"requests": res, "limits": res}}]},
        "status": {"phase": phase},
    }


def test_real_gfd_labels_give_the_balanced_layout(gpu_fixtures):
    labels = json.loads((gpu_fixtures / H100_LABELS).read_text())
    offered = allocatable_from_labels(labels)
    assert offered == {"nvidia.com/mig-1g.10gb": 2, "nvidia.com/mig-2g.20gb": 1, "nvidia.com/mig-3g.40gb": 1}
    rows = capacity([node("gpu-1", labels)], [])
    by_profile = {r.profile: r for r in rows}
    assert by_profile["1g.10gb"].total == 2 and by_profile["1g.10gb"].free == 2
    assert {r.gpu_model for r in rows} == {"NVIDIA-H100-80GB-HBM3"}


def test_requests_of_unfinished_pods_are_subtracted():
    a100 = {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}
    nodes = [
        node("n1", a100, {"nvidia.com/mig-1g.10gb": "7", "cpu": "64"}),
        node("n2", a100, {"nvidia.com/mig-1g.10gb": "7"}),
        node("n3", a100, {"nvidia.com/gpu": "8"}),
        node("cordoned", a100, {"nvidia.com/gpu": "8"}, unschedulable=True),
    ]
    mig = "nvidia.com/mig-1g.10gb"
    pods = [
        {"spec": {"nodeName": "n1", "containers": [{"resources": {"limits": {mig: "2"}}}]}, "status": {"phase": "Running"}},
        {"spec": {"nodeName": "n2", "containers": [{"resources": {"requests": {mig: "1"}}}]}, "status": {"phase": "Pending"}},
        {"spec": {"nodeName": "n2", "containers": [{"resources": {"requests": {mig: "3"}}}]}, "status": {"phase": "Succeeded"}},
        {"spec": {"nodeName": "n3", "containers": [{"resources": {"requests": {"nvidia.com/gpu": "3"}}}]}, "status": {}},
        {"spec": {"nodeName": None, "containers": [{"resources": {"requests": {mig: "5"}}}]}, "status": {"phase": "Pending"}},
    ]  # fmt: skip
    rows = {r.resource: r for r in capacity(nodes, pods)}
    assert (rows[mig].total, rows[mig].used, rows[mig].free, rows[mig].nodes) == (14, 3, 11, 2)
    assert (rows["nvidia.com/gpu"].total, rows["nvidia.com/gpu"].free) == (8, 5)
    assert rows["nvidia.com/gpu"].profile is None


async def test_endpoint_says_when_no_cluster_is_configured(jp_fetch):
    body = json.loads((await jp_fetch("gpu-env", "api", "gpu", "cluster")).body)
    assert body["available"] is False and "cluster_capacity" in body["message"]


def _app_and_library(tmp_path, **config):
    from traitlets.config import Config

    from jupyter_gpu_env.app import GpuEnvApp

    app = GpuEnvApp(config=Config(config))
    return app, app.build_library(str(tmp_path))


def test_the_panel_reads_the_kubernetes_backends_own_capacity_where_it_runs(tmp_path):
    """One cache for the backend and the panel: with a Kubernetes backend configured, the panel shows its
    reading (c.KubernetesBackend.capacity_ttl) instead of reading the cluster a second time."""
    from jupyter_gpu_env.gpu.cluster import BackendCapacity

    app, lib = _app_and_library(
        tmp_path,
        GpuEnvApp={
            "cluster_capacity": "kubernetes",
            "backends": ["local", "kubernetes"],
            "state_dir": str(tmp_path),
        },
        KubernetesBackend={"namespace": "team-a", "image": "python:3.11"},
    )
    source = app.build_capacity(lib)
    assert isinstance(source, BackendCapacity) and source._read == lib.jobs.backends["kubernetes"].capacity


def test_the_older_capacity_ttl_is_still_read_with_a_warning(tmp_path):
    pytest.importorskip("kubernetes")
    app, lib = _app_and_library(
        tmp_path,
        GpuEnvApp={"cluster_capacity": "kubernetes", "cluster_capacity_ttl": 5.0, "state_dir": str(tmp_path)},
    )
    said: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: said.append(record.getMessage())  # type: ignore[method-assign]
    app.log.addHandler(handler)
    source = app.build_capacity(lib)
    assert source.ttl == 5.0  # type: ignore[attr-defined]
    assert any("c.KubernetesBackend.capacity_ttl" in s for s in said)
    app, lib = _app_and_library(
        tmp_path / "b",
        GpuEnvApp={"cluster_capacity": "kubernetes", "state_dir": str(tmp_path / "b")},
        KubernetesBackend={"capacity_ttl": 7.0},
    )
    assert app.build_capacity(lib).ttl == 7.0  # type: ignore[attr-defined]
