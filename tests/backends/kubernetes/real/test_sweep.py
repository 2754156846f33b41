"""A sweep on the real cluster: one Indexed Job (completionMode Indexed, backoffLimitPerIndex 0) that the
Job controller runs index by index, each pod finding its run by ``JOB_COMPLETION_INDEX``; the results
gathered from the runs' notebooks."""

from __future__ import annotations

from helpers import wait_for_sweep, wait_until, write_notebook

from .cluster import NODE


async def test_a_sweep_is_an_indexed_job_whose_pods_run_each_run(real):
    half = "import os\n{'half': alpha / 2, 'run': os.environ['JUPYTER_GPU_ENV_JOB_ID']}"
    write_notebook(real.root, "half.ipynb", [], parameters="alpha = 1", results=half)
    svc = real.service()
    group = await svc.submit(
        {
            "notebook_path": "half.ipynb",
            "backend": "kubernetes",
            "sweep": {"alpha": [2, 4, 6]},
            "max_concurrent": 2,
        }
    )
    (made,) = real.jobs()
    assert made["metadata"]["name"] == group.backend_job_id
    spec = made["spec"]
    assert (spec["completionMode"], spec["completions"], spec["parallelism"], spec["backoffLimitPerIndex"]) == (
        "Indexed", 3, 2, 0)  # fmt: skip

    def complete():
        status = real.jobs()[0].get("status") or {}
        return any(c["type"] == "Complete" and c["status"] == "True" for c in status.get("conditions") or [])

    await wait_until(complete, within=300, every=0.5, what="the Indexed Job Complete")
    assert real.jobs()[0]["status"]["completedIndexes"] == "0-2"
    group = await wait_for_sweep(svc, group.id, within=60, every=1)
    runs = (await svc.list(sweep=group.id)).items
    assert group.state == "succeeded", [(r.state, r.message) for r in runs]
    pods = real.pods(f"batch.kubernetes.io/job-name={group.backend_job_id}")
    assert sorted(p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] for p in pods) == [
        "0", "1", "2"]  # fmt: skip
    assert {p["spec"]["nodeName"] for p in pods} == {NODE}
    table = await svc.sweeps.results(group.id)
    assert [(r.parameters["alpha"], r.values) for r in table.rows] == [
        (a, {"half": a / 2, "run": r.job_id}) for a, r in zip((2, 4, 6), table.rows, strict=True)
    ]
