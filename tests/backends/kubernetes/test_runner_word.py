"""What the real API server and controllers showed, guarded here on kmock: a job succeeds only on its
runner's word (a Job's Complete condition says only that the pod's command exited 0); a sweep's runs
follow their Indexed Job to its end; no job is lost between saving its record and creating its Job, and a
cancel in that window still reaches the Job; a record the cluster never acknowledged ends after a while."""

from __future__ import annotations

import time

from helpers import write_notebook

from jupyter_gpu_env.backends.base import UNSUBMITTED_LOST
from jupyter_gpu_env.backends.kubernetes import objects
from jupyter_gpu_env.contracts import jobfiles

from .conftest import rfc3339
from .test_backend import make_job, submitted


def _ended_ago(cluster, name: str, seconds: float) -> None:
    cluster.mark_ended(name, ok=True)
    cluster.patch_job(name, {"status": {"completionTime": rfc3339(time.time() - seconds)}})


async def test_a_completed_job_without_its_runners_status_fails_once_the_grace_is_over(cluster, ws):
    backend = ws.backend(cluster, status_grace=60.0)
    never, started, fresh = await submitted(cluster, ws, backend, n=3)
    _ended_ago(cluster, objects.job_name(never), 120)
    _ended_ago(cluster, objects.job_name(started), 120)
    (ws.root / started.job_dir / jobfiles.HEARTBEAT).write_text("node-1 7\n")
    _ended_ago(cluster, objects.job_name(fresh), 1)
    seen = await backend.poll([never, started, fresh])
    assert fresh.id not in seen  # ended a second ago: its status.json may still be on its way
    assert (seen[never.id].state, seen[never.id].reason, seen[never.id].exit_code) == ("failed", "lost", None)
    assert "runner never ran in the job folder" in seen[never.id].message
    assert "c.KubernetesBackend.python" in seen[never.id].message
    assert seen[started.id].state == "failed"
    assert "started (it left a heartbeat) but wrote no status.json" in seen[started.id].message
    await backend.close()


async def test_a_sweeps_runs_follow_their_indexed_job_to_its_end(cluster, ws):
    write_notebook(ws.root, "p.ipynb", [], parameters="alpha = 1")
    svc = ws.service(ws.backend(cluster))
    try:
        group = await svc.submit(
            {"notebook_path": "p.ipynb", "backend": "kubernetes", "sweep": {"alpha": [1, 2, 3]}}
        )
        runs = (await svc.list(sweep=group.id)).items
        # Index 0's runner ran and said so; the pods of 1 and 2 exited 0 without running theirs.
        jobfiles.write_json_atomic(
            ws.root / runs[0].job_dir / jobfiles.STATUS,
            {"state": "succeeded", "message": "All cells ran.", "exit_code": 0},
        )
        cluster.patch_job(group.backend_job_id, {"status": {"completedIndexes": "0-1", "succeeded": 2}})
        await svc.refresh()
        states = {r.id: r for r in (await svc.list(sweep=group.id)).items}
        assert states[runs[0].id].state == "succeeded"
        assert states[runs[1].id].state == "failed"
        assert states[runs[1].id].message.startswith(
            f"The pod of index 1 of {group.backend_job_id} completed, but its runner never ran"
        )
        assert states[runs[2].id].state == "queued"  # its pod has not run yet

        cluster.mark_ended(group.backend_job_id, ok=True)  # the Job ends without running index 2
        await svc.refresh()
        last = await svc.get(runs[2].id)
        assert (last.state, last.reason) == ("failed", "lost"), last.message
        group = await svc.sweeps.get(group.id)
        assert group.state == "failed"
        assert {k: n for k, n in group.counts.items() if n} == {"succeeded": 1, "failed": 2}
    finally:
        await svc.stop()


async def test_a_refresh_between_the_record_and_its_job_loses_nothing(cluster, ws):
    nb = ws.notebook("race.ipynb", ["print('ran')"])
    backend = ws.backend(cluster)
    svc = ws.service(backend)
    create = backend.submit
    during = []

    async def refreshed_first(job):
        await svc.refresh()  # another client watches: a poll finds the record and no Job yet
        during.append(await svc.store.get(job.id))
        return await create(job)

    backend.submit = refreshed_first
    try:
        job = await svc.submit({"notebook_path": nb, "backend": "kubernetes"})
        assert during[0].state == "queued" and during[0].backend_job_id is None
        assert (job.state, job.backend_job_id) == ("queued", objects.job_name(job))
        await svc.refresh()
        assert (await svc.get(job.id)).state == "queued"
        code, _ = await cluster.run_pod(objects.job_name(job))
        assert code == 0
        await svc.refresh()
        assert (await svc.get(job.id)).state == "succeeded"
    finally:
        await svc.stop()


async def test_a_cancel_before_the_job_is_created_still_reaches_it(cluster, ws):
    nb = ws.notebook("cancelled.ipynb", ["print('ran')"])
    backend = ws.backend(cluster)
    svc = ws.service(backend)
    create = backend.submit

    async def cancelled_first(job):
        await svc.cancel(job.id)  # the user cancels while the Job is being created
        return await create(job)

    backend.submit = cancelled_first
    try:
        job = await svc.submit({"notebook_path": nb, "backend": "kubernetes"})
        assert job.state == "cancelled" and job.pending_reason is None
        assert cluster.requests("POST", "/jobs")  # it was created, then deleted at once
        assert not cluster.job_exists(objects.job_name(job))
    finally:
        await svc.stop()


async def test_a_record_the_cluster_never_acknowledged_is_lost_after_ten_minutes(cluster, ws):
    backend = ws.backend(cluster)
    backend.job_folder = lambda job: ws.root / job.job_dir
    new = make_job(ws, "0000aaaabbbb")
    old = make_job(ws, "0001aaaabbbb").model_copy(update={"created_at": time.time() - UNSUBMITTED_LOST - 1})
    seen = await backend.poll([new, old])
    assert new.id not in seen
    assert (seen[old.id].state, seen[old.id].reason) == ("failed", "lost")
    assert "never ran" in seen[old.id].message
    await backend.close()


async def test_delete_removes_the_finished_job_and_its_pods_from_the_cluster(cluster, ws):
    nb = ws.notebook("done.ipynb", ["print('ran')"])
    svc = ws.service(ws.backend(cluster))
    try:
        job = await svc.submit({"notebook_path": nb, "backend": "kubernetes"})
        name = objects.job_name(job)
        assert (await cluster.run_pod(name))[0] == 0
        await svc.refresh()
        assert (await svc.get(job.id)).state == "succeeded" and cluster.job_exists(name)
        await svc.delete(job.id)
        assert not cluster.job_exists(name)  # not left to its TTL
        (request,) = cluster.requests("DELETE", f"/jobs/{name}")
        assert "propagationPolicy=Background" in str(request.url)  # the pods go with it
    finally:
        await svc.stop()
