"""Pipelines on the local backend: real notebooks, store, runner and papermill; the server's
``pipelines`` loop (``advance``) driven here as the server drives it."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from helpers import wait_until
from pipeline_notebooks import diamond

from jupyter_gpu_env.contracts.pipelines import folder as files
from jupyter_gpu_env.errors import Conflict, InvalidRequest, NotFound
from jupyter_gpu_env.jobs.sweeps.results import gather
from jupyter_gpu_env.models.automation.pipelines import Pipeline
from jupyter_gpu_env.pipelines.service import PipelineService

ENDED = ("succeeded", "failed", "cancelled")


@contextlib.asynccontextmanager
async def running(batch, **kwargs: Any) -> AsyncIterator[PipelineService]:
    """Pipelines over a local JobService, stopped at the end (its pending kills and loops with it)."""
    svc = batch.service(**kwargs)
    try:
        yield PipelineService(svc)
    finally:
        await svc.stop()


async def _until_ended(pipes: PipelineService, pipeline_id: str, within: float = 120) -> Pipeline:
    async def ended() -> Pipeline | None:
        await pipes.jobs.refresh()
        await pipes.advance()
        got = await pipes.get(pipeline_id)
        return got if got.state in ENDED else None

    return await wait_until(ended, within=within, what=f"pipeline {pipeline_id} ending")


def _values(root: Path, output_path: str) -> dict[str, Any]:
    return gather([root / output_path], 1 << 16, 1 << 20)[0].values


async def test_a_diamond_runs_each_node_after_its_parents_and_hands_their_results_down(batch):
    async with running(batch, max_concurrent=3) as pipes:
        svc = pipes.jobs
        made = await pipes.submit(diamond(batch.root))
        by = {n.id: n for n in made.nodes}
        assert [n.id for n in made.nodes] == ["prepare", "train", "check", "report"]
        assert by["prepare"].state in ("queued", "running") and by["report"].state == "waiting"
        assert by["train"].kind == "sweep" and by["train"].group_id and by["train"].job_id is None
        assert by["report"].message == "Waits for 'train', 'check'."
        done = await _until_ended(pipes, made.id)
        assert done.state == "succeeded", [(n.id, n.state, n.message) for n in done.nodes]
        assert done.counts == {"succeeded": 4}
        by = {n.id: n for n in done.nodes}
        assert by["train"].counts == {"succeeded": 3}
        # each node ran only once its parents had ended
        assert (
            by["prepare"].finished_at <= by["train"].started_at
            and by["prepare"].finished_at <= by["check"].started_at
        )
        assert max(by["train"].finished_at, by["check"].finished_at) <= by["report"].started_at
        report = await svc.get(by["report"].job_id)
        values = _values(batch.root, report.output_path)
        assert values["losses"] == [30, 60, 90] and values["factors"] == [1, 2, 3] and values["checked"] == 31
        # the folder handed down is the sweep's own, inside the pipeline's folder
        assert values["train_folder"] == str(batch.root / by["train"].job_dir)
        assert Path(values["train_folder"]).parent.name.endswith(f"-pipeline-{made.id}")
        # every node's jobs say whose they are; pipeline.json names their folders
        jobs = (await svc.list(pipeline=made.id, limit=50)).items
        assert (
            len(jobs) == 6
            and {j.pipeline_id for j in jobs} == {made.id}
            and not any(j.waiting_for for j in jobs)
        )
        assert (await svc.list(pipeline="none")).total == 0
        doc = files.read_doc(Path(values["train_folder"]).parent)
        assert doc is not None and [len(n.folders) for n in doc.nodes] == [1, 3, 1, 1]
        assert (await svc.sweeps.list(pipelines=False)).total == 0 and (await svc.sweeps.list()).total == 1


async def test_a_failed_node_skips_what_depends_on_it_and_runs_its_failure_handlers(batch):
    async with running(batch, max_concurrent=3) as pipes:
        svc = pipes.jobs
        request = diamond(batch.root, fail_prepare=True)
        batch.notebook(
            "alert.ipynb", ["print('prepare failed: telling someone')"], parameters="upstream = {}"
        )
        batch.notebook("cleanup.ipynb", ["print('cleaning up')"], parameters="upstream = {}")
        request["nodes"] += [
            {"id": "alert", "notebook_path": "alert.ipynb", "after": ["prepare"], "when": "failed"},
            {"id": "cleanup", "notebook_path": "cleanup.ipynb", "after": ["report"], "when": "always"},
        ]
        made = await pipes.submit(request)
        done = await _until_ended(pipes, made.id)
        by = {n.id: n for n in done.nodes}
        assert done.state == "failed"
        assert by["prepare"].state == "failed" and "prepare was told to fail" in by["prepare"].message
        assert by["train"].state == by["check"].state == "skipped"
        assert by["train"].message == "Skipped: upstream 'prepare' failed."
        assert (
            by["report"].state == "skipped"
            and by["report"].message == "Skipped: upstream 'train' was skipped."
        )
        assert by["alert"].state == "succeeded" and by["cleanup"].state == "succeeded"
        jobs = (await svc.list(pipeline=made.id, limit=50)).items
        assert not [j for j in jobs if j.state not in ENDED]  # nothing left queued
        skipped = [j for j in jobs if j.reason == "skipped"]
        assert len(skipped) == 5 and all(j.started_at is None for j in skipped)
        assert all(files.read_skip(svc.folder_of(j)) for j in skipped)  # told in the folders too


async def test_rerun_from_a_node_runs_it_and_what_lies_below_and_reuses_the_rest(batch):
    async with running(batch, max_concurrent=3) as pipes:
        svc = pipes.jobs
        made = await pipes.submit(diamond(batch.root))
        first = {n.id: n for n in (await _until_ended(pipes, made.id)).nodes}
        with pytest.raises(NotFound, match="no node 'nope'"):
            await pipes.rerun(made.id, "nope")
        again = await pipes.rerun(made.id, "check")
        by = {n.id: n for n in again.nodes}
        assert (
            by["prepare"].job_id == first["prepare"].job_id
            and by["train"].group_id == first["train"].group_id
        )
        assert by["check"].job_id != first["check"].job_id and by["check"].attempts == 2
        assert by["report"].attempts == 2 and by["train"].attempts == 1
        done = {n.id: n for n in (await _until_ended(pipes, made.id)).nodes}
        assert all(n.state == "succeeded" for n in done.values())
        report = await svc.get(done["report"].job_id)
        assert _values(batch.root, report.output_path)["losses"] == [30, 60, 90]
        assert done["report"].started_at > first["report"].finished_at
        # the first attempt's jobs are kept, as records and folders
        assert (await svc.get(first["check"].job_id)).state == "succeeded"


async def test_cancel_stops_the_running_node_and_skips_the_rest(batch):
    async with running(batch, max_concurrent=3) as pipes:
        svc = pipes.jobs
        batch.notebook("slow.ipynb", ["import time; time.sleep(60)"])
        request = diamond(batch.root)
        request["nodes"][0]["notebook_path"] = "slow.ipynb"
        request["nodes"][0]["parameters"] = {}
        made = await pipes.submit(request)
        await wait_until(lambda: svc.get(made.nodes[0].job_id), within=30, what="prepare starting")
        cancelled = await pipes.cancel(made.id)
        by = {n.id: n for n in cancelled.nodes}
        assert cancelled.state == "cancelled" and by["prepare"].state == "cancelled"
        assert {by[k].state for k in ("train", "check", "report")} == {"skipped"}
        assert by["report"].message == "Skipped: the pipeline was cancelled."
        assert not [j for j in (await svc.list(pipeline=made.id, limit=50)).items if j.state not in ENDED]
        doc = files.read_doc(Path(svc.folder_of(await svc.get(by["prepare"].job_id))).parent)
        assert doc is not None and doc.cancelled  # a node's runner elsewhere creates nothing more
        with pytest.raises(Conflict, match="already ended"):
            await pipes.cancel(made.id)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r["nodes"][1].update(after=["nope"]), "Node 'train' waits for 'nope', which is no node"),
        (lambda r: r["nodes"][0].update(after=["report"]), "cycle: prepare → report → train → prepare"),
        (lambda r: r["nodes"][2].update(notebook_path="missing.ipynb"), "Node 'check': There is no notebook"),
        (lambda r: r["nodes"][0].update(parameters={"size": "big"}), "Node 'prepare': "),
        (lambda r: r["nodes"][3].update(id="train"), "node id 'train' is used twice"),
        (lambda r: r["nodes"][2].update(parameters={"upstream": {}}), "'upstream' is what the node receives"),
    ],
)
async def test_whatever_is_wrong_is_refused_first_naming_the_node_and_nothing_is_made(batch, change, message):
    async with running(batch) as pipes:
        svc = pipes.jobs
        request = diamond(batch.root)
        change(request)
        with pytest.raises((InvalidRequest, NotFound, Conflict), match=message):
            await pipes.submit(request)
        assert batch.job_folders() == [] and (await pipes.list()).total == 0 and (await svc.list()).total == 0


async def test_a_pipeline_file_beside_its_notebooks_runs_them(batch):
    async with running(batch, max_concurrent=3) as pipes:
        diamond(batch.root, "analysis")
        (batch.root / "analysis" / "nightly.pipeline.yaml").write_text(
            "nodes:\n  prepare: prepare.ipynb\n  check: {notebook_path: check.ipynb, after: [prepare]}\n"
        )
        made = await pipes.submit_file("analysis/nightly.pipeline.yaml")
        assert made.name == "nightly" and made.file_path == "analysis/nightly.pipeline.yaml"
        assert [n.notebook_path for n in made.nodes] == ["analysis/prepare.ipynb", "analysis/check.ipynb"]
        assert (await _until_ended(pipes, made.id)).state == "succeeded"
        (batch.root / "bad.pipeline.yaml").write_text("nodes:\n  - id: a\n    notebook_path: [unclosed\n")
        with pytest.raises(
            InvalidRequest, match=r"'bad.pipeline.yaml' is not valid YAML \(line 4\): expected ','"
        ):
            await pipes.submit_file("bad.pipeline.yaml")
        with pytest.raises(InvalidRequest, match="must end in .pipeline.yaml"):
            await pipes.submit_file("analysis/prepare.ipynb")
