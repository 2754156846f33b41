"""An opportunistic job on the real cluster: Kueue evicts its Workload for a normal job that needs the
GPUs (``withinClusterQueue: LowerPriority``, the guide's WorkloadPriorityClass), suspends its Job so the
node agent stops its pod with SIGTERM (the runner saves the notebook, records the attempt, exits 3, which
the Job's podFailurePolicy ignores), admits the normal job, then readmits the opportunistic one, whose
new pod resumes the notebook."""

from __future__ import annotations

from helpers import ended, printed, wait_for_job, wait_until

from jupyter_gpu_env.backends.kubernetes import objects
from jupyter_gpu_env.contracts import jobfiles

PARAMETERS = "checkpoint_dir = None\nresumed = False"
CELLS = [
    "import os, pathlib\nprint('resumed:', resumed, 'attempt', os.environ['GPU_ENV_ATTEMPT'])\n"
    "marks = pathlib.Path(checkpoint_dir)",
    "import time\n(marks / 'started').touch()\nwhile not (marks / 'go').exists():\n    time.sleep(0.1)",
    "print('done')",
]


async def test_an_opportunistic_job_is_evicted_by_kueue_for_a_normal_one_and_resumed(real):
    svc = real.service()
    nb = real.notebook("train.ipynb", CELLS, parameters=PARAMETERS)
    gpus = {"gpus": 2}  # the ClusterQueue's whole GPU quota
    job = await svc.submit(
        {"notebook_path": nb, "backend": "kubernetes", "priority": "opportunistic", "resources": gpus}
    )
    name = objects.job_name(job)
    marks = real.root / job.job_dir / jobfiles.CHECKPOINT
    (made,) = real.jobs()
    assert made["metadata"]["labels"][objects.WORKLOAD_PRIORITY_LABEL] == "opportunistic"
    await wait_until(
        lambda: (marks / "started").exists(), within=180, every=0.5, what="the first attempt running"
    )
    (marks / "started").unlink()
    first_pod = real.pod_of(name)["metadata"]["name"]

    urgent = real.notebook("urgent.ipynb", ["print('urgent ran')"])
    normal = await svc.submit({"notebook_path": urgent, "backend": "kubernetes", "resources": gpus})

    async def evicted():
        await svc.refresh()
        got = await svc.get(job.id)
        return got if got.attempts else None

    job = await wait_until(evicted, within=120, every=1, what=lambda: f"Kueue evicting {name}")
    (first,) = job.attempts
    assert first.reason == "evicted", first
    normal = await wait_for_job(svc, normal.id, ended, within=180, every=1)
    assert normal.state == "succeeded", normal.message

    # Readmitted once the normal job is done: a new pod of the same Job resumes the notebook.
    await wait_until(
        lambda: (marks / "started").exists(), within=180, every=0.5, what="the second attempt running"
    )
    assert real.pod_of(name)["metadata"]["name"] != first_pod
    (marks / "go").touch()
    job = await wait_for_job(svc, job.id, ended, within=120, every=1)
    assert job.state == "succeeded", job.message
    assert [(a.number, a.reason) for a in job.attempts] == [(1, "evicted")]
    out = printed(real.root / job.output_path)
    assert "resumed: True attempt 2" in out and "done" in out
    assert "resumed: False attempt 1" in printed(
        (real.root / job.output_path).with_suffix(".attempt-1.ipynb")
    )
    conds = {c["type"]: c for w in real.workloads() if w["metadata"]["name"].startswith(f"job-{name}")
             for c in w["status"].get("conditions") or []}  # fmt: skip
    # Kueue's own record: preempted within the ClusterQueue (now "Previously: ...", readmitted since)
    assert "due to prioritization in the ClusterQueue" in conds["Preempted"]["message"], conds.get(
        "Preempted"
    )
