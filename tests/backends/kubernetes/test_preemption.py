"""Opportunistic jobs stopped for other work on Kubernetes, through kmock: Kueue evicts the Workload (its
conditions exactly as Kueue writes them: pkg/workload/evict, pkg/controller/jobframework/reconciler.go,
pkg/workload/workload.go's SetQuotaReservation), suspends the Job and its pod goes; or the scheduler
preempts the pod (DisruptionTarget) and the Job's podFailurePolicy makes a new one. The record goes
back to queued with the attempt, then runs again and ends; the real runner, started from the Job's
own container command, resumes the notebook."""

from __future__ import annotations

import asyncio
import signal
import time

from helpers import printed, wait_until, write_notebook

from jupyter_gpu_env.backends.base import Observation
from jupyter_gpu_env.backends.kubernetes import objects, status
from jupyter_gpu_env.contracts import jobfiles
from jupyter_gpu_env.jobs.runner.runner import EXIT_PREEMPTED

PRIORITIES = {"opportunistic": {"priority_class": "batch-low", "workload_priority_class": "opportunistic"}}
PARAMETERS = "checkpoint_dir = None\nresumed = False"
CELLS = [
    "import os, pathlib\nprint('resumed:', resumed, 'attempt', os.environ['GPU_ENV_ATTEMPT'])\n"
    "marks = pathlib.Path(checkpoint_dir)",
    "import time\n(marks / 'started').touch()\nwhile not (marks / 'go').exists():\n    time.sleep(0.05)",
    "print('done')",
]
PREEMPTED = (
    "Preempted to accommodate a workload (UID: 5c023c28-8533-4927-b266-56bea5e310c1, JobUID: "
    "0f4e5b1d-3b7c-4c52-9d0e-6a1f2f8b9c10) due to prioritization in the ClusterQueue; preemptor path: "
    "/gpu-cluster; preemptee path: /gpu-cluster"
)


def admitted(cq: str = "gpu-cluster") -> list[dict]:
    return [
        {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved",
         "message": f"Quota reserved in ClusterQueue {cq}"},
        {"type": "Admitted", "status": "True", "reason": "Admitted", "message": "The workload is admitted"},
    ]  # fmt: skip


def evicted_and_requeued() -> list[dict]:
    """After the preemption (Evicted and Preempted) and once the Job's pods are gone (Requeued, the
    reservation and admission withdrawn), as Kueue v1beta1 leaves a preempted Workload."""
    return [
        {"type": "QuotaReserved", "status": "False", "reason": "Pending", "message": PREEMPTED},
        {"type": "Admitted", "status": "False", "reason": "NoReservation", "message": "The workload has no reservation"},
        {"type": "Evicted", "status": "True", "reason": "Preempted", "message": PREEMPTED},
        {"type": "Preempted", "status": "True", "reason": "InClusterQueue", "message": PREEMPTED},
        {"type": "Requeued", "status": "True", "reason": "Preempted", "message": PREEMPTED},
    ]  # fmt: skip


def readmitted() -> list[dict]:
    """Admitted again: SetQuotaReservation resets Evicted and Preempted to False, 'Previously: ...'."""
    return [
        *admitted(),
        {"type": "Evicted", "status": "False", "reason": "QuotaReserved", "message": f"Previously: {PREEMPTED}"},
        {"type": "Preempted", "status": "False", "reason": "QuotaReserved", "message": f"Previously: {PREEMPTED}"},
        {"type": "Requeued", "status": "True", "reason": "Preempted", "message": PREEMPTED},
    ]  # fmt: skip


async def _started(ws, job) -> None:
    marks = ws.root / job.job_dir / jobfiles.CHECKPOINT
    await wait_until(lambda: (marks / "started").exists(), within=60, what="the notebook's second cell")
    (marks / "started").unlink()


async def test_an_opportunistic_job_evicted_by_kueue_is_requeued_readmitted_and_resumed(cluster, ws):
    cluster.declare_kueue("v1beta1")
    backend = ws.backend(cluster, settings=ws.settings(local_queue="team-a", priorities=PRIORITIES))
    svc = ws.service(backend)
    nb = write_notebook(ws.root, "train.ipynb", CELLS, parameters=PARAMETERS)
    try:
        job = await svc.submit({"notebook_path": nb, "backend": "kubernetes", "priority": "opportunistic"})
        name = objects.job_name(job)
        assert cluster.job(name)["metadata"]["labels"][objects.WORKLOAD_PRIORITY_LABEL] == "opportunistic"
        cluster.give_uid(name)
        cluster.add_workload(name, admitted())
        pod = await cluster.start_pod(name)  # admitted: Kueue unsuspends it, its pod runs
        await _started(ws, job)
        await svc.refresh()
        assert (await svc.get(job.id)).state == "running"

        # Kueue preempts it for a workload of higher priority: the Job suspended, its pod deleted
        # (SIGTERM to the runner, which saves the notebook and records the attempt), then requeued.
        cluster.patch_job(name, {"spec": {"suspend": True}, "status": {"active": 0, "ready": 0}})
        pod.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(pod.wait(), 30) == EXIT_PREEMPTED
        cluster.add_workload(name, evicted_and_requeued())
        await svc.refresh()
        job = await svc.get(job.id)
        assert job.state == "queued", job.message
        assert job.pending_reason.startswith(f"Evicted by Kueue (Preempted): {PREEMPTED}")
        assert (
            "waiting in Kueue queue 'team-a' to be admitted again; its place in the queue is not known"
            in job.pending_reason
        )
        (first,) = job.attempts
        # Cells done: the parameters cell, the injected one and the first.
        assert (first.number, first.reason, first.cells_done) == (1, "evicted", 3)
        assert job.message.startswith("Evicted; requeued") and job.started_at is not None

        # Readmitted: Kueue unsuspends the Job; its new pod waits, then runs the notebook again.
        cluster.add_workload(name, readmitted())
        cluster.patch_job(name, {"spec": {"suspend": False}, "status": {"active": 1, "ready": 0}})
        cluster.add_pod(name, {"phase": "Pending", "containerStatuses": [
            {"name": "runner", "state": {"waiting": {"reason": "ContainerCreating"}}}]})  # fmt: skip
        await svc.refresh()
        job = await svc.get(job.id)
        assert job.state == "queued" and "ContainerCreating" in job.pending_reason
        pod = await cluster.start_pod(name)
        await _started(ws, job)
        await svc.refresh()
        job = await svc.get(job.id)
        assert job.state == "running" and "resumed" in job.message and len(job.attempts) == 1
        (ws.root / job.job_dir / jobfiles.CHECKPOINT / "go").touch()
        assert await asyncio.wait_for(pod.wait(), 60) == 0
        cluster.mark_ended(name, ok=True)
        await svc.refresh()
        job = await svc.get(job.id)
        assert job.state == "succeeded", job.message
        assert [(a.number, a.reason) for a in job.attempts] == [(1, "evicted")]
        out = printed(ws.root / job.output_path)
        assert "resumed: True attempt 2" in out and "done" in out
        assert "resumed: False attempt 1" in printed(
            (ws.root / job.output_path).with_suffix(".attempt-1.ipynb")
        )
    finally:
        await svc.stop()


async def test_a_pod_preempted_by_the_scheduler_is_replaced_and_the_job_requeued(cluster, ws):
    backend = ws.backend(cluster, settings=ws.settings(priorities=PRIORITIES))
    svc = ws.service(backend)
    nb = write_notebook(ws.root, "train.ipynb", CELLS, parameters=PARAMETERS)
    try:
        job = await svc.submit({"notebook_path": nb, "backend": "kubernetes", "priority": "opportunistic"})
        name = objects.job_name(job)
        pod = await cluster.start_pod(name)
        await _started(ws, job)
        await svc.refresh()
        assert (await svc.get(job.id)).state == "running"

        # The scheduler preempts the pod for one of higher priority: DisruptionTarget, SIGTERM; the
        # runner exits 3 and the podFailurePolicy ignores the failure: a new pod waits for a node.
        stopped = cluster.add_pod(name, {
            "phase": "Failed",
            "conditions": [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
                            "message": "default-scheduler: preempting to accommodate a higher priority pod"}],
            "containerStatuses": [{"name": "runner", "state": {"terminated": {"exitCode": 3, "reason": "Error"}}}],
        }, suffix="first", created=time.time() - 60)  # fmt: skip
        pod.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(pod.wait(), 30) == EXIT_PREEMPTED
        cluster.patch_job(name, {"status": {"active": 1, "ready": 0}})
        cluster.add_pod(name, {"phase": "Pending", "conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
             "message": "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."}]}, suffix="second")  # fmt: skip
        await svc.refresh()
        job = await svc.get(job.id)
        assert job.state == "queued", job.message
        assert job.pending_reason == (
            f"Pod {stopped} was preempted by the scheduler for a pod of higher priority (default-scheduler: "
            "preempting to accommodate a higher priority pod); requeued, the notebook resumes from its "
            "checkpoint. Not scheduled (Unschedulable): 0/2 nodes are available: 2 Insufficient nvidia.com/gpu."
        )
        assert [(a.number, a.reason, a.cells_done) for a in job.attempts] == [(1, "preempted", 3)]

        pod = await cluster.start_pod(name)  # a node frees up: the replacement runs, and resumes
        await _started(ws, job)
        (ws.root / job.job_dir / jobfiles.CHECKPOINT / "go").touch()
        assert await asyncio.wait_for(pod.wait(), 60) == 0
        cluster.mark_ended(name, ok=True)
        await svc.refresh()
        job = await svc.get(job.id)
        assert job.state == "succeeded" and [a.reason for a in job.attempts] == ["preempted"]
        assert "resumed: True attempt 2" in printed(ws.root / job.output_path)
    finally:
        await svc.stop()


async def test_a_normal_jobs_pod_stopped_from_outside_is_not_requeued(cluster, ws):
    backend = ws.backend(cluster, settings=ws.settings(priorities=PRIORITIES))
    svc = ws.service(backend)
    try:
        job = await svc.submit({"notebook_path": ws.notebook("a.ipynb", ["1"]), "backend": "kubernetes"})
        name = objects.job_name(job)
        assert "podFailurePolicy" not in cluster.job(name)["spec"]  # never re-run behind the user's back
        cluster.mark_running(name)
        (ws.root / job.job_dir / jobfiles.HEARTBEAT).write_text("pod-1 7\n")
        await svc.refresh()
        assert (await svc.get(job.id)).state == "running"
        # Preempted all the same: the pod gone, the Job failed (backoffLimit 0); nothing requeues it.
        cluster.add_pod(name, {
            "phase": "Failed",
            "conditions": [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
                            "message": "default-scheduler: preempting to accommodate a higher priority pod"}],
            "containerStatuses": [{"name": "runner", "state": {"terminated": {"exitCode": 143, "reason": "Error"}}}],
        })  # fmt: skip
        cluster.mark_ended(name, ok=False)
        await svc.refresh()
        job = await svc.get(job.id)
        assert (job.state, job.reason, job.attempts) == ("failed", "evicted", [])
    finally:
        await svc.stop()


def _workload(conditions: list[dict]) -> dict:
    return {"status": {"conditions": conditions}}


def _pod(name: str, phase: str, *, disruption: str | None = None, code: int | None = None) -> dict:
    st: dict = {"phase": phase}
    if disruption:
        st["conditions"] = [{"type": "DisruptionTarget", "status": "True", "reason": disruption}]
    if code is not None:
        st["containerStatuses"] = [{"name": "runner", "state": {"terminated": {"exitCode": code}}}]
    return {"metadata": {"name": name}, "status": st}


def test_kueues_evictions_and_the_pods_disruptions_read_as_requeues():
    assert status.kueue_requeue(_workload(evicted_and_requeued())) == "evicted"
    assert status.kueue_requeue(_workload(readmitted())) is None  # Evicted reset to False
    assert status.kueue_requeue(_workload(admitted())) is None and status.kueue_requeue(None) is None
    lost = [{"type": "Evicted", "status": "True", "reason": "NodeFailures", "message": "node gpu-2 failed"}]
    assert status.kueue_requeue(_workload(lost)) == "node_lost"
    # Deactivated ("InactiveWorkload" before Kueue 0.9): not requeued by Kueue itself; the user is told.
    for reason in ("InactiveWorkload", "Deactivated", "DeactivatedDueToRequeuingLimitExceeded"):
        off = [
            {"type": "Evicted", "status": "True", "reason": reason, "message": "The workload is deactivated"}
        ]
        assert status.kueue_requeue(_workload(off)) == "evicted"
        assert "until an administrator activates it again" in status.workload_reason(_workload(off), "team-a")

    cases = {
        "PreemptionByScheduler": "preempted",
        "EvictionByEvictionAPI": "evicted",
        "TerminationByKubelet": "evicted",
        "DeletionByTaintManager": "node_lost",
        "DeletionByPodGC": "node_lost",
        "SomethingNew": "preempted",
    }
    for reason, requeued in cases.items():
        assert status.stopped_for_other_work(_pod("p", "Failed", disruption=reason))[0] == requeued
    assert status.stopped_for_other_work(_pod("p", "Failed", code=EXIT_PREEMPTED))[0] == "preempted"
    assert status.stopped_for_other_work(_pod("p", "Failed", code=1)) is None  # a real failure

    running = Observation(state="running", backend_job_id="nb-x")
    # The replacement runs: running; none stopped and none pending: what the heartbeat said stands.
    assert (
        status.replacement_observation(running, [_pod("b", "Running"), _pod("a", "Failed", code=3)])
        == running
    )
    assert status.replacement_observation(running, [_pod("a", "Failed", code=1)]) == running
    # Stopped, no replacement yet: requeued, waiting for it.
    seen = status.replacement_observation(running, [_pod("a", "Failed", disruption="DeletionByPodGC")])
    assert (seen.state, seen.requeued) == ("queued", "node_lost")
    assert seen.pending_reason.endswith("Waiting for the pod that replaces it.")


def test_a_cronjobs_new_pod_of_a_stopped_opportunistic_run_resumes_that_run(tmp_path):
    from helpers import job_record

    from jupyter_gpu_env.backends.kubernetes.schedules.tick import _stopped_run
    from jupyter_gpu_env.contracts.schedules import folder as files

    where = tmp_path / "schedule"

    def run(name: str, job_name: str, priority: str, ended: bool = False) -> None:
        path = where / files.RUNS / name
        path.mkdir(parents=True)
        files.write_record(path, job_record(name[-12:], backend="kubernetes", backend_job_id=job_name,
                                            priority=priority))  # fmt: skip
        if ended:
            (path / jobfiles.STATUS).write_text('{"state": "succeeded"}')

    run("20260101T0600Z-aaaaaaaaaaa1", "nightly-29400000", "opportunistic", ended=True)
    run("20260102T0600Z-aaaaaaaaaaa2", "nightly-29401440", "opportunistic")
    run("20260103T0600Z-aaaaaaaaaaa3", "nightly-29402880", "normal")
    assert _stopped_run(where, "nightly-29401440") == where / files.RUNS / "20260102T0600Z-aaaaaaaaaaa2"
    assert _stopped_run(where, "nightly-29400000") is None  # it ended: a new run, as before
    assert _stopped_run(where, "nightly-29402880") is None  # a normal run is never resumed
    assert _stopped_run(where, "nightly-29404320") is None  # a Job's first pod
