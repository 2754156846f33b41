"""What a probe of the real control plane found broken, proven fixed on it: a sweep whose pods exit 0
without running their runners ends failed (not queued for ever), a pipeline never goes on after a step
that did not run, and no job is lost to a refresh between saving its record and creating its Job. (A
single job that never ran, and delete, are in test_jobs.py; a schedule's pod that made no run is in
test_schedule.py.)"""

from __future__ import annotations

from helpers import wait_for_sweep, wait_until, write_notebook

from jupyter_gpu_env.backends.kubernetes import objects
from jupyter_gpu_env.pipelines.service import PipelineService


def _complete(real, name: str) -> bool:
    (job,) = [j for j in real.jobs() if j["metadata"]["name"] == name]
    conditions = (job.get("status") or {}).get("conditions") or []
    return any(c["type"] == "Complete" and c["status"] == "True" for c in conditions)


async def test_a_sweep_whose_pods_never_ran_their_runners_ends_failed(real):
    write_notebook(real.root, "p.ipynb", [], parameters="alpha = 1")
    svc = real.service(
        real.backend(settings=real.settings(python="true"))
    )  # the image's "python" runs nothing
    group = await svc.submit(
        {"notebook_path": "p.ipynb", "backend": "kubernetes", "sweep": {"alpha": [1, 2]}}
    )
    await wait_until(lambda: _complete(real, group.backend_job_id), within=120, every=0.5,
                     what="the Indexed Job Complete")  # fmt: skip
    group = await wait_for_sweep(svc, group.id, within=60, every=1)
    runs = (await svc.list(sweep=group.id)).items
    assert group.state == "failed", [(r.state, r.message) for r in runs]
    assert all(r.reason == "lost" and "runner never ran" in r.message for r in runs), [
        r.message for r in runs
    ]


async def test_a_pipeline_stops_after_a_step_that_did_not_run(real):
    write_notebook(real.root, "prepare.ipynb", ["pass"], results='{"rows": 1}')
    write_notebook(real.root, "check.ipynb", ["pass"], parameters="upstream = {}")
    pipes = PipelineService(real.service(real.backend(settings=real.settings(python="true"))))
    made = await pipes.submit({"name": "two", "nodes": [
        {"id": "prepare", "notebook_path": "prepare.ipynb", "backend": "kubernetes"},
        {"id": "check", "notebook_path": "check.ipynb", "backend": "kubernetes", "after": ["prepare"]},
    ]})  # fmt: skip
    jobs = {j.pipeline_node: j for j in (await pipes.jobs.list(pipeline=made.id, limit=10)).items}
    root, child = objects.job_name(jobs["prepare"]), objects.job_name(jobs["check"])
    await wait_until(lambda: _complete(real, root), within=120, every=0.5, what=f"{root} Complete")

    done = await real.pipeline_ended(pipes, made.id, within=120)
    assert {n.id: n.state for n in done.nodes} == {"prepare": "failed", "check": "skipped"}
    assert child not in {j["metadata"]["name"] for j in real.jobs()}  # its Job was never created


async def test_no_submission_is_lost_to_a_refresh_before_its_job_exists(real):
    nb = real.notebook("many.ipynb", ["import time; time.sleep(30)"])
    backend = real.backend()
    svc = real.service(backend)
    create = backend.submit

    async def refreshed_first(job):  # another client's refresh lands between the record and its Job
        await svc.refresh()
        return await create(job)

    backend.submit = refreshed_first
    made = [await svc.submit({"notebook_path": nb, "backend": "kubernetes"}) for _ in range(3)]
    await svc.refresh()
    after = [await svc.get(j.id) for j in made]
    assert [j.state for j in after] == ["queued"] * 3 or all(
        j.state in ("queued", "running") for j in after
    ), [(j.state, j.message) for j in after]
    assert {objects.job_name(j) for j in after} <= {j["metadata"]["name"] for j in real.jobs()}
    for job in after:  # and cancel reaches each of them
        assert (await svc.cancel(job.id)).state == "cancelled"
    await real.wait_gone(within=90)
