"""Pipelines on the real single-node SLURM: submitted whole in one go, each node after its parents as
SLURM's own dependency, so they run with no server moving them on (the pipelines loop is never run
here; the service's records are only refreshed to be read)."""

from __future__ import annotations

from helpers import wait_until
from pipeline_notebooks import diamond

from jupyter_gpu_env.jobs.sweeps.results import gather
from jupyter_gpu_env.pipelines.service import PipelineService

from .test_dependencies import squeue

ENDED = ("succeeded", "failed", "cancelled")


async def _ended(slurm, pipes: PipelineService, pipeline_id: str):
    async def done():
        await pipes.jobs.refresh()  # the records follow SLURM; nothing hands a node over
        got = await pipes.get(pipeline_id)
        return got if got.state in ENDED else None

    return await wait_until(done, within=120, what=f"pipeline {pipeline_id} ending in SLURM")


def _sbatches(slurm) -> int:
    return sum(1 for argv in slurm.commands if argv and argv[0].endswith("sbatch"))


async def test_a_diamond_is_one_sbatch_per_node_with_dependencies_slurm_shows_and_honours(
    slurm, slurm_service, gate
):
    svc = slurm_service()
    pipes = PipelineService(svc)
    before = _sbatches(slurm)
    made = await pipes.submit(diamond(slurm.root, gate=gate, backend="slurm"))
    assert _sbatches(slurm) - before == 4  # prepare, the sweep as one array, check, report
    by = {n.id: n for n in made.nodes}
    jobs = {j.pipeline_node: j for j in (await svc.list(pipeline=made.id, limit=50)).items}
    assert not any(j.waiting_for for j in jobs.values())  # all SLURM's now, none held by us
    prepare, check, report = (jobs[k].backend_job_id for k in ("prepare", "check", "report"))
    array = jobs["train"].backend_job_id.split("_")[0]
    shown = await squeue(slurm, prepare, check, report, array)
    assert shown[check][1:] == ("Dependency", f"afterok:{prepare}(unfulfilled)")
    assert shown[f"{array}_0"][2] == f"afterok:{prepare}(unfulfilled)"
    assert shown[report][2] == f"afterok:{array}_*(unfulfilled),afterok:{check}(unfulfilled)"
    assert by["report"].state == "queued" and by["train"].state == "queued"
    gate.touch()

    done = await _ended(slurm, pipes, made.id)
    assert done.state == "succeeded", [(n.id, n.state, n.message) for n in done.nodes]
    report_job = await svc.get(done.nodes[3].job_id)
    values = gather([slurm.root / report_job.output_path], 1 << 16, 1 << 20)[0].values
    assert values["losses"] == [30, 60, 90] and values["factors"] == [1, 2, 3] and values["checked"] == 31


async def test_a_failing_node_leaves_its_descendants_skipped_and_nothing_pending(slurm, slurm_service):
    svc = slurm_service()
    pipes = PipelineService(svc)
    made = await pipes.submit(diamond(slurm.root, fail_prepare=True, backend="slurm"))
    done = await _ended(slurm, pipes, made.id)
    by = {n.id: n for n in done.nodes}
    assert done.state == "failed" and by["prepare"].state == "failed"
    assert [by[k].state for k in ("train", "check", "report")] == ["skipped"] * 3
    assert by["check"].message == "Skipped: upstream 'prepare' failed."
    ids = [j.backend_job_id.split("_")[0] for j in (await svc.list(pipeline=made.id, limit=50)).items]
    assert await squeue(slurm, *set(ids), states="PENDING") == {}


async def test_cancel_leaves_nothing_queued_in_slurm(slurm, slurm_service):
    svc = slurm_service()
    pipes = PipelineService(svc)
    request = diamond(slurm.root, backend="slurm")
    slurm.notebook("slow.ipynb", ["import time; time.sleep(120)"])
    request["nodes"][0].update(notebook_path="slow.ipynb", parameters={})
    made = await pipes.submit(request)
    cancelled = await pipes.cancel(made.id)
    assert cancelled.state == "cancelled"
    assert {n.state for n in cancelled.nodes} <= {"cancelled", "skipped"}
    ids = {j.backend_job_id.split("_")[0] for j in (await svc.list(pipeline=made.id, limit=50)).items}
    assert len(ids) == 4
    assert await squeue(slurm, *ids, states="PENDING") == {}  # nothing left waiting in SLURM
