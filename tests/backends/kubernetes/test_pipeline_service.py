"""The pipeline service on Kubernetes, through kmock: a PipelineService over a JobService with the
KubernetesBackend. Held nodes are staged (their Jobs written, not created); the pod of a finishing node
(the real entry point, run here by a stand-in kubelet) creates its children before the server does
anything, and the server's round then takes the Job it finds (a sweep node's Indexed Job too); the
server creates what a crashed pod left undone; a cancel deletes what was created and leaves nothing
for a late pod to create; a failure skips what lies below."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

import pytest
from helpers import write_notebook
from pipeline_notebooks import diamond

from jupyter_gpu_env.backends.kubernetes import objects
from jupyter_gpu_env.backends.kubernetes.pipelines import carry
from jupyter_gpu_env.backends.kubernetes.sweeps import indexed
from jupyter_gpu_env.contracts import jobfiles
from jupyter_gpu_env.contracts.pipelines import folder as files
from jupyter_gpu_env.jobs.sweeps.results import gather
from jupyter_gpu_env.models.automation.pipelines import Pipeline
from jupyter_gpu_env.models.jobs import Job
from jupyter_gpu_env.pipelines.service import PipelineService

JOBS_PATH = "/apis/batch/v1/namespaces/jhub/jobs"
BELOW = ("train", "check", "report")  # the diamond's nodes below its root


@pytest.fixture(autouse=True)
def _outside_a_cluster(monkeypatch):
    # a pod's carry finds its API server only through c.KubernetesBackend.env here (or not at all)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.delenv(carry.API_ENV, raising=False)


def _pipes(ws, cluster, *, carried: bool = True) -> PipelineService:
    """A PipelineService on the kubernetes backend; ``carried``: its pods reach kmock to carry it on."""
    env = {carry.API_ENV: cluster.url} if carried else {}
    return PipelineService(ws.service(ws.backend(cluster, settings=ws.settings(env=env))))


def _two(ws, *, fail: bool = False, slow: bool = False) -> dict[str, Any]:
    """prepare -> check: check receives prepare's results."""
    first = "import time; time.sleep(60)" if slow else "pass"
    write_notebook(
        ws.root, "prepare.ipynb", [first, "assert not fail, 'prepare was told to fail'"],
        parameters="size = 3\nfail = False", results='{"rows": size * 10}',
    )  # fmt: skip
    write_notebook(
        ws.root, "check.ipynb", ['checked = upstream["prepare"]["results"]["rows"] + 1'],
        parameters="upstream = {}", results='{"checked": checked}',
    )  # fmt: skip
    return {
        "name": "two",
        "nodes": [
            {"id": "prepare", "notebook_path": "prepare.ipynb", "backend": "kubernetes",
             "parameters": {"fail": fail}},
            {"id": "check", "notebook_path": "check.ipynb", "backend": "kubernetes", "after": ["prepare"]},
        ],
    }  # fmt: skip


async def _jobs(pipes: PipelineService, made: Pipeline) -> dict[str, list[Job]]:
    """Each node's jobs as the store has them now."""
    by: dict[str, list[Job]] = {}
    for job in (await pipes.jobs.list(pipeline=made.id, limit=50)).items:
        by.setdefault(job.pipeline_node or "", []).append(job)
    return {k: sorted(v, key=lambda j: j.group_index or 0) for k, v in by.items()}


def _name(jobs: list[Job]) -> str:
    return indexed.sweep_job_name(jobs[0]) if jobs[0].group_id else objects.job_name(jobs[0])


async def _round(pipes: PipelineService, made: Pipeline) -> Pipeline:
    """The server's round: the jobs' loop, then the pipelines' loop."""
    await pipes.jobs.refresh()
    await pipes.advance()
    return await pipes.get(made.id)


def _states(p: Pipeline) -> dict[str, str]:
    return {n.id: n.state for n in p.nodes}


def _values(ws, job: Job) -> dict[str, Any]:
    assert job.output_path
    return gather([ws.root / job.output_path], 1 << 16, 1 << 20)[0].values


async def test_submission_creates_the_root_and_stages_every_held_node(cluster, ws):
    pipes = _pipes(ws, cluster)
    try:
        made = await pipes.submit(diamond(ws.root, backend="kubernetes"))
        jobs = await _jobs(pipes, made)
        assert set(cluster.jobs()) == {_name(jobs["prepare"])}  # only the root is created
        assert len(cluster.requests("POST", JOBS_PATH)) == 1
        assert _states(made) == {"prepare": "queued", **dict.fromkeys(BELOW, "waiting")}
        prepare = jobs["prepare"][0]
        assert prepare.backend_job_id == _name(jobs["prepare"]) and not prepare.waiting_for
        for node in BELOW:
            runs = jobs[node]
            assert all(j.waiting_for and j.state == "queued" and not j.backend_job_id for j in runs)
            folders = [pipes.jobs.folder_of(j) for j in runs]
            where = folders[0].parent if runs[0].group_id else folders[0]
            staged = json.loads((where / carry.MANIFEST).read_text())
            assert staged["metadata"]["name"] == _name(runs)  # what submit would create, by its name
        assert len(jobs["train"]) == 3
        staged = json.loads((pipes.jobs.folder_of(jobs["train"][0]).parent / carry.MANIFEST).read_text())
        assert (staged["spec"]["completionMode"], staged["spec"]["completions"]) == ("Indexed", 3)
        # a round while the root runs hands nothing over
        made = await _round(pipes, made)
        assert set(cluster.jobs()) == {_name(jobs["prepare"])}
    finally:
        await pipes.jobs.stop()


async def test_the_roots_pod_creates_its_child_and_the_server_takes_that_job(cluster, ws):
    pipes = _pipes(ws, cluster)
    try:
        made = await pipes.submit(_two(ws))
        jobs = await _jobs(pipes, made)
        root, child = _name(jobs["prepare"]), _name(jobs["check"])
        staged = json.loads((pipes.jobs.folder_of(jobs["check"][0]) / carry.MANIFEST).read_text())

        code, _ = await cluster.run_pod(root)  # the runner, then the carry, in the root's pod
        assert code == 0
        # the child's Job exists before the server has done anything: the pod created it, as staged
        assert set(cluster.jobs()) == {root, child} and cluster.job(child) == staged
        assert (await pipes.jobs.get(jobs["check"][0].id)).waiting_for  # the record still held

        made = await _round(pipes, made)  # the server hands 'check' over: its Job is found and taken
        check = await pipes.jobs.get(jobs["check"][0].id)
        assert not check.waiting_for and check.state == "queued" and check.backend_job_id == child
        assert set(cluster.jobs()) == {root, child}
        assert len(cluster.requests("POST", JOBS_PATH)) == 3  # the root, the pod's, the server's (409)
        assert _states(made) == {"prepare": "succeeded", "check": "queued"}

        code, _ = await cluster.run_pod(child)
        assert code == 0
        made = await _round(pipes, made)
        assert made.state == "succeeded", [(n.id, n.state, n.message) for n in made.nodes]
        assert _values(ws, await pipes.jobs.get(check.id)) == {"checked": 31}  # it received upstream
        assert set(cluster.jobs()) == {root, child}
    finally:
        await pipes.jobs.stop()


async def test_the_server_creates_the_child_a_crashed_carry_left_undone(cluster, ws):
    pipes = _pipes(ws, cluster, carried=False)  # the pods cannot reach the API server: their carry fails
    try:
        made = await pipes.submit(_two(ws))
        jobs = await _jobs(pipes, made)
        root, child = _name(jobs["prepare"]), _name(jobs["check"])
        staged = json.loads((pipes.jobs.folder_of(jobs["check"][0]) / carry.MANIFEST).read_text())

        code, _ = await cluster.run_pod(root)
        assert code == 0  # the carry's failure changes no exit code
        assert set(cluster.jobs()) == {root}

        made = await _round(pipes, made)
        assert set(cluster.jobs()) == {root, child} and cluster.job(child) == staged
        check = await pipes.jobs.get(jobs["check"][0].id)
        assert not check.waiting_for and (check.state, check.backend_job_id) == ("queued", child)
        assert len(cluster.requests("POST", JOBS_PATH)) == 2  # the root's and the server's: no pod's
        assert _states(made) == {"prepare": "succeeded", "check": "queued"}
        made = await _round(pipes, made)  # a second round changes nothing
        assert set(cluster.jobs()) == {root, child} and len(cluster.requests("POST", JOBS_PATH)) == 2
    finally:
        await pipes.jobs.stop()


def _endpoint(cluster) -> carry.Endpoint:
    return carry.Endpoint(url=cluster.url, namespace="jhub")


async def test_cancel_deletes_the_running_root_and_the_children_a_pod_raced_to_create(cluster, ws):
    pipes = _pipes(ws, cluster)
    try:
        made = await pipes.submit(diamond(ws.root, backend="kubernetes"))
        jobs = await _jobs(pipes, made)
        names = {node: _name(runs) for node, runs in jobs.items()}
        cluster.mark_running(names["prepare"])
        made = await _round(pipes, made)
        assert _states(made) == {"prepare": "running", **dict.fromkeys(BELOW, "waiting")}
        # a pod that read pipeline.json just before the cancel creates the children's staged Jobs
        for node in ("train", "check"):
            folder = pipes.jobs.folder_of(jobs[node][0])
            staged = carry.read_manifest(folder.parent if node == "train" else folder)
            assert staged is not None and await asyncio.to_thread(_endpoint(cluster).create_job, staged)
        assert set(cluster.jobs()) == {names["prepare"], names["train"], names["check"]}

        made = await pipes.cancel(made.id)
        assert made.state == "cancelled"
        assert _states(made) == {"prepare": "cancelled", **dict.fromkeys(BELOW, "skipped")}
        assert {n.id: n.message for n in made.nodes}["check"] == "Skipped: the pipeline was cancelled."
        assert cluster.jobs() == {}  # the root's Job, the raced sweep's Indexed Job and the raced job's
        prepare = pipes.jobs.folder_of(jobs["prepare"][0])
        doc = files.read_doc(prepare.parent)
        assert doc is not None and doc.cancelled

        # the root's pod ends late and carries on: it creates nothing
        (prepare / jobfiles.STATUS).write_text('{"state": "succeeded"}')
        posts = len(cluster.requests("POST", JOBS_PATH))
        out = await asyncio.to_thread(carry.carry, prepare, lambda: _endpoint(cluster))
        assert out == carry.Outcome() and len(cluster.requests("POST", JOBS_PATH)) == posts
        assert cluster.jobs() == {}
    finally:
        await pipes.jobs.stop()


async def test_a_failed_root_skips_its_children_and_nothing_more_is_created(cluster, ws):
    pipes = _pipes(ws, cluster)
    try:
        made = await pipes.submit(diamond(ws.root, fail_prepare=True, backend="kubernetes"))
        jobs = await _jobs(pipes, made)
        root = _name(jobs["prepare"])
        code, _ = await cluster.run_pod(root)  # the runner fails; its pod's carry skips what lies below
        assert code != 0
        for node in BELOW:
            assert all(files.read_skip(pipes.jobs.folder_of(j)) for j in jobs[node])
        made = await _round(pipes, made)
        assert made.state == "failed", [(n.id, n.state, n.message) for n in made.nodes]
        by = {n.id: n for n in made.nodes}
        assert by["prepare"].state == "failed" and "prepare was told to fail" in (by["prepare"].message or "")
        assert by["train"].state == by["check"].state == by["report"].state == "skipped"
        assert by["train"].message == by["check"].message == "Skipped: upstream 'prepare' failed."
        assert by["report"].message == "Skipped: upstream 'train' was skipped."
        for node in BELOW:
            for job in jobs[node]:
                job = await pipes.jobs.get(job.id)
                assert (job.state, job.reason, job.started_at) == ("cancelled", "skipped", None)
                assert not job.waiting_for
                assert files.read_skip(pipes.jobs.folder_of(job))
        assert set(cluster.jobs()) == {root} and len(cluster.requests("POST", JOBS_PATH)) == 1
    finally:
        await pipes.jobs.stop()


async def _indexed_pods(cluster, name: str, runs: int) -> list[int]:
    """Run an Indexed Job's container command once per index, as its pods would, then mark it Complete."""
    job = cluster.job(name)
    container = job["spec"]["template"]["spec"]["containers"][0]
    argv = [*container["command"][:-1], sys.executable]
    env = {**os.environ, **{e["name"]: e["value"] for e in container.get("env") or []}}
    cluster.mark_running(name)
    codes = []
    for i in range(runs):
        proc = await asyncio.create_subprocess_exec(
            *argv, env={**env, "JOB_COMPLETION_INDEX": str(i)}, stdout=asyncio.subprocess.DEVNULL
        )
        codes.append(await asyncio.wait_for(proc.wait(), 90))
    cluster.mark_ended(name, not any(codes))
    cluster.patch_job(name, {"status": {"completedIndexes": ",".join(str(i) for i in range(runs))}})
    return codes


async def test_a_sweep_node_is_the_indexed_job_its_parents_pod_created(cluster, ws):
    pipes = _pipes(ws, cluster)
    request = diamond(ws.root, backend="kubernetes")
    request["nodes"] = request["nodes"][:2]  # prepare -> train, a sweep
    request["nodes"][1]["sweep"] = {"factor": [1, 2]}
    try:
        made = await pipes.submit(request)
        jobs = await _jobs(pipes, made)
        root, sweep = _name(jobs["prepare"]), _name(jobs["train"])
        assert (await cluster.run_pod(root))[0] == 0
        assert set(cluster.jobs()) == {root, sweep}  # the root's pod created the Indexed Job

        made = await _round(pipes, made)
        runs = jobs["train"]
        group = await pipes.jobs.sweeps.get(runs[0].group_id or "")
        assert group.backend_job_id == sweep and set(cluster.jobs()) == {root, sweep}
        taken = [await pipes.jobs.get(r.id) for r in runs]
        assert [r.backend_job_id for r in taken] == [f"{sweep}/0", f"{sweep}/1"]
        assert not any(r.waiting_for for r in taken)

        assert await _indexed_pods(cluster, sweep, 2) == [0, 0]
        made = await _round(pipes, made)
        assert made.state == "succeeded", [(n.id, n.state, n.message) for n in made.nodes]
        assert [_values(ws, await pipes.jobs.get(r.id)) for r in runs] == [{"loss": 30}, {"loss": 60}]
    finally:
        await pipes.jobs.stop()


async def test_a_step_whose_job_completed_without_running_stops_the_pipeline(cluster, ws):
    pipes = _pipes(ws, cluster, carried=False)
    try:
        made = await pipes.submit(_two(ws))
        jobs = await _jobs(pipes, made)
        root = _name(jobs["prepare"])
        cluster.mark_ended(root, ok=True)  # Complete, but the pod's command never ran the runner
        made = await _round(pipes, made)
        made = await _round(pipes, made)
        assert set(cluster.jobs()) == {root}  # the next step's Job was never created
        prepare = await pipes.jobs.get(jobs["prepare"][0].id)
        assert (prepare.state, prepare.reason) == ("failed", "lost") and "never ran" in prepare.message
        assert _states(made)["check"] == "skipped", [(n.id, n.state) for n in made.nodes]
    finally:
        await pipes.jobs.stop()
