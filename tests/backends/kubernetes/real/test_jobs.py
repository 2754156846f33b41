"""Jobs end to end on the real cluster: a notebook through ``JobService``, Kueue's webhook suspending and
admitting its Job, the Job controller making its pod, the scheduler binding it, the node agent running the
Job's own command (the real runner and papermill) on the shared folder. (Was tests/backends/kubernetes/
test_e2e.py, which ran only against a cluster named by KUBECONFIG and never ran.)"""

from __future__ import annotations

import asyncio

from helpers import ended, printed, wait_for_job, wait_until
from kubernetes.utils import parse_quantity

from jupyter_gpu_env.backends.kubernetes import objects
from jupyter_gpu_env.contracts import jobfiles

from .cluster import NODE


async def test_parameters_reach_the_notebook_and_the_pod_ran_on_the_node(real):
    nb = real.notebook(
        "work/hello.ipynb",
        [
            "import os, socket",
            "print('alpha is', alpha, 'on', socket.gethostname(), os.environ['OMP_NUM_THREADS'])",
        ],
        parameters="alpha = 1",
    )
    svc = real.service()
    job = await svc.submit({"notebook_path": nb, "backend": "kubernetes", "parameters": {"alpha": 7},
                            "resources": {"cpus": 2, "memory": "1G"}})  # fmt: skip
    name = objects.job_name(job)
    (created,) = real.jobs()
    assert created["metadata"]["name"] == name == job.backend_job_id
    assert created["metadata"]["labels"][objects.QUEUE_LABEL] == real.tenancy.local_queue
    job = await wait_for_job(svc, job.id, ended, within=180, every=1)
    assert job.state == "succeeded", job.message
    assert job.parameters == {"alpha": 7} and job.exit_code == 0 and job.started_at and job.finished_at
    pod = real.pod_of(name)
    assert "alpha is 7 on " + pod["metadata"]["name"] + " 2" in printed(real.root / job.output_path)
    assert pod["spec"]["nodeName"] == NODE and pod["status"]["phase"] == "Succeeded"
    (state,) = pod["status"]["containerStatuses"]
    assert state["state"]["terminated"]["exitCode"] == 0
    limits = pod["spec"]["containers"][0]["resources"]["limits"]
    assert limits["cpu"] == "2" and parse_quantity(limits["memory"]) == job.resources.memory_bytes
    # Kueue admitted it: its Workload is Finished, and the Job was resumed (not suspended) to run.
    (workload,) = [w for w in real.workloads() if w["metadata"]["labels"].get("kueue.x-k8s.io/job-uid")
                   == real.jobs()[0]["metadata"]["uid"]]  # fmt: skip
    conds = {c["type"]: c["status"] for c in workload["status"]["conditions"]}
    assert conds.get("Admitted") == "True" or conds.get("Finished") == "True", conds
    # The pod log, read by the server's own account through the API server and the node's kubelet port,
    # is the job's log.txt byte for byte.
    from kubernetes import client, config

    api = client.CoreV1Api(config.new_client_from_config(str(real.tenancy.kubeconfig)))
    pod_log = await asyncio.to_thread(
        api.read_namespaced_pod_log, pod["metadata"]["name"], real.namespace, container="runner",
        _preload_content=False,
    )  # fmt: skip
    assert pod_log.data == (real.root / job.log_path).read_bytes()


async def test_a_job_whose_runner_never_ran_fails(real):
    """The container exits 0 without running the runner (here: the image's "python" is `true`): no
    status.json, so nothing says the notebook ran."""
    nb = real.notebook("never.ipynb", ["print('ran')"])
    svc = real.service(real.backend(settings=real.settings(python="true")))
    job = await svc.submit({"notebook_path": nb, "backend": "kubernetes"})
    name = objects.job_name(job)
    await wait_until(lambda: any(c["type"] == "Complete" and c["status"] == "True"
                                 for c in (real.jobs()[0].get("status") or {}).get("conditions") or []),
                     within=120, every=0.5, what=f"Job {name} Complete")  # fmt: skip
    assert not (real.root / job.job_dir / jobfiles.STATUS).exists()
    job = await wait_for_job(svc, job.id, ended, within=60, every=1)
    assert job.state == "failed", (job.state, job.message)


async def test_a_running_job_is_cancelled_leaving_no_job_or_pod(real):
    nb = real.notebook("sleep.ipynb", ["print('sleeping', flush=True)", "import time; time.sleep(600)"])
    svc = real.service()
    job = await svc.submit({"notebook_path": nb, "backend": "kubernetes"})
    job = await wait_for_job(svc, job.id, lambda j: j.state == "running", within=180, every=1)
    pod = real.pod_of(job.backend_job_id)
    assert pod["status"]["phase"] == "Running"
    job = await svc.cancel(job.id)
    assert job.state == "cancelled"
    # The pod got SIGTERM: the runner said so in the folder, and the pod is gone with its Job.
    folder = real.root / job.job_dir
    await wait_until(lambda: jobfiles.read_status(folder), within=60, every=0.5, what="the runner's status")
    assert jobfiles.read_status(folder)["state"] == "cancelled"
    await real.wait_gone(within=60)


async def test_delete_leaves_no_job_or_pod(real):
    nb = real.notebook("quick.ipynb", ["print('done')"])
    svc = real.service()
    job = await svc.submit({"notebook_path": nb, "backend": "kubernetes"})
    job = await wait_for_job(svc, job.id, ended, within=180, every=1)
    assert job.state == "succeeded", job.message
    assert real.jobs() and real.pods()  # ttlSecondsAfterFinished keeps them an hour
    await svc.delete(job.id)
    await wait_until(lambda: not real.jobs() and not real.pods(), within=30, every=0.5,
                     what=lambda: f"the deleted job's Job and pod going (left: Jobs "
                     f"{[j['metadata']['name'] for j in real.jobs()]}, pods {[p['metadata']['name'] for p in real.pods()]})")  # fmt: skip


async def test_an_impossible_request_says_why_it_waits(real):
    nb = real.notebook("big.ipynb", ["1"])
    svc = real.service()
    job = await svc.submit({"notebook_path": nb, "backend": "kubernetes", "resources": {"cpus": 1000}})
    job = await wait_for_job(svc, job.id, lambda j: "cpu" in (j.pending_reason or "") and "quota" in (
        j.pending_reason or ""), within=60, every=0.5)  # fmt: skip
    assert job.state == "queued"
    (created,) = real.jobs()
    assert created["spec"]["suspend"] is True and not real.pods()  # Kueue holds it: no pod at all
    await svc.cancel(job.id)
    await real.wait_gone(within=30)
