"""The backend against a Kubernetes API on the wire (kmock on loopback) with the real client:
create, list, pods, Kueue Workloads, pod logs, delete, 404 and 409, errors, and the event loop."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
from helpers import job_record

from jupyter_gpu_env.backends.kubernetes import checks, objects
from jupyter_gpu_env.contracts import jobfiles
from jupyter_gpu_env.errors import Conflict, Forbidden, InvalidRequest, NotFound, Unavailable
from jupyter_gpu_env.models.jobs import Job, JobRequest
from jupyter_gpu_env.models.resources import Resources

NS = "jhub"  # the namespace of the conftest's workspace

kubernetes_validate = pytest.importorskip("kubernetes_validate")


def make_job(ws, job_id: str, *, queue: str | None = None, state: str = "queued", **resources) -> Job:
    folder = ws.root / "jobs" / f"nb-{job_id}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / jobfiles.JOB_JSON).write_text("{}")
    return job_record(
        job_id, f"jobs/nb-{job_id}", name="analysis", backend="kubernetes", state=state,
        notebook_path="analysis.ipynb", resources=Resources(**resources).normalized(), queue=queue,
        created_at=time.time(),
    )  # fmt: skip


def bind(backend, ws) -> None:
    backend.job_folder = lambda job: ws.root / job.job_dir


async def submitted(cluster, ws, backend, n: int = 1, **kw) -> list[Job]:
    bind(backend, ws)
    jobs = [make_job(ws, f"{i:04d}aaaabbbb", **kw) for i in range(n)]
    for job in jobs:
        obs = await backend.submit(job)
        assert obs.state == "queued" and obs.backend_job_id == objects.job_name(job)
    return jobs


async def test_create_sends_a_valid_job_and_labels_it(cluster, ws):
    cluster.add_node("h100-a", {"nvidia.com/mig-1g.10gb": "7"})
    backend = ws.backend(cluster)
    (job,) = await submitted(cluster, ws, backend, mig_profile="1g.10gb", queue=None)
    (post,) = cluster.requests("POST", f"/namespaces/{NS}/jobs")
    body = json.loads(post.body)
    for version in ("1.29.0", "1.37.0"):
        kubernetes_validate.validate(body, version, strict=True)
    assert checks.problems(body) == []
    stored = cluster.job(objects.job_name(job))
    assert stored["metadata"]["labels"][objects.JOB_ID_LABEL] == job.id
    res = stored["spec"]["template"]["spec"]["containers"][0]["resources"]
    assert res["limits"]["nvidia.com/mig-1g.10gb"] == res["requests"]["nvidia.com/mig-1g.10gb"] == "1"
    assert str(ws.root / job.job_dir) in stored["spec"]["template"]["spec"]["containers"][0]["command"]
    await backend.close()


async def test_one_list_call_per_poll_and_foreign_jobs_ignored(cluster, ws):
    backend = ws.backend(cluster)
    jobs = await submitted(cluster, ws, backend, n=5)
    for job in jobs:
        cluster.mark_running(objects.job_name(job))
    # Recorded running where they run: no pod is asked where (see the test below).
    jobs = [j.model_copy(update={"state": "running", "node": "10.4.0.9"}) for j in jobs]
    # kmock ignores labelSelector: another user's Job and an unmanaged one come back too.
    other = ws.backend(cluster, settings=ws.settings(user="bob"))
    bob_job = (await submitted(cluster, ws, other, n=6))[-1]
    cluster.k.objects["batch/v1/jobs", NS, "unmanaged"] = {"metadata": {"name": "unmanaged", "labels": {}}}
    before = len(cluster.requests())
    seen = await backend.poll(jobs)
    calls = cluster.requests()[before:]
    assert [str(c.method).split(".")[-1] for c in calls] == ["GET"]
    assert (
        calls[0].params["labelSelector"]
        == "app.kubernetes.io/managed-by=jupyter-gpu-env,jupyter-gpu-env/user=alice"
    )
    assert {jid: o.state for jid, o in seen.items()} == {j.id: "running" for j in jobs}
    assert bob_job.id not in seen
    await backend.close()
    await other.close()


async def test_a_job_first_seen_running_is_placed_by_its_pods_ip(cluster, ws):
    backend = ws.backend(cluster)
    fresh, known, odd = await submitted(cluster, ws, backend, n=3)
    for job, ip in ((fresh, "10.4.0.7"), (known, "10.4.0.8"), (odd, "not-an-address")):
        cluster.mark_running(objects.job_name(job))
        cluster.add_pod(objects.job_name(job), {"phase": "Running", "podIP": ip}, suffix=job.id[:5])
    known = known.model_copy(update={"state": "running", "node": "10.4.0.8"})
    before = len(cluster.requests())
    seen = await backend.poll([fresh, known, odd])
    # The Jobs, then once the pods: the fresh one's pod says where it runs; one whose record already
    # says where is not asked again, and what is not an IP address is not believed.
    assert [c.url.path.rsplit("/", 1)[-1] for c in cluster.requests()[before:]] == ["jobs", "pods"]
    assert {jid: (o.state, o.host) for jid, o in seen.items()} == {
        fresh.id: ("running", "10.4.0.7"),
        known.id: ("running", None),
        odd.id: ("running", None),
    }
    before = len(cluster.requests())
    await backend.poll([known])
    assert len(cluster.requests()) == before + 1  # one list call once every job's place is known
    await backend.close()


async def test_why_pending_from_the_pod(cluster, ws):
    backend = ws.backend(cluster)
    unschedulable, pulling, creating, nopod = await submitted(cluster, ws, backend, n=4)
    msg = "0/3 nodes are available: 3 Insufficient nvidia.com/mig-1g.10gb. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
    cluster.add_pod(
        objects.job_name(unschedulable),
        {
            "phase": "Pending",
            "conditions": [
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": msg}
            ],
        },
    )
    cluster.add_pod(
        objects.job_name(pulling),
        {
            "phase": "Pending",
            "conditions": [{"type": "PodScheduled", "status": "True"}],
            "containerStatuses": [
                {
                    "name": "runner",
                    "ready": False,
                    "restartCount": 0,
                    "image": "img",
                    "imageID": "",
                    "state": {
                        "waiting": {
                            "reason": "ImagePullBackOff",
                            "message": 'Back-off pulling image "img:nope"',
                        }
                    },
                }
            ],
        },
    )
    cluster.add_pod(
        objects.job_name(creating),
        {
            "phase": "Pending",
            "containerStatuses": [{"name": "runner", "state": {"waiting": {"reason": "ContainerCreating"}}}],
        },
    )
    for job in (unschedulable, pulling, creating):
        cluster.patch_job(objects.job_name(job), {"status": {"active": 1, "ready": 0}})
    seen = await backend.poll([unschedulable, pulling, creating, nopod])
    assert seen[unschedulable.id].state == "queued"
    assert seen[unschedulable.id].pending_reason == f"Not scheduled (Unschedulable): {msg}"
    assert seen[pulling.id].pending_reason == 'ImagePullBackOff: Back-off pulling image "img:nope"'
    assert "ContainerCreating" in seen[creating.id].pending_reason
    assert seen[nopod.id].pending_reason == "Waiting for the Job's pod to be created."
    # One list of Jobs and one of pods for all four; no Kueue (no queue, nothing suspended).
    assert len(cluster.requests("GET", "/pods")) == 1 and not cluster.requests("GET", "kueue")
    await backend.close()


async def test_why_pending_from_kueue_workload_conditions(cluster, ws):
    cluster.declare_kueue("v1beta1")
    backend = ws.backend(cluster, settings=ws.settings(local_queue="team-a"))
    no_quota, reserved, admitted, evicted, no_workload = await submitted(cluster, ws, backend, n=5)
    for job in (no_quota, reserved, admitted, evicted, no_workload):
        cluster.patch_job(objects.job_name(job), {"spec": {"suspend": True}})  # what Kueue's webhook does
        cluster.give_uid(objects.job_name(job))
    quota_msg = (
        "couldn't assign flavors to pod set main: insufficient unused quota for "
        "nvidia.com/mig-1g.10gb in flavor h100-mig, 1 more needed"
    )
    cluster.add_workload(
        objects.job_name(no_quota),
        [{"type": "QuotaReserved", "status": "False", "reason": "Pending", "message": quota_msg}],
    )
    cluster.add_workload(
        objects.job_name(reserved),
        [
            {
                "type": "QuotaReserved",
                "status": "True",
                "reason": "QuotaReserved",
                "message": "Quota reserved in ClusterQueue gpu",
            },
            {
                "type": "Admitted",
                "status": "False",
                "reason": "Pending",
                "message": "The workload has failed admission checks",
            },
        ],
    )
    cluster.add_workload(
        objects.job_name(admitted),
        [
            {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved", "message": ""},
            {"type": "Admitted", "status": "True", "reason": "Admitted", "message": ""},
        ],
    )
    cluster.add_workload(
        objects.job_name(evicted),
        [
            {"type": "QuotaReserved", "status": "False", "reason": "Pending", "message": "waiting"},
            {
                "type": "Evicted",
                "status": "True",
                "reason": "Preempted",
                "message": "Preempted to accommodate a workload (UID: 1234) due to prioritization in the ClusterQueue",
            },
        ],
    )
    seen = await backend.poll([no_quota, reserved, admitted, evicted, no_workload])
    assert all(o.state == "queued" for o in seen.values())
    assert seen[no_quota.id].pending_reason == (
        f"Waiting in Kueue queue 'team-a': {quota_msg}; its place in the queue is not known: this cluster "
        "does not serve Kueue's visibility API (visibility.kueue.x-k8s.io, Kueue's VisibilityOnDemand feature)."
    )
    assert seen[reserved.id].pending_reason.startswith(
        "Quota reserved in Kueue queue 'team-a'; not admitted yet"
    )
    assert seen[admitted.id].pending_reason == "Admitted by Kueue queue 'team-a'; starting the pod."
    assert seen[evicted.id].pending_reason.startswith(
        "Evicted by Kueue (Preempted): Preempted to accommodate"
    )
    assert (
        seen[no_workload.id].pending_reason
        == "Waiting for Kueue to create the Job's workload (Kueue queue 'team-a')."
    )
    (wl_list,) = cluster.requests("GET", "/workloads")
    assert "/apis/kueue.x-k8s.io/v1beta1/namespaces/jhub/workloads" in str(wl_list.url)
    assert wl_list.params["labelSelector"].startswith("kueue.x-k8s.io/job-uid in (")

    # Discovery is cached: a second poll asks for the workloads, not for the API again.
    def discoveries() -> int:
        return sum(
            1 for r in cluster.requests("GET", "/apis/kueue.x-k8s.io/") if "workloads" not in str(r.url)
        )

    assert discoveries() == 2  # v1beta2 (404), then v1beta1
    await backend.poll([no_quota])
    assert discoveries() == 2 and len(cluster.requests("GET", "/workloads")) == 2
    await backend.close()


async def test_kueue_v1beta2_is_preferred_when_served(cluster, ws):
    cluster.declare_kueue("v1beta1")
    cluster.declare_kueue("v1beta2")
    backend = ws.backend(cluster)
    (job,) = await submitted(cluster, ws, backend, queue="gpu")
    cluster.patch_job(objects.job_name(job), {"spec": {"suspend": True}})
    cluster.add_workload(
        objects.job_name(job),
        [
            {
                "type": "QuotaReserved",
                "status": "False",
                "reason": "Inadmissible",
                "message": "LocalQueue gpu doesn't exist",
            }
        ],
        version="v1beta2",
    )
    seen = await backend.poll([job])
    assert seen[job.id].pending_reason == "Waiting in Kueue queue 'gpu': LocalQueue gpu doesn't exist"
    assert cluster.requests("GET", "/apis/kueue.x-k8s.io/v1beta2/namespaces/jhub/workloads")
    await backend.close()


async def test_a_queue_without_kueue_installed_says_so_plainly(cluster, ws):
    backend = ws.backend(cluster)
    (job,) = await submitted(cluster, ws, backend, queue="gpu")
    seen = await backend.poll([job])
    assert seen[job.id].pending_reason == "Waiting for the Job's pod to be created."
    await backend.close()


async def test_running_and_the_ends(cluster, ws):
    backend = ws.backend(cluster)
    running, by_status, complete, oom, deadline, vanished = await submitted(cluster, ws, backend, n=6)
    cluster.mark_running(objects.job_name(running))
    # The runner's status.json is the final word, whatever the Job says.
    jobfiles.write_json_atomic(
        ws.root / by_status.job_dir / jobfiles.STATUS,
        {
            "state": "failed",
            "reason": "cell_error",
            "message": "ZeroDivisionError: division by zero (cell 2 of the notebook)",
            "exit_code": 1,
            "started_at": 1_790_000_010.0,
            "finished_at": 1_790_000_020.0,
        },
    )
    cluster.mark_ended(objects.job_name(by_status), ok=True)
    cluster.mark_ended(objects.job_name(complete), ok=True)
    cluster.mark_ended(objects.job_name(oom), ok=False, message="Job has reached the specified backoff limit")
    cluster.add_pod(
        objects.job_name(oom),
        {
            "phase": "Failed",
            "containerStatuses": [
                {"name": "runner", "state": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}}
            ],
        },
    )
    cluster.mark_ended(
        objects.job_name(deadline),
        ok=False,
        reason="DeadlineExceeded",
        message="Job was active longer than specified deadline",
    )
    del cluster.k.objects["batch/v1/jobs", NS, objects.job_name(vanished)]
    vanished = vanished.model_copy(update={"backend_job_id": objects.job_name(vanished)})  # as submitted
    seen = await backend.poll([running, by_status, complete, oom, deadline, vanished])
    assert seen[running.id].state == "running" and seen[running.id].started_at
    assert (seen[by_status.id].state, seen[by_status.id].reason) == ("failed", "cell_error")
    assert seen[by_status.id].started_at == 1_790_000_010.0
    # Complete, with no word from the runner: the pod's command exited 0 without running the notebook.
    assert (seen[complete.id].state, seen[complete.id].reason, seen[complete.id].exit_code) == (
        "failed",
        "lost",
        None,
    )
    assert "runner never ran" in seen[complete.id].message
    assert (seen[oom.id].state, seen[oom.id].reason, seen[oom.id].exit_code) == (
        "failed",
        "out_of_memory",
        137,
    )
    assert "out of memory (limit 2Gi)" in seen[oom.id].message
    assert (seen[deadline.id].state, seen[deadline.id].reason) == ("failed", "time_limit")
    assert (seen[vanished.id].state, seen[vanished.id].reason) == ("failed", "lost")
    await backend.close()


async def test_a_started_runner_gets_time_to_write_its_status(cluster, ws):
    backend = ws.backend(cluster, status_grace=60.0)
    (job,) = await submitted(cluster, ws, backend)
    (ws.root / job.job_dir / jobfiles.HEARTBEAT).write_text("node-1 7\n")
    cluster.mark_ended(objects.job_name(job), ok=True)
    assert job.id not in await backend.poll([job])  # left alone: status.json is on its way
    jobfiles.write_json_atomic(
        ws.root / job.job_dir / jobfiles.STATUS,
        {"state": "succeeded", "message": "All cells ran.", "exit_code": 0},
    )
    assert (await backend.poll([job]))[job.id].message == "All cells ran."
    await backend.close()


async def test_a_pod_stopped_from_outside_is_not_a_user_cancel(cluster, ws):
    backend = ws.backend(cluster)
    (job,) = await submitted(cluster, ws, backend, queue="gpu")
    jobfiles.write_json_atomic(
        ws.root / job.job_dir / jobfiles.STATUS,
        {"state": "cancelled", "reason": "cancelled", "message": "Cancelled by the user."},
    )
    cluster.patch_job(objects.job_name(job), {"spec": {"suspend": True}})  # Kueue evicted it
    obs = (await backend.poll([job]))[job.id]
    assert (obs.state, obs.reason) == ("failed", "stopped") and "Kueue suspended the Job" in obs.message
    assert not cluster.job_exists(objects.job_name(job))  # deleted, or Kueue would run the notebook again
    await backend.close()


async def test_cancel_deletes_in_the_background_and_tolerates_404(cluster, ws):
    backend = ws.backend(cluster)
    (job,) = await submitted(cluster, ws, backend)
    await backend.cancel(job)
    (delete,) = cluster.requests("DELETE")
    assert delete.params["propagationPolicy"] == "Background"
    assert str(delete.url).endswith(
        f"/namespaces/{NS}/jobs/{objects.job_name(job)}?propagationPolicy=Background"
    )
    assert not cluster.job_exists(objects.job_name(job))
    await backend.cancel(job)  # already gone: 404 is not an error
    obs = (await backend.poll([job]))[job.id]
    assert (obs.state, obs.reason) == ("cancelled", "cancelled")
    await backend.close()


async def test_409_is_ours_again_or_someone_elses(cluster, ws):
    backend = ws.backend(cluster)
    (job,) = await submitted(cluster, ws, backend)
    assert (await backend.submit(job)).state == "queued"  # a retry of the same submission
    stranger = make_job(ws, "cafe00000001")
    body = objects.as_dict(objects.job_object(stranger, "/x", ws.settings()))
    body["metadata"]["labels"][objects.JOB_ID_LABEL] = "somebody-else"
    cluster.k.objects["batch/v1/jobs", NS, objects.job_name(stranger)] = body
    with pytest.raises(Conflict, match="already exists"):
        await backend.submit(stranger)
    await backend.close()


async def test_pod_log_when_the_folder_has_no_log(cluster, ws):
    backend = ws.backend(cluster)
    (job,) = await submitted(cluster, ws, backend)
    pod = cluster.add_pod(objects.job_name(job), {"phase": "Running"})
    text = '{"looks": "like json"}\n[12:00:01] running analysis.ipynb\nGrüße ✓\n'.encode()
    cluster.serve_log(pod, text)
    chunks, offset = [], 0
    while True:
        chunk = await backend.logs(job.model_copy(update={"state": "succeeded"}), offset, 7)
        assert chunk is not None
        chunks.append(chunk.text)
        if chunk.eof or chunk.next_offset == offset:
            break
        offset = chunk.next_offset
    assert "".join(chunks) == text.decode()
    (req, *_) = cluster.requests("GET", "/log")
    assert req.params["container"] == "runner"
    (ws.root / job.job_dir / jobfiles.LOG).write_text("from the shared folder\n")
    before = len(cluster.requests())
    assert await backend.logs(job.model_copy(update={"state": "running"}), 0, 100) is None  # log.txt
    (ws.root / job.job_dir / jobfiles.LOG).unlink()
    assert await backend.logs(job, 0, 100) is None  # queued: nothing ran, nothing to ask
    assert len(cluster.requests()) == before
    await backend.close()


async def test_api_errors_become_messages(cluster, ws):
    import kmock

    backend = ws.backend(cluster)
    (job,) = await submitted(cluster, ws, backend)
    status = {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "reason": "Forbidden",
        "code": 403,
        "message": 'jobs.batch is forbidden: User "system:serviceaccount:jhub:jupyter" cannot list resource "jobs" in API group "batch" in the namespace "jhub"',
    }
    cluster.k[f"get /apis/batch/v1/namespaces/{NS}/jobs"] << kmock.Response(status=403, payload=status)
    with pytest.raises(Forbidden, match="cannot list resource"):
        await backend.poll([job])
    await backend.close()

    from kubernetes import client

    def unreachable():
        cfg = client.Configuration()
        cfg.host = "http://127.0.0.1:9"  # nothing listens on the discard port
        return client.ApiClient(cfg)

    down = ws.backend(cluster, api_client=unreachable, request_timeout=2.0)
    with pytest.raises(Unavailable, match="cannot be reached"):
        await down.poll([job])
    await down.close()


async def test_mig_profiles_and_gpus_come_from_the_nodes(cluster, ws):
    cluster.add_node(
        "h100-a",
        {
            "cpu": "96",
            "nvidia.com/mig-1g.10gb": "14",
            "nvidia.com/mig-3g.40gb": "4",
            "nvidia.com/mig-1g.10gb.me": "1",
        },
    )
    cluster.add_node("a100-b", {"cpu": "64", "nvidia.com/gpu": "8"})
    cluster.add_node("cpu-c", {"cpu": "32"})
    backend = ws.backend(cluster)
    bind(backend, ws)
    await backend.refresh_cluster()
    info = backend.info()
    assert info.mig_profiles == ["1g.10gb", "1g.10gb+me", "3g.40gb"]
    assert info.limits.max_gpus == 8 and info.supports_gpus and info.kind == "kubernetes"
    backend.validate(
        JobRequest(notebook_path="a.ipynb", backend="kubernetes", resources={"mig_profile": "3g.40gb"})
    )
    with pytest.raises(Conflict, match="MIG profile '2g.20gb' is not offered"):
        backend.validate(
            JobRequest(notebook_path="a.ipynb", backend="kubernetes", resources={"mig_profile": "2g.20gb"})
        )
    with pytest.raises(Conflict, match="at most 8 GPUs"):
        backend.validate(JobRequest(notebook_path="a.ipynb", backend="kubernetes", resources={"gpus": 16}))
    with pytest.raises(NotFound, match="Queue 'gpu' is not offered"):
        backend.validate(JobRequest(notebook_path="a.ipynb", backend="kubernetes", queue="gpu"))
    await backend.close()


async def test_an_unread_cluster_is_read_before_a_mig_submission(cluster, ws):
    cluster.add_node("h100-a", {"nvidia.com/mig-1g.10gb": "7"})
    backend = ws.backend(cluster)
    bind(backend, ws)
    # Not read yet: validate() takes no position, submit() reads the nodes and decides.
    backend.validate(
        JobRequest(notebook_path="a.ipynb", backend="kubernetes", resources={"mig_profile": "7g.80gb"})
    )
    with pytest.raises(InvalidRequest, match="7g.80gb' is not offered by any node"):
        await backend.submit(make_job(ws, "feed00000001", mig_profile="7g.80gb"))
    assert not cluster.jobs()
    await backend.submit(make_job(ws, "feed00000002", mig_profile="1g.10gb"))
    assert len(cluster.jobs()) == 1
    await backend.close()


async def test_a_job_folder_no_pod_can_see_is_refused_before_any_call(cluster, ws, tmp_path: Path):
    backend = ws.backend(
        cluster, settings=ws.settings(volume_mounts=({"name": "home", "mountPath": "/elsewhere"},))
    )
    bind(backend, ws)
    with pytest.raises(Conflict, match="not on a volume the job's pod mounts"):
        await backend.submit(make_job(ws, "beef00000001"))
    assert not cluster.requests()
    await backend.close()


async def test_the_event_loop_keeps_running_during_slow_api_calls(cluster, ws):
    backend = ws.backend(cluster)
    (job,) = await submitted(cluster, ws, backend)
    # The API server takes half a second to answer (a slow call it simulates), then the real list.
    cluster.k[f"get /apis/batch/v1/namespaces/{NS}/jobs"] << (lambda: asyncio.sleep(0.5))
    gaps, stop = [], asyncio.Event()

    async def ticker():
        # This test measures elapsed time: a tick every 10 ms, and the gaps between ticks are the
        # loop's stalls. The sleep is the measuring clock, not a wait for something to happen.
        last = time.monotonic()
        while not stop.is_set():
            await asyncio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    task = asyncio.create_task(ticker())
    t0 = time.monotonic()
    seen = await backend.poll([job])
    took = time.monotonic() - t0
    stop.set()
    await task
    assert seen[job.id].state == "queued" and took >= 0.5
    assert max(gaps) < 0.25, f"the loop stalled for {max(gaps):.2f} s"
    await backend.close()


async def test_where_jobs_stand_in_kueue_from_its_visibility_api(cluster, ws):
    cluster.declare_kueue("v1beta1")
    backend = ws.backend(cluster, settings=ws.settings(local_queue="team-a"))
    first, second = await submitted(cluster, ws, backend, n=2)
    pending = [{"type": "QuotaReserved", "status": "False", "reason": "Pending", "message": "no quota"}]
    for job in (first, second):
        name = objects.job_name(job)
        cluster.patch_job(name, {"spec": {"suspend": True}})
        cluster.give_uid(name)
        cluster.add_workload(name, pending)
    # Someone else's workload is ahead of both in the LocalQueue; the ClusterQueue holds more.
    cluster.serve_pending(
        "team-a",
        [
            {"metadata": {"name": "job-other-9z9z9", "namespace": "jhub"}, "priority": 10, "localQueueName": "team-a",
             "positionInClusterQueue": 3, "positionInLocalQueue": 0},
            {"metadata": {"name": cluster.workload_name(objects.job_name(first)), "namespace": "jhub"}, "priority": 0,
             "localQueueName": "team-a", "positionInClusterQueue": 5, "positionInLocalQueue": 1},
            {"metadata": {"name": cluster.workload_name(objects.job_name(second)), "namespace": "jhub"}, "priority": 0,
             "localQueueName": "team-a", "positionInClusterQueue": 6, "positionInLocalQueue": 2},
        ],
    )  # fmt: skip
    seen = await backend.poll([first, second])
    assert (seen[first.id].queue_position, seen[first.id].queue_name) == (2, "team-a")
    assert seen[second.id].queue_position == 3
    assert (
        seen[first.id].pending_reason
        == "Waiting in Kueue queue 'team-a': no quota (number 6 in its ClusterQueue)"
    )
    (call,) = cluster.requests("GET", "/pendingworkloads")
    assert (
        "/apis/visibility.kueue.x-k8s.io/v1beta1/namespaces/jhub/localqueues/team-a/pendingworkloads"
        in str(call.url)
    )
    await backend.close()


async def held_for_quota(cluster, ws):
    """A backend on queue 'team-a' and its one job, which Kueue holds for want of quota."""
    backend = ws.backend(cluster, settings=ws.settings(local_queue="team-a"))
    (job,) = await submitted(cluster, ws, backend, n=1)
    cluster.patch_job(objects.job_name(job), {"spec": {"suspend": True}})
    cluster.give_uid(objects.job_name(job))
    cluster.add_workload(
        objects.job_name(job), [{"type": "QuotaReserved", "status": "False", "message": "no quota"}]
    )
    return backend, job


async def test_without_the_visibility_api_positions_are_unknown(cluster, ws):
    cluster.declare_kueue("v1beta1")
    backend, job = await held_for_quota(cluster, ws)
    seen = await backend.poll([job])
    assert seen[job.id].state == "queued" and seen[job.id].queue_position is None
    assert seen[job.id].pending_reason == (
        "Waiting in Kueue queue 'team-a': no quota; its place in the queue is not known: this cluster does "
        "not serve Kueue's visibility API (visibility.kueue.x-k8s.io, Kueue's VisibilityOnDemand feature)."
    )
    asked = len(cluster.requests("GET", "pendingworkloads"))
    assert asked == 2  # both versions
    assert (await backend.poll([job]))[job.id].pending_reason == seen[job.id].pending_reason
    assert len(cluster.requests("GET", "pendingworkloads")) == asked  # not asked again for a while
    await backend.close()


async def test_a_role_that_may_not_read_the_visibility_api_is_named(cluster, ws):
    import kmock

    cluster.declare_kueue("v1beta1")
    path = "/apis/visibility.kueue.x-k8s.io/v1beta1/namespaces/jhub/localqueues/team-a/pendingworkloads"
    cluster.k[f"get {path}"] << kmock.Response(status=403, payload=b'{"kind":"Status","code":403}')
    backend, job = await held_for_quota(cluster, ws)
    reason = (await backend.poll([job]))[job.id].pending_reason
    assert "the server's Role may not read Kueue's pending workloads" in reason
    await backend.close()


async def test_what_can_start_now_from_the_nodes_and_pods(cluster, ws):
    cluster.add_node(
        "gpu-1",
        {"nvidia.com/mig-1g.10gb": "7", "nvidia.com/mig-3g.40gb": "1", "cpu": "64"},
        labels={"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
    )
    cluster.k.objects["v1/pods", "other", "someone-else"] = {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "someone-else", "namespace": "other"},
        "spec": {"nodeName": "gpu-1", "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/mig-1g.10gb": "2"}}}]},
        "status": {"phase": "Running"},
    }  # fmt: skip
    backend = ws.backend(cluster)
    seen = await backend.capacity()
    rows = {(r.profile, r.gpu_model): (r.total, r.used, r.free) for r in seen.rows}
    assert seen.available and rows == {
        ("1g.10gb", "NVIDIA-H100-80GB-HBM3"): (7, 2, 5),
        ("3g.40gb", "NVIDIA-H100-80GB-HBM3"): (1, 0, 1),
    }
    await backend.close()
