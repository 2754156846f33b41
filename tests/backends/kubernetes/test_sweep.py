"""A sweep on Kubernetes: one Indexed Job (valid for every pinned Kubernetes, strictly, and by the
project's checks), each pod finding its run by its completion index; driven through kmock with a
stand-in kubelet that runs the Job's own container command once per index, here."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from helpers import run_record, write_notebook

from jupyter_gpu_env.backends.kubernetes import checks, objects
from jupyter_gpu_env.backends.kubernetes.sweeps import indexed
from jupyter_gpu_env.models.jobs import Job
from jupyter_gpu_env.models.resources import JobResources

kubernetes_validate = pytest.importorskip("kubernetes_validate")
K8S_VERSIONS = ("1.29.0", "1.37.0")


def _run(i: int) -> Job:
    return run_record(i, backend="kubernetes", resources=JobResources(cpus=2, mig_profile="1g.10gb"))


def test_the_indexed_job_is_valid_and_fails_each_index_alone():
    settings = objects.K8sSettings(
        image="quay.io/jupyter/pytorch-notebook:cuda12", namespace="jhub", local_queue="team-a"
    )
    body = objects.as_dict(
        indexed.indexed_job_object(
            [_run(i) for i in range(5)], Path("/home/u/jobs/s/runs-x.txt"), 2, settings
        )
    )
    for version in K8S_VERSIONS:
        kubernetes_validate.validate(body, version, strict=True)
    assert checks.problems(body) == []
    spec = body["spec"]
    assert (
        spec["completionMode"],
        spec["completions"],
        spec["parallelism"],
        spec["backoffLimitPerIndex"],
    ) == ("Indexed", 5, 2, 0)
    assert "backoffLimit" not in spec
    assert body["metadata"]["name"] == "nb-train-abcdef012345"
    assert (
        body["metadata"]["labels"][objects.QUEUE_LABEL] == "team-a"
    )  # Kueue admits the sweep as one workload
    assert body["metadata"]["labels"][indexed.SWEEP_LABEL] == "abcdef012345"
    c = body["spec"]["template"]["spec"]["containers"][0]
    assert c["command"][-2:] == ["/home/u/jobs/s/runs-x.txt", "python"]
    assert c["resources"]["limits"]["nvidia.com/mig-1g.10gb"] == "1"
    assert "JUPYTER_GPU_ENV_JOB_ID" not in {e["name"] for e in c["env"]}  # each pod takes its run's
    broken = {**body, "spec": {**spec, "backoffLimit": 0}}
    assert any("backoffLimitPerIndex" in p for p in checks.problems(broken))
    assert indexed.index_set("0,2-4,7") == {0, 2, 3, 4, 7}


async def _kubelet(cluster, name: str, indexes: list[int]) -> list[int]:
    """Run the Indexed Job's container command once per index, as pods on a node sharing the folder."""
    job = cluster.job(name)
    container = job["spec"]["template"]["spec"]["containers"][0]
    argv = [*container["command"][:-1], sys.executable]
    env = {e["name"]: e["value"] for e in container.get("env") or []}
    cluster.mark_running(name)
    codes = []
    for i in indexes:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            env={**os.environ, **env, "JOB_COMPLETION_INDEX": str(i)},
            stdout=asyncio.subprocess.DEVNULL,
        )
        codes.append(await asyncio.wait_for(proc.wait(), 90))
    cluster.patch_job(
        name,
        {
            "status": {
                "active": 0,
                "succeeded": codes.count(0),
                "completedIndexes": ",".join(str(i) for i, c in zip(indexes, codes, strict=True) if c == 0),
            }
        },
    )
    return codes


async def test_a_sweep_is_one_indexed_job_and_each_pod_runs_its_run(cluster, ws):
    half = "import os\n{'half': alpha / 2, 'run': os.environ['JUPYTER_GPU_ENV_JOB_ID']}"
    write_notebook(ws.root, "half.ipynb", [], parameters="alpha = 1", results=half)
    svc = ws.service(ws.backend(cluster))
    try:
        group = await svc.submit(
            {
                "notebook_path": "half.ipynb",
                "backend": "kubernetes",
                "sweep": {"alpha": [2, 4, 6]},
                "max_concurrent": 2,
            }
        )
        assert len(cluster.requests("POST", "/jobs")) == 1  # three runs, one object
        assert group.backend_job_id == "nb-half-" + group.id and list(cluster.jobs()) == [
            group.backend_job_id
        ]
        runs = (await svc.list(sweep=group.id)).items
        assert [r.backend_job_id for r in runs] == [f"{group.backend_job_id}/{i}" for i in range(3)]
        await svc.refresh()
        assert {r.state for r in (await svc.list(sweep=group.id)).items} == {"queued"}

        assert await _kubelet(cluster, group.backend_job_id, [0, 1, 2]) == [0, 0, 0]
        await svc.refresh()
        group = await svc.sweeps.get(group.id)
        assert group.state == "succeeded", [
            (r.state, r.message) for r in (await svc.list(sweep=group.id)).items
        ]
        table = await svc.sweeps.results(group.id)
        assert [(r.parameters["alpha"], r.values) for r in table.rows] == [
            (a, {"half": a / 2, "run": r.job_id}) for a, r in zip((2, 4, 6), table.rows, strict=True)
        ]  # each pod ran its own run, under its own id
    finally:
        await svc.stop()


async def test_a_run_cancelled_alone_is_taken_out_and_a_sweep_cancelled_deletes_its_job(cluster, ws):
    write_notebook(ws.root, "p.ipynb", [], parameters="alpha = 1")
    svc = ws.service(ws.backend(cluster))
    try:
        group = await svc.submit(
            {"notebook_path": "p.ipynb", "backend": "kubernetes", "sweep": {"alpha": [1, 2, 3]}}
        )
        runs = (await svc.list(sweep=group.id)).items
        await svc.cancel(runs[1].id)
        table = next(Path(ws.root / runs[0].job_dir).parent.glob("runs-*.txt")).read_text()
        assert runs[1].id not in table and runs[0].id in table and cluster.job_exists(group.backend_job_id)
        assert await _kubelet(cluster, group.backend_job_id, [1]) == [2]  # its pod finds nothing to run

        group = await svc.sweeps.cancel(group.id)
        assert group.state == "cancelled" and group.counts["cancelled"] == 3
        assert not cluster.job_exists(group.backend_job_id)
    finally:
        await svc.stop()
