"""Pipelines on Kubernetes, through kmock: a held node staged as the exact Job submit would create
(strictly schema-valid), the continuation a finishing node's pod runs (creating the children that may
start now from their staged Jobs, a second time harmlessly, skipping in cascade, nothing after a cancel),
the submissions taking a Job a pod created first, and the pod's own entry point carrying a pipeline on.

The pipeline folders are written here as the pipeline service writes them (pipeline.json, each node's
job.json with its ``pipeline`` entry): what the pods and the server share is those files."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import nbformat
import pytest
from helpers import job_record, notebook

from jupyter_gpu_env.backends.kubernetes import checks, objects
from jupyter_gpu_env.backends.kubernetes.pipelines import carry
from jupyter_gpu_env.backends.kubernetes.sweeps import indexed
from jupyter_gpu_env.backends.kubernetes.sweeps.jobs import RUNS_FILE
from jupyter_gpu_env.contracts import jobfiles
from jupyter_gpu_env.contracts.pipelines import folder as pfolder
from jupyter_gpu_env.errors import Conflict
from jupyter_gpu_env.jobs.submission import build_folder
from jupyter_gpu_env.models.jobs import Job

kubernetes_validate = pytest.importorskip("kubernetes_validate")

NS = "jhub"
PID = "0123456789ab"
K8S_VERSIONS = ("1.29.0", "1.37.0")


class Pipe:
    """A pipeline's folder as the service lays it out: each node's jobs in folders under it."""

    def __init__(self, ws, *, cancelled: bool = False) -> None:
        self.ws = ws
        self.dir = ws.root / "jobs" / f"pipe-{PID}"
        self.dir.mkdir(parents=True)
        self.nodes: list[pfolder.NodeDoc] = []
        self.jobs: dict[str, list[Job]] = {}
        self.cancelled = cancelled

    def _record(self, node: str, job_id: str, folder: Path, after: list[str], **kw) -> Job:
        spec = {"pipeline": {"id": PID, "node": node, "folder": str(self.dir)}}
        if "group_id" in kw:
            spec["group"] = {"id": kw["group_id"], "index": kw["group_index"], "max_concurrent": 2}
        folder.mkdir(parents=True)
        (folder / jobfiles.JOB_JSON).write_text(json.dumps(spec))
        return job_record(
            job_id, str(folder.relative_to(self.ws.root)), name=node, backend="kubernetes",
            notebook_path=f"{node}.ipynb", pipeline_id=PID, pipeline_node=node, waiting_for=after,
            created_at=time.time(), **kw,
        )  # fmt: skip

    def job(self, node: str, job_id: str, after=(), when: str = "succeeded") -> Job:
        folder = self.dir / f"{node}-{job_id}"
        job = self._record(node, job_id, folder, list(after))
        self.jobs[node] = [job]
        self.nodes.append(pfolder.NodeDoc(id=node, kind="job", after=list(after), when=when,
                          backend="kubernetes", folder=str(folder), folders=[str(folder)],
                          job_ids=[job_id]))  # fmt: skip
        return job

    def sweep(self, node: str, group: str, runs: int, after=()) -> list[Job]:
        base = self.dir / f"{node}-{group}"
        jobs = [
            self._record(
                node, f"{group[:10]}{i:02x}", base / f"run-{i}", list(after), group_id=group, group_index=i
            )  # fmt: skip
            for i in range(runs)
        ]
        jobs = [j.model_copy(update={"name": f"{node} [alpha={i}]"}) for i, j in enumerate(jobs)]
        self.jobs[node] = jobs
        self.nodes.append(pfolder.NodeDoc(id=node, kind="sweep", after=list(after), backend="kubernetes",
                          folder=str(base), folders=[str(base / f"run-{i}") for i in range(runs)],
                          job_ids=[j.id for j in jobs], group_id=group))  # fmt: skip
        return jobs

    def write(self) -> None:
        doc = pfolder.PipelineDoc(id=PID, name="diamond", cancelled=self.cancelled, nodes=self.nodes)
        pfolder.write_doc(self.dir, doc)

    def folders(self, node: str) -> list[Path]:
        return [self.ws.root / j.job_dir for j in self.jobs[node]]

    def end(self, node: str, state: str) -> None:
        for folder in self.folders(node):
            (folder / jobfiles.STATUS).write_text(json.dumps({"state": state}))

    def staged(self, node: str) -> dict:
        where = (
            self.folders(node)[0]
            if len(self.jobs[node]) == 1 and not self.jobs[node][0].group_id
            else (self.folders(node)[0].parent)
        )
        return json.loads((where / carry.MANIFEST).read_text())

    def name(self, node: str) -> str:
        first = self.jobs[node][0]
        return indexed.sweep_job_name(first) if first.group_id else objects.job_name(first)


def diamond(ws, **kw) -> Pipe:
    """prepare → a 3-run sweep 'train' and a job 'other' → 'report' after both."""
    p = Pipe(ws, **kw)
    p.job("prepare", "aaaaaaaaaa01")
    p.sweep("train", "bbbbbbbbbb00", 3, after=["prepare"])
    p.job("other", "cccccccccc01", after=["prepare"])
    p.job("report", "dddddddddd01", after=["train", "other"])
    p.write()
    return p


def backend_for(ws, cluster, **settings):
    backend = ws.backend(cluster, settings=ws.settings(**settings))
    backend.job_folder = lambda job: ws.root / job.job_dir
    return backend


async def stage_held(p: Pipe, backend) -> None:
    for node in ("train", "other", "report"):
        await backend.stage(p.jobs[node])


def endpoint(cluster) -> carry.Endpoint:
    return carry.Endpoint(url=cluster.url, namespace=NS, token="tkn-of-the-pod")


async def carry_from(cluster, folder: Path) -> carry.Outcome:
    """The continuation as a pod runs it (blocking: in a thread, kmock answers on this loop)."""
    return await asyncio.to_thread(carry.carry, folder, lambda: endpoint(cluster))


async def test_stage_writes_the_exact_valid_jobs_that_submit_would_create(cluster, ws):
    p = diamond(ws)
    backend = backend_for(ws, cluster, pipeline_service_account="pipeline-runner", local_queue="team-a")
    await stage_held(p, backend)
    assert cluster.requests() == []  # staging creates nothing
    for node in ("train", "other", "report"):
        body = p.staged(node)
        for version in K8S_VERSIONS:
            kubernetes_validate.validate(body, version, strict=True)
        assert checks.problems(body) == []
        assert body["metadata"]["name"] == p.name(node) and body["metadata"]["namespace"] == NS
        pod = body["spec"]["template"]["spec"]
        assert pod["serviceAccountName"] == "pipeline-runner" and pod["automountServiceAccountToken"] is True
        assert body["metadata"]["labels"][objects.QUEUE_LABEL] == "team-a"  # Kueue admits each step

    other = p.jobs["other"][0]
    assert p.staged("other") == objects.as_dict(
        objects.job_object(other, ws.root / other.job_dir, backend.settings)
    )
    train = p.jobs["train"]
    sweep = p.staged("train")
    runs_file = p.folders("train")[0].parent / RUNS_FILE.format(first=train[0].id)
    assert sweep == objects.as_dict(indexed.indexed_job_object(train, runs_file, 2, backend.settings))
    assert (sweep["spec"]["completions"], sweep["spec"]["parallelism"]) == (3, 2)  # max_concurrent kept
    assert runs_file.read_text() == indexed.runs_file(train, p.folders("train"))

    # A job of no pipeline keeps the plain account: no token where none is needed.
    plain = objects.as_dict(objects.job_object(other.model_copy(update={"pipeline_id": None}), "/x",
                                               backend.settings))  # fmt: skip
    assert plain["spec"]["template"]["spec"]["automountServiceAccountToken"] is False
    await backend.close()


async def test_a_diamond_is_carried_on_by_its_pods_once_and_harmlessly_twice(cluster, ws):
    p = diamond(ws)
    backend = backend_for(ws, cluster)
    await stage_held(p, backend)
    prepare = p.folders("prepare")[0]

    assert (await carry_from(cluster, prepare)).created == []  # prepare has not ended: nothing to do
    p.end("prepare", "succeeded")
    out = await carry_from(cluster, prepare)
    assert (out.created, out.existed, out.skipped) == (["train", "other"], [], [])
    # 'prepare' was handed over directly (no staged Job): only its children are created
    assert set(cluster.jobs()) == {p.name("train"), p.name("other")}
    posts = cluster.requests("POST", f"/apis/batch/v1/namespaces/{NS}/jobs")
    assert [json.loads(r.body) for r in posts] == [p.staged("train"), p.staged("other")]
    assert {r.headers.get("Authorization") for r in posts} == {"Bearer tkn-of-the-pod"}

    again = await carry_from(cluster, prepare)  # the same pod's retry, or the sweep's twin
    assert (again.created, again.existed) == ([], ["train", "other"])
    assert set(cluster.jobs()) == {p.name("train"), p.name("other")}

    # The last of the sweep's runs to end, with 'other' done, starts 'report'.
    p.end("other", "succeeded")
    for folder in p.folders("train")[:2]:
        (folder / jobfiles.STATUS).write_text('{"state": "succeeded"}')
    assert (await carry_from(cluster, p.folders("train")[1])).created == []
    (p.folders("train")[2] / jobfiles.STATUS).write_text('{"state": "succeeded"}')
    out = await carry_from(cluster, p.folders("train")[2])
    assert out.created == ["report"] and out.existed == []
    assert json.loads(cluster.requests("POST")[-1].body) == p.staged("report")
    await backend.close()


async def test_a_failed_parent_skips_what_lies_below_and_creates_nothing(cluster, ws):
    p = Pipe(ws)
    p.job("prepare", "aaaaaaaaaa01")
    p.sweep("train", "bbbbbbbbbb00", 2, after=["prepare"])
    p.job("report", "dddddddddd01", after=["train"])
    p.job("cleanup", "eeeeeeeeee01", after=["report"], when="always")
    p.write()
    backend = backend_for(ws, cluster)
    for node in ("train", "report", "cleanup"):
        await backend.stage(p.jobs[node])
    p.end("prepare", "failed")

    out = await carry_from(cluster, p.folders("prepare")[0])
    assert out.skipped == ["train", "report"] and out.created == ["cleanup"]  # 'always' still runs
    assert set(cluster.jobs()) == {p.name("cleanup")}
    for node, why in (("train", "upstream 'prepare' failed"), ("report", "upstream 'train' was skipped")):
        for folder in p.folders(node):
            assert json.loads((folder / pfolder.SKIPPED).read_text()) == {"reason": "skipped", "message": why}
    doc = pfolder.read_doc(p.dir)
    assert doc is not None
    standing = pfolder.standing_from_files(doc, {})
    assert (standing["train"], standing["report"]) == ("skipped", "skipped")
    again = await carry_from(cluster, p.folders("prepare")[0])  # skips are kept, nothing more made
    assert (again.skipped, again.existed) == ([], ["cleanup"])
    await backend.close()


async def test_a_cancelled_pipeline_is_not_carried_on(cluster, ws):
    p = diamond(ws, cancelled=True)
    backend = backend_for(ws, cluster)
    await stage_held(p, backend)
    p.end("prepare", "cancelled")
    out = await carry_from(cluster, p.folders("prepare")[0])
    assert out == carry.Outcome() and cluster.requests() == []
    assert not any(Path(f).joinpath(pfolder.SKIPPED).exists() for n in p.nodes for f in n.folders)
    await backend.close()


async def test_submissions_take_the_job_a_pod_created_first_and_refuse_a_strangers(cluster, ws):
    p = diamond(ws)
    backend = backend_for(ws, cluster)
    await stage_held(p, backend)
    p.end("prepare", "succeeded")
    await carry_from(cluster, p.folders("prepare")[0])
    before = set(cluster.jobs())

    # The server hands the nodes over itself (it saw the parents end, or completes a crashed pod's work).
    obs = await backend.submit(p.jobs["other"][0])
    assert (obs.state, obs.backend_job_id) == ("queued", p.name("other"))
    sub = await backend.submit_sweep(p.jobs["train"], 2)
    assert sub.backend_job_id == p.name("train")
    assert [o.backend_job_id for o in sub.runs.values()] == [f"{p.name('train')}/{i}" for i in range(3)]
    assert set(cluster.jobs()) == before

    stranger = p.jobs["train"][0].model_copy(update={"group_id": "ffffffffff00"})
    body = json.loads(json.dumps(p.staged("train")))
    body["metadata"]["name"] = indexed.sweep_job_name(stranger)
    cluster.k.objects["batch/v1/jobs", NS, body["metadata"]["name"]] = body  # someone else's
    runs = [r.model_copy(update={"group_id": "ffffffffff00"}) for r in p.jobs["train"]]
    with pytest.raises(Conflict, match="not this sweep's"):
        await backend.submit_sweep(runs, 2)
    await backend.close()


def test_in_cluster_endpoint_from_the_pods_service_account(tmp_path):
    sa = tmp_path / "sa"
    sa.mkdir()
    with pytest.raises(carry.CarryError, match="KUBERNETES_SERVICE_HOST"):
        carry.Endpoint.in_cluster({}, sa)
    with pytest.raises(carry.CarryError, match="pipeline_service_account"):
        carry.Endpoint.in_cluster({"KUBERNETES_SERVICE_HOST": "10.0.0.1"}, sa)
    (sa / "token").write_text("tkn\n")
    (sa / "namespace").write_text("jhub")
    (sa / "ca.crt").write_text("not read until a call")
    ep = carry.Endpoint.in_cluster(
        {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "6443"}, sa
    )
    assert (ep.url, ep.namespace, ep.token, ep.ca_file) == ("https://10.0.0.1:6443", "jhub", "tkn",
                                                            str(sa / "ca.crt"))  # fmt: skip
    assert (
        carry.Endpoint.in_cluster({"KUBERNETES_SERVICE_HOST": "fd00::1"}, sa).url == "https://[fd00::1]:443"
    )
    # a proxy in front of the API server, which authenticates itself
    proxied = carry.Endpoint.in_cluster({carry.API_ENV: "http://127.0.0.1:8001/"}, tmp_path / "none")
    assert (proxied.url, proxied.token, proxied.namespace) == ("http://127.0.0.1:8001", None, "default")


def test_an_unreachable_api_or_a_refusal_is_named_and_a_bad_manifest_refused(tmp_path):
    ep = carry.Endpoint(url="http://127.0.0.1:9", namespace="jhub", timeout=2)
    with pytest.raises(carry.CarryError, match="cannot be reached"):
        ep.create_job({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "x"}})
    (tmp_path / carry.MANIFEST).write_text('{"apiVersion": "v1", "kind": "Pod"}')
    with pytest.raises(carry.CarryError, match="no batch/v1 Job"):
        carry.read_manifest(tmp_path)
    (tmp_path / carry.MANIFEST).write_text("{not json")
    with pytest.raises(carry.CarryError, match="damaged"):
        carry.read_manifest(tmp_path)
    assert carry.read_manifest(tmp_path / "elsewhere") is None


async def test_the_pods_entry_point_carries_the_pipeline_on_after_its_runner(cluster, ws):
    """The real Job of 'prepare' run as a kubelet would: its runner executes the notebook, then the
    same pod creates the staged Job of 'report' (the API's address given to the pods as an admin would,
    through c.KubernetesBackend.env); the pod's exit code is the runner's."""
    p = Pipe(ws)
    prepare = p.job("prepare", "aaaaaaaaaa01")
    p.job("report", "dddddddddd01", after=["prepare"])
    p.write()
    folder = p.folders("prepare")[0]
    spec = json.loads((folder / jobfiles.JOB_JSON).read_text())
    spec.update({"format": jobfiles.JOB_FORMAT, "id": prepare.id, "name": "prepare",
                 "notebook_path": "prepare.ipynb", "parameters": {}, "kernel": "python3",
                 "environment": None, "image": None, "cwd": str(ws.root), "time_limit_seconds": None,
                 "resources": {}})  # fmt: skip
    (folder / jobfiles.JOB_JSON).unlink()
    folder.rmdir()  # made again whole, as a submission makes it
    build_folder(folder, nbformat.writes(notebook(["print('prepared')"])).encode(), spec)
    backend = backend_for(ws, cluster, env={carry.API_ENV: cluster.url})
    await backend.stage(p.jobs["report"])
    await backend.submit(prepare)
    assert set(cluster.jobs()) == {p.name("prepare")}

    code, out = await cluster.run_pod(p.name("prepare"))
    assert code == 0 and b"prepared" in out
    assert jobfiles.read_status(folder)["state"] == "succeeded"
    assert set(cluster.jobs()) == {p.name("prepare"), p.name("report")}
    assert cluster.job(p.name("report")) == p.staged("report")
    await backend.close()


def test_a_bad_service_account_name_is_named_at_start(ws):
    errors = checks.check_settings(ws.settings(pipeline_service_account="Pipeline Runner"))
    assert errors == ["pipeline_service_account 'Pipeline Runner' is not a valid service account name"]
    assert checks.check_settings(ws.settings(pipeline_service_account="pipeline-runner")) == []
