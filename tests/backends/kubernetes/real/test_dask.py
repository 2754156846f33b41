"""A Dask cluster on the real cluster, without the dask-kubernetes operator, in both shapes: the scheduler a
Job admitted by Kueue with its Service, its pod running the keeper, which creates the workers' Jobs with
the guide's ``dask-keeper`` account (its projected token); or one Indexed Job, one Kueue workload, whose
pod 0 is the scheduler and the others its workers. Scheduler and workers in this venv (at the same path
on the node), speaking mutual TLS on loopback; a client computes; the shutdown leaves nothing labelled
for the cluster.

The server's account here is bound to the guide's Role and the guide's Dask Role for the server, both read
from docs/admin-kubernetes.md."""

from __future__ import annotations

import sys

from distributed import Client, Security
from helpers import wait_for_job, wait_until

from jupyter_gpu_env.backends.dask import DaskSettings
from jupyter_gpu_env.dask.service import DaskService
from jupyter_gpu_env.models.automation.dask import DaskClusterRequest
from jupyter_gpu_env.models.resources import Resources

from .tenancy import QUOTA, guide_objects, pick


def dask_server_account(real) -> str:
    """A second server account bound to the guide's Role and its Dask Role (both read from the guide, as
    the first account's Role is); its kubeconfig's path."""
    ns, account, plane = real.namespace, "jupyter-user-dask", real.plane
    plane.create(
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": account, "namespace": ns}}
    )
    docs = guide_objects()
    role = pick(docs, "Role", "jupyter-gpu-env-dask")
    role["metadata"]["namespace"] = ns
    plane.create(role)
    for name in ("jupyter-gpu-env-jobs", "jupyter-gpu-env-dask"):
        binding = pick(docs, "RoleBinding", name)
        binding["metadata"] = {"name": f"{name}-dask", "namespace": ns}
        binding["subjects"] = [{"kind": "ServiceAccount", "name": account, "namespace": ns}]
        plane.create(binding)
    token = real.tenancy.token(account)
    return str(plane.kubeconfig(plane.state / "dask-server.kubeconfig", account, token, ns))


def service(real, *, one_allocation: bool) -> DaskService:
    backend = real.backend(
        kubeconfig=dask_server_account(real), dask_service_account=real.tenancy.dask_account
    )
    settings = DaskSettings(
        connect_timeout_seconds=120,
        kubernetes_operator="never",
        interface="lo",
        one_allocation=one_allocation,
    )
    return DaskService(
        real.service(backend), real.root / "dask", settings,
        environments=lambda name: sys.prefix if name == "venv" else None,
        kernel_python=lambda name: None, images=lambda name: None,
    )  # fmt: skip


def owner(up) -> Security:
    """The cluster's owner's client security: its own certificate."""
    return Security(tls_ca_file=up.tls.ca_file, tls_client_cert=up.tls.cert_file,
                    tls_client_key=up.tls.key_file, require_encryption=True)  # fmt: skip


async def stopped_leaving_nothing(real, svc: DaskService, cluster_id: str, selector: str) -> None:
    await svc.stop(cluster_id)
    stopped = await svc.wait_stopped(cluster_id)
    assert stopped.state == "stopped", stopped.message
    await wait_until(lambda: not real.jobs(selector) and not real.pods(selector), within=120, every=1,
                     what="the cluster's Jobs and pods going")  # fmt: skip
    assert not real._list("/api/v1", "services", selector)


async def test_a_dask_cluster_computes_and_shuts_down_leaving_nothing(real):
    svc = service(real, one_allocation=False)
    made = await svc.create(
        DaskClusterRequest(environment="venv", backend="kubernetes", workers=1, name="analysis")
    )
    selector = f"jupyter-gpu-env/dask-cluster={made.id}"
    last = []

    async def running():
        got = await svc.get(made.id)
        last[:] = [got]
        return got if got.state == "running" and got.workers.running == 1 else None

    def state() -> str:
        jobs = [(j["metadata"]["name"], j["spec"].get("suspend")) for j in real.jobs(selector)]
        pods = [(p["metadata"]["name"], p["status"].get("phase")) for p in real.pods(selector)]
        shown = last[0].model_dump(include={"state", "message", "workers"}) if last else None
        return f"the cluster running one worker (seen {shown}; Jobs {jobs}; pods {pods})"

    up = await wait_until(running, within=240, every=1, what=state)
    names = sorted(j["metadata"]["name"] for j in real.jobs(selector))
    assert len(names) == 2 and names[1].endswith("-w1"), names  # the scheduler's Job and the worker's
    assert up.tls is not None and up.scheduler_address.startswith("tls://127.0.0.1:")
    async with Client(up.scheduler_address, security=owner(up), asynchronous=True) as client:
        assert await client.submit(sum, range(1000)) == 499500

    await stopped_leaving_nothing(real, svc, made.id, selector)


async def test_one_workload_admits_the_scheduler_and_its_workers_together(real):
    """The default shape for a fixed-size cluster of CPU workers: one Indexed Job, which Kueue admits
    whole; pod 0 the scheduler behind the Service, pods 1 and 2 its workers named after their index."""
    svc = service(real, one_allocation=True)
    made = await svc.create(
        DaskClusterRequest(environment="venv", backend="kubernetes", workers=2, name="together")
    )
    selector = f"jupyter-gpu-env/dask-cluster={made.id}"

    async def running():
        got = await svc.get(made.id)
        return got if got.state == "running" and got.workers.running == 2 else None

    def state() -> str:
        pods = [(p["metadata"]["name"], p["status"].get("phase")) for p in real.pods(selector)]
        return f"the cluster running two workers (pods {pods})"

    up = await wait_until(running, within=240, every=1, what=state)
    assert up.layout == "one_allocation" and up.workers.in_allocation == 2
    jobs = real.jobs(selector)
    assert len(jobs) == 1 and jobs[0]["spec"]["completionMode"] == "Indexed", jobs
    assert jobs[0]["spec"]["completions"] == 3
    async with Client(up.scheduler_address, security=owner(up), asynchronous=True) as client:
        info = await client.scheduler.identity(n_workers=-1)
        names = sorted(str(w["name"]) for w in info["workers"].values())
        base = jobs[0]["metadata"]["name"]
        assert names == [f"{base}-1", f"{base}-2"]
        assert await client.submit(sum, range(1000)) == 499500

    await stopped_leaving_nothing(real, svc, made.id, selector)


async def test_one_workload_waits_whole_while_the_quota_is_one_pod_short(real):
    """Kueue admits the workload all or nothing. A job holds 4 of the ClusterQueue's 16 CPUs; the cluster
    of 3 workers of 4 CPUs is 4 pods of 4 (the scheduler's pod has the workers' template), one pod short:
    none of its pods exists while the row says its one job waits. When the job ends, the whole cluster
    is admitted at once and runs its 3 workers."""
    assert QUOTA["cpu"] == "16"
    nb = real.gated_notebook("hold.ipynb")
    jobs = real.service()
    gate = real.root / "go"
    holder = await jobs.submit({"notebook_path": nb, "backend": "kubernetes", "resources": {"cpus": 4},
                                "parameters": {"gate": str(gate)}})  # fmt: skip
    await wait_for_job(jobs, holder.id, lambda j: j.state == "running", within=180, every=1)

    svc = service(real, one_allocation=True)
    made = await svc.create(DaskClusterRequest(environment="venv", backend="kubernetes", workers=3,
                                               resources=Resources(cpus=4), name="gang"))  # fmt: skip
    selector = f"jupyter-gpu-env/dask-cluster={made.id}"
    assert made.layout == "one_allocation"

    def held_for_quota() -> dict | None:
        found = real.jobs(selector)
        uid = found[0]["metadata"]["uid"] if len(found) == 1 else None
        for w in real.workloads():
            if w["metadata"].get("labels", {}).get("kueue.x-k8s.io/job-uid") == uid:
                conds = {c["type"]: c for c in w.get("status", {}).get("conditions", [])}
                held = conds.get("QuotaReserved", {})
                return held if held.get("status") == "False" and "quota" in held.get("message", "") else None
        return None

    held = await wait_until(held_for_quota, within=60, every=0.5, what="Kueue holding the cluster's workload")
    assert real.pods(selector) == [], "a pod of a workload Kueue has not admitted"
    shown = await svc.get(made.id)
    assert shown.state == "starting" and shown.message.startswith(
        "The cluster's one job waits in the queue"
    ), (
        shown.message,
        held,
    )

    gate.touch()  # the job ends, its 4 CPUs return to the queue
    await wait_for_job(jobs, holder.id, lambda j: j.state == "succeeded", within=120, every=1)

    async def running():
        got = await svc.get(made.id)
        return got if got.state == "running" and got.workers.running == 3 else None

    up = await wait_until(running, within=240, every=1, what="the whole cluster admitted and running")
    assert up.workers.in_allocation == 3
    assert len(real.pods(selector)) == 4
    async with Client(up.scheduler_address, security=owner(up), asynchronous=True) as client:
        assert await client.submit(sum, range(10)) == 45

    await stopped_leaving_nothing(real, svc, made.id, selector)
