"""A pipeline on the real cluster: the root node's Job is created at submission, the next node's is
staged; when the root's runner ends, its pod carries the pipeline on with the pipeline service account's
projected token (the guide's Role: create Jobs), creating the child's Job before the server does
anything; the child receives the root's results."""

from __future__ import annotations

from helpers import wait_until, write_notebook

from jupyter_gpu_env.backends.kubernetes import objects
from jupyter_gpu_env.jobs.sweeps.results import gather
from jupyter_gpu_env.pipelines.service import PipelineService


async def test_the_roots_pod_creates_the_next_step_and_the_pipeline_succeeds(real):
    write_notebook(real.root, "prepare.ipynb", ["pass"], parameters="size = 3", results='{"rows": size * 10}')
    write_notebook(real.root, "check.ipynb", ['checked = upstream["prepare"]["results"]["rows"] + 1'],
                   parameters="upstream = {}", results='{"checked": checked}')  # fmt: skip
    pipes = PipelineService(real.service())
    made = await pipes.submit({"name": "two", "nodes": [
        {"id": "prepare", "notebook_path": "prepare.ipynb", "backend": "kubernetes"},
        {"id": "check", "notebook_path": "check.ipynb", "backend": "kubernetes", "after": ["prepare"]},
    ]})  # fmt: skip
    jobs = {j.pipeline_node: j for j in (await pipes.jobs.list(pipeline=made.id, limit=10)).items}
    root, child = objects.job_name(jobs["prepare"]), objects.job_name(jobs["check"])
    assert [j["metadata"]["name"] for j in real.jobs()] == [root]
    pod = real.pod_of(root) if real.pods() else None
    assert pod is None or pod["spec"]["serviceAccountName"] == real.tenancy.pipeline_account

    # No server round: only the root's pod can create the child's Job.
    await wait_until(lambda: child in {j["metadata"]["name"] for j in real.jobs()}, within=240, every=1,
                     what=lambda: f"the root's pod creating {child} (Jobs: {[j['metadata']['name'] for j in real.jobs()]})")  # fmt: skip
    assert real.pod_of(root)["spec"]["serviceAccountName"] == real.tenancy.pipeline_account

    done = await real.pipeline_ended(pipes, made.id, within=240)
    assert done.state == "succeeded", [(n.id, n.state) for n in done.nodes]
    check = await pipes.jobs.get(jobs["check"].id)
    assert gather([real.root / check.output_path], 1 << 16, 1 << 20)[0].values == {"checked": 31}
