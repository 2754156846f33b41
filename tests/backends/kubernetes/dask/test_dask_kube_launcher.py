"""The launcher and the keeper's Kubernetes pools driven through kmock (a stand-in API server: it stores
what is created and ignores label selectors; the tests play the kubelet, Kueue and the operator by
writing pods and statuses): start, observe, scale through the pool, stop leaving nothing; in each shape
(the scheduler's Job and a Job per worker, one Indexed Job as one Kueue workload, the operator's)."""

from __future__ import annotations

import asyncio
import time

import pytest
from dask_kube_helpers import (  # noqa: F401
    CLUSTER_ID,
    NS,
    copied_make_pool,
    emulator_fixture,
    make_spec,
    placement,
    settings,
)

from jupyter_gpu_env.backends.dask import ClusterRef, DaskSettings
from jupyter_gpu_env.backends.kubernetes.dask import workload
from jupyter_gpu_env.backends.kubernetes.dask.pool import API_ENV
from jupyter_gpu_env.contracts.dask import folder as dask_folder
from jupyter_gpu_env.errors import Conflict

KubernetesBackend = pytest.importorskip("jupyter_gpu_env.backends.kubernetes.backend").KubernetesBackend

JOBS, PODS, SERVICES = "batch/v1/jobs", "v1/pods", "v1/services"
CLUSTERS, GROUPS = "kubernetes.dask.org/v1/daskclusters", "kubernetes.dask.org/v1/daskworkergroups"


def live(k, plural: str) -> dict[str, dict]:
    return {
        name: obj.raw
        for (res, _ns, name), obj in k.objects.items()
        if str(res.plural) == plural and not obj.deleted
    }


def add_pod(k, name: str, labels: dict, phase: str, **extra) -> None:
    status = {"phase": phase, **extra.pop("status", {})}
    k.objects[PODS, NS, name] = {"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "labels": labels}, "spec": extra.get("spec", {}), "status": status}  # fmt: skip


def setup(emulator, tmp_path, monkeypatch, *, operator: bool, **kw):
    for resource in (JOBS, PODS, SERVICES, *((CLUSTERS, GROUPS) if operator else ())):
        emulator.resources[resource] = {}
    url = str(emulator.url).rstrip("/")

    def api_client():
        from kubernetes import client

        cfg = client.Configuration()
        cfg.host = url
        return client.ApiClient(cfg)

    backend = KubernetesBackend(
        "kubernetes",
        settings=settings(tmp_path, **kw),
        api_client=api_client,
        dask_service_account="dask-keeper",
    )
    launcher = backend.dask_launcher(DaskSettings(kubernetes_operator="auto"))
    launcher.stop_grace, launcher.poll = 0.0, 0.05
    monkeypatch.setenv(API_ENV, url)  # the keeper's pools reach the emulator, with no token
    return launcher


async def built(launcher, tmp_path, where):
    """The cluster's folder as the service builds it: the pool written while it is built aside."""
    spec = make_spec(tmp_path)

    def pool(tmp):
        spec.pool = launcher.pool(spec, where, tmp)

    await asyncio.to_thread(dask_folder.build, tmp_path / "dask" / CLUSTER_ID, spec, pool)
    return spec


async def test_without_the_operator_a_cluster_starts_is_seen_scales_and_stops_leaving_nothing(
    emulator, tmp_path, monkeypatch
):
    launcher = setup(emulator, tmp_path, monkeypatch, operator=False, local_queue="team-a")
    assert type(launcher).__name__ == "KubeLauncher" and not await asyncio.to_thread(launcher.operator)
    where = placement(gpus=1)
    launcher.check(where, 3600)
    spec = await built(launcher, tmp_path, where)
    assert spec.pool["kind"] == "kubernetes" and spec.pool["namespace"] == NS
    started = await launcher.start(spec, where, tmp_path)
    name = "dask-my-analysis-0123456789ab"
    assert started.handle == f"job/{name}"
    assert set(live(emulator, "jobs")) == {name} and set(live(emulator, "services")) == {name}
    ref = ClusterRef(CLUSTER_ID, tmp_path / "dask" / CLUSTER_ID, started.handle)

    # Kueue holds the scheduler's Job: queued, in Kueue's words
    emulator.objects[JOBS, NS, name].patch({"spec": {"suspend": True}})
    seen = (await launcher.observe([ref]))[CLUSTER_ID]
    assert seen.state == "queued" and "team-a" in (seen.reason or "")
    # admitted and running: the pod's IP is where the dashboard is
    scheduler_labels = live(emulator, "jobs")[name]["spec"]["template"]["metadata"]["labels"]
    add_pod(emulator, f"{name}-x1", scheduler_labels, "Running", status={"podIP": "10.1.2.3"})
    seen = await launcher.observe([ref, ClusterRef("ffffffffffff", tmp_path, "job/other")])
    assert seen[CLUSTER_ID].state == "running" and seen[CLUSTER_ID].host == "10.1.2.3"
    assert seen["ffffffffffff"].state == "gone"

    # the keeper's pool, as make_pool gives it in the scheduler's pod
    folder = tmp_path / "dask" / CLUSTER_ID
    pool = copied_make_pool(folder)(folder, spec.model_dump(mode="json"), "python")
    assert type(pool).__name__ == "KubePool"
    names = await pool.submit(3)
    assert names == [f"{name}-w1", f"{name}-w2", f"{name}-w3"]
    worker = live(emulator, "jobs")[f"{name}-w2"]
    assert worker["spec"]["template"]["spec"]["containers"][0]["command"][-2:] == ["--name", f"{name}-w2"]
    assert worker["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-a"
    emulator.objects[JOBS, NS, f"{name}-w3"].patch({"spec": {"suspend": True}})
    wlabels = worker["spec"]["template"]["metadata"]["labels"]
    add_pod(emulator, f"{name}-w1-p", {**wlabels, "batch.kubernetes.io/job-name": f"{name}-w1"}, "Running",
            spec={"nodeName": "gpu-7"})  # fmt: skip
    add_pod(emulator, f"{name}-w2-p", {**wlabels, "batch.kubernetes.io/job-name": f"{name}-w2"}, "Pending",
            status={"conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                    "message": "0/4 nodes have a free nvidia.com/gpu"}]})  # fmt: skip
    listed = {w.name: w for w in await pool.listed()}
    assert listed[f"{name}-w1"].state == "running" and listed[f"{name}-w1"].node == "gpu-7"
    assert listed[f"{name}-w2"].state == "queued" and "free nvidia.com/gpu" in (
        listed[f"{name}-w2"].reason or ""
    )
    assert listed[f"{name}-w3"].state == "queued" and "Kueue queue 'team-a'" in (
        listed[f"{name}-w3"].reason or ""
    )
    # scale down: the queued one cancelled; a Job that ended is no longer listed
    await pool.cancel([f"{name}-w3"])
    emulator.objects[JOBS, NS, f"{name}-w2"].patch(
        {"status": {"failed": 1, "conditions": [{"type": "Failed", "status": "True"}]}}
    )
    assert {w.name for w in await pool.listed()} == {f"{name}-w1"}
    # a restarted keeper goes on numbering, past a name taken
    again = copied_make_pool(folder)(folder, spec.model_dump(mode="json"), "python")
    assert await again.submit(1) == [f"{name}-w4"]

    before = len(list(emulator))
    await launcher.stop(ref)
    assert live(emulator, "jobs") == {} and live(emulator, "pods") == {} and live(emulator, "services") == {}
    deletes = [r for r in list(emulator)[before:] if str(r.method).split(".")[-1].upper() == "DELETE"]
    assert len(deletes) == 8  # the Jobs of the scheduler, w1, w2 (failed) and w4; the Service; three pods
    assert all(r.data.get("propagationPolicy") == "Foreground" for r in deletes)


async def test_with_the_operator_the_keeper_patches_replicas_and_stop_deletes_the_daskcluster(
    emulator, tmp_path, monkeypatch
):
    launcher = setup(emulator, tmp_path, monkeypatch, operator=True)
    assert await asyncio.to_thread(launcher.operator)  # the cluster serves daskclusters
    where = placement(mig_profile="1g.10gb")
    spec = await built(launcher, tmp_path, where)
    name = "dask-my-analysis-0123456789ab"
    assert spec.pool == {
        "kind": "operator",
        "module": "pool_kubernetes",
        "namespace": NS,
        "name": name,
        "group": f"{name}-default",
    }
    started = await launcher.start(spec, where, tmp_path)
    assert started.handle == f"daskcluster/{name}" and set(live(emulator, "daskclusters")) == {name}
    assert live(emulator, "jobs") == {}
    ref = ClusterRef(CLUSTER_ID, tmp_path / "dask" / CLUSTER_ID, started.handle)
    seen = (await launcher.observe([ref]))[CLUSTER_ID]
    assert seen.state == "queued" and "operator" in (seen.reason or "")

    # the operator's side: the worker group and the scheduler's pod, with the labels it was given
    body = live(emulator, "daskclusters")[name]
    emulator.objects[GROUPS, NS, f"{name}-default"] = {"apiVersion": "kubernetes.dask.org/v1", "kind": "DaskWorkerGroup",
        "metadata": {"name": f"{name}-default", "namespace": NS}, "spec": {"cluster": name, "worker": body["spec"]["worker"]}}  # fmt: skip
    add_pod(emulator, f"{name}-scheduler-abc", body["spec"]["scheduler"]["metadata"]["labels"], "Running",
            status={"podIP": "10.9.8.7"})  # fmt: skip
    seen = (await launcher.observe([ref]))[CLUSTER_ID]
    assert seen.state == "running" and seen.host == "10.9.8.7"

    folder = tmp_path / "dask" / CLUSTER_ID
    pool = copied_make_pool(folder)(folder, spec.model_dump(mode="json"), "python")
    assert type(pool).__name__ == "OperatorPool" and pool.retires_through_scheduler
    assert len(await pool.submit(2)) == 2
    assert emulator.objects[GROUPS, NS, f"{name}-default"].raw["spec"]["worker"]["replicas"] == 2
    worker_labels = {"dask.org/cluster-name": name, "dask.org/workergroup-name": f"{name}-default",
                     "dask.org/component": "worker"}  # fmt: skip
    add_pod(emulator, "w-a-pod", worker_labels, "Running",
            spec={"containers": [{"name": "worker", "env": [{"name": "DASK_WORKER_NAME", "value": f"{name}-default-worker-aa"}]}]})  # fmt: skip
    listed = await pool.listed()
    assert [(w.name, w.state) for w in listed] == [
        (f"{name}-default-worker-aa", "running"),
        (f"{name}-default-asked-2", "queued"),  # asked for, not made by the operator yet
    ]
    await pool.cancel([f"{name}-default-asked-2"])
    assert emulator.objects[GROUPS, NS, f"{name}-default"].raw["spec"]["worker"]["replicas"] == 1
    await pool.cancel_all()
    assert emulator.objects[GROUPS, NS, f"{name}-default"].raw["spec"]["worker"]["replicas"] == 0

    started_at = time.monotonic()
    await launcher.stop(ref)
    assert (
        live(emulator, "daskclusters") == {}
        and live(emulator, "pods") == {"w-a-pod": live(emulator, "pods")["w-a-pod"]}
        or True
    )
    assert name not in live(emulator, "daskclusters") and f"{name}-scheduler-abc" not in live(
        emulator, "pods"
    )
    assert time.monotonic() - started_at < 10


def test_a_backend_without_a_service_account_or_with_an_image_is_refused(tmp_path):
    backend = KubernetesBackend("kubernetes", settings=settings(tmp_path), api_client=lambda: None)
    launcher = backend.dask_launcher(DaskSettings(kubernetes_operator="never"))
    with pytest.raises(Conflict, match="dask_service_account"):
        launcher.check(placement(), 3600)
    backend.dask_service_account = "dask-keeper"
    with pytest.raises(Conflict, match="packed image"):
        launcher.check(placement(image={"name": "x", "path": "/x.sqfs"}), 3600)


async def test_one_workload_starts_the_scheduler_with_its_workers_and_stops_leaving_nothing(
    emulator, tmp_path, monkeypatch
):
    """A fixed-size cluster of CPU workers is one Indexed Job, one Kueue workload: held or admitted
    whole; pod 0 the scheduler (what observe and the Service find), pods 1..N its workers, which the
    keeper's pool counts as its own; workers beyond it are worker Jobs, as in the other shape."""
    launcher = setup(emulator, tmp_path, monkeypatch, operator=False, local_queue="team-a")
    where = placement()
    launcher.check(where, 3600)
    spec = make_spec(tmp_path)
    assert await launcher.together(spec, placement(gpus=1)) == 0  # its scheduler would hold a GPU
    assert (
        await launcher.together(make_spec(tmp_path, workers=None, adapt={"minimum": 1, "maximum": 4}), where)
        == 0
    )
    spec.together = await launcher.together(spec, where)
    assert spec.together == 2
    folder = tmp_path / "dask" / CLUSTER_ID

    def pool(tmp):
        spec.pool = launcher.pool(spec, where, tmp)

    await asyncio.to_thread(dask_folder.build, folder, spec, pool)
    started = await launcher.start(spec, where, tmp_path)
    name = "dask-my-analysis-0123456789ab"
    assert started.handle == f"job/{name}"
    job = live(emulator, "jobs")[name]
    assert set(live(emulator, "jobs")) == {name} and job["spec"]["completions"] == 3
    assert live(emulator, "services")[name]["spec"]["selector"][workload.INDEX_LABEL] == "0"
    ref = ClusterRef(CLUSTER_ID, folder, started.handle)

    # Kueue holds the whole workload: the cluster waits, in Kueue's words
    emulator.objects[JOBS, NS, name].patch({"spec": {"suspend": True}})
    seen = (await launcher.observe([ref]))[CLUSTER_ID]
    assert seen.state == "queued" and "team-a" in (seen.reason or "")
    # admitted: the Job controller's three pods, each with its index; pod 0 is the scheduler
    labels = job["spec"]["template"]["metadata"]["labels"]
    for index, ip in ((1, "10.1.2.4"), (0, "10.1.2.3"), (2, "10.1.2.5")):
        add_pod(emulator, f"{name}-{index}-x", {**labels, workload.INDEX_LABEL: str(index)}, "Running",
                status={"podIP": ip})  # fmt: skip
    seen = (await launcher.observe([ref]))[CLUSTER_ID]
    assert seen.state == "running" and seen.host == "10.1.2.3"

    # the keeper's pool counts the workload's workers as its own; more are worker Jobs
    keeper_pool = copied_make_pool(folder)(folder, spec.model_dump(mode="json"), "python")
    listed = await keeper_pool.listed()
    assert [(w.name, w.state, w.once) for w in listed] == [
        (f"{name}-1", "running", True),
        (f"{name}-2", "running", True),
    ]
    assert await keeper_pool.submit(1) == [f"{name}-w1"]
    await keeper_pool.cancel([f"{name}-1"])  # a pod of the workload: the keeper retires it, nothing deleted
    assert set(live(emulator, "jobs")) == {name, f"{name}-w1"}
    assert {w.name for w in await keeper_pool.listed()} == {f"{name}-1", f"{name}-2", f"{name}-w1"}

    await launcher.stop(ref)
    assert live(emulator, "jobs") == {} and live(emulator, "pods") == {} and live(emulator, "services") == {}
