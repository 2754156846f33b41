"""The job service over the Kubernetes backend, on kmock: a notebook submitted through the service
becomes a Job; "why pending" reaches the record; a stand-in kubelet runs the Job's own container
command here (the real runner on the shared folder); the record ends from status.json; cancel
deletes the Job."""

from __future__ import annotations

import nbformat

from jupyter_gpu_env.backends.kubernetes import objects
from jupyter_gpu_env.contracts import jobfiles


async def test_submit_wait_in_the_scheduler_run_and_succeed(cluster, ws):
    nb = ws.notebook("work/report.ipynb", ["import os", "print('threads', os.environ['OMP_NUM_THREADS'])"])
    svc = ws.service(ws.backend(cluster))
    try:
        job = await svc.submit(
            {"notebook_path": nb, "backend": "kubernetes", "resources": {"cpus": 2, "memory": "1G"}}
        )
        name = objects.job_name(job)
        assert (job.state, job.backend_job_id) == ("queued", name)
        assert "Submitted to Kubernetes" in job.pending_reason
        stored = cluster.job(name)
        assert stored["metadata"]["labels"][objects.JOB_ID_LABEL] == job.id
        assert str(ws.root / job.job_dir) in stored["spec"]["template"]["spec"]["containers"][0]["command"]

        # The scheduler cannot place it yet: the user sees the scheduler's words.
        cluster.patch_job(name, {"status": {"active": 1, "ready": 0}})
        cluster.add_pod(
            name,
            {
                "phase": "Pending",
                "conditions": [
                    {
                        "type": "PodScheduled",
                        "status": "False",
                        "reason": "Unschedulable",
                        "message": "0/3 nodes are available: 3 Insufficient cpu.",
                    }
                ],
            },
        )
        await svc.refresh()
        job = await svc.get(job.id)
        assert job.state == "queued" and job.pending_reason.endswith("3 Insufficient cpu.")

        code, pod_log = await cluster.run_pod(name)  # a node frees up; the pod runs the runner
        assert code == 0
        await svc.refresh()
        job = await svc.get(job.id)
        assert job.state == "succeeded", job.message
        assert (job.progress.cells_done, job.progress.cells_total) == (2, 2)
        assert job.pending_reason is None and job.exit_code == 0 and job.started_at and job.finished_at
        out = nbformat.read(ws.root / job.output_path, as_version=4)
        assert out.cells[1].outputs[0]["text"] == "threads 2\n"
        log_txt = (ws.root / job.log_path).read_bytes()
        assert pod_log == log_txt and b"threads 2" in log_txt  # pod log and log.txt agree
        chunk = await svc.log(job.id, 0, 1 << 20)
        assert chunk.text.encode() == log_txt and chunk.eof
    finally:
        await svc.stop()


async def test_cancel_through_the_service_deletes_the_job(cluster, ws):
    nb = ws.notebook("slow.ipynb", ["import time; time.sleep(60)"])
    svc = ws.service(ws.backend(cluster))
    try:
        job = await svc.submit({"notebook_path": nb, "backend": "kubernetes", "name": "Slow one"})
        name = objects.job_name(job)
        assert name.startswith("nb-slow-one-") and cluster.job_exists(name)
        cluster.mark_running(name)
        await svc.refresh()
        assert (await svc.get(job.id)).state == "running"
        job = await svc.cancel(job.id)
        assert (job.state, job.reason) == ("cancelled", "cancelled")
        assert not cluster.job_exists(name)
        (delete,) = cluster.requests("DELETE")
        assert delete.params["propagationPolicy"] == "Background"
        await svc.delete(job.id)
        assert not (ws.root / job.job_dir / jobfiles.JOB_JSON).exists()
    finally:
        await svc.stop()


async def test_a_refused_submission_leaves_nothing_behind(cluster, ws):
    import kmock

    nb = ws.notebook("a.ipynb", ["1"])
    cluster.k[f"post /apis/batch/v1/namespaces/{'jhub'}/jobs"] << kmock.Response(
        status=422,
        payload={
            "kind": "Status",
            "apiVersion": "v1",
            "status": "Failure",
            "reason": "Invalid",
            "code": 422,
            "message": 'Job.batch "x" is invalid: spec.template.spec.containers[0].image: Required value',
        },
    )
    svc = ws.service(ws.backend(cluster))
    try:
        try:
            await svc.submit({"notebook_path": nb, "backend": "kubernetes"})
        except Exception as e:
            assert type(e).__name__ == "InvalidRequest" and "Required value" in str(e)
        else:
            raise AssertionError("the submission was not refused")
        assert (await svc.list()).total == 0
        assert not [p for p in (ws.root / "jobs").iterdir() if not p.name.startswith(".")]
    finally:
        await svc.stop()
