"""Schedules on the Kubernetes backend against an API on the wire (kmock on loopback) with the real
client: arm creates the CronJob, arming again changes that one, a pause suspends it, one list call
says which are there, disarm deletes (a 404 is fine), and the API's refusals come back in words."""

from __future__ import annotations

import json
import time

import pytest
from helpers import job_record

from jupyter_gpu_env.backends.kubernetes import objects
from jupyter_gpu_env.backends.kubernetes.schedules import cronjob
from jupyter_gpu_env.contracts.schedules.plan import SchedulePlan
from jupyter_gpu_env.errors import Conflict, Forbidden, InvalidRequest
from jupyter_gpu_env.models.resources import Resources

from .conftest import NS

kubernetes_validate = pytest.importorskip("kubernetes_validate")

CRONJOBS = "batch/v1/cronjobs"


@pytest.fixture
def crons(cluster):
    cluster.k.resources[CRONJOBS] = {}
    return cluster


def stored(cluster) -> dict[str, dict]:
    return {
        name: obj.raw
        for (resource, _ns, name), obj in cluster.k.objects.items()
        if str(resource.plural) == "cronjobs" and not obj.deleted
    }


def make_plan(ws, schedule_id: str = "5c3e9a1b2d4f", *, queue: str | None = None, resources=None, **fields):
    folder = ws.root / ".schedules" / schedule_id
    folder.mkdir(parents=True, exist_ok=True)
    template = job_record(
        "0000aaaabbbb", f".schedules/{schedule_id}/template", name="nightly", backend="kubernetes",
        notebook_path="analysis.ipynb", resources=Resources(**(resources or {})).normalized(), queue=queue,
        created_at=time.time(),
    )  # fmt: skip
    base = dict(
        id=schedule_id, name="nightly", folder=folder, template=template, expression="0 6 * * *",
        cron="0 6 * * *", timezone="Europe/Rome", overlap="skip", active=True, next_due=time.time() + 3600,
        generation=1,
    )  # fmt: skip
    base.update(fields)
    return SchedulePlan(**base)


def valid(body: dict) -> None:
    for version in ("1.29.0", "1.37.0"):
        kubernetes_validate.validate(body, version, strict=True)
    assert cronjob.cronjob_problems(body) == []


async def test_arm_creates_then_changes_the_one_cronjob(crons, ws):
    backend = ws.backend(crons)
    assert backend.keeps_schedules
    plan = make_plan(ws, resources={"gpus": 1})
    armed = await backend.arm_schedule(plan)
    name = cronjob.cronjob_name(plan)
    assert armed.handle == name and armed.present
    assert "0 6 * * *" in armed.message and "no Jupyter server" in armed.message
    (post,) = crons.requests("POST", f"/namespaces/{NS}/cronjobs")
    valid(json.loads(post.body))
    (made,) = stored(crons).values()
    assert made["spec"]["schedule"] == "0 6 * * *" and made["spec"]["concurrencyPolicy"] == "Forbid"
    container = made["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "1"

    # Changed: another time, a MIG slice instead of a GPU, overlap allowed. Still one CronJob.
    changed = make_plan(
        ws, cron="30 7 * * 1-5", expression="30 7 * * 1-5", overlap="allow", generation=2,
        resources={"mig_profile": "1g.10gb"},
    )  # fmt: skip
    armed = await backend.arm_schedule(changed)
    assert armed.handle == name and armed.present and "30 7 * * 1-5" in armed.message
    assert list(stored(crons)) == [name]
    (patch,) = crons.requests("PATCH", f"/namespaces/{NS}/cronjobs/{name}")
    assert patch.headers["Content-Type"] == "application/merge-patch+json"
    now = stored(crons)[name]
    valid(now)
    assert now["spec"]["schedule"] == "30 7 * * 1-5" and now["spec"]["concurrencyPolicy"] == "Allow"
    limits = now["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert "nvidia.com/gpu" not in limits and limits["nvidia.com/mig-1g.10gb"] == "1"  # not both
    await backend.close()


async def test_a_paused_schedule_keeps_its_cronjob_suspended(crons, ws):
    backend = ws.backend(crons)
    plan = make_plan(ws)
    await backend.arm_schedule(plan)
    paused = await backend.arm_schedule(make_plan(ws, active=False))
    assert paused.present and paused.message.startswith("Paused")
    (only,) = stored(crons).values()
    assert only["spec"]["suspend"] is True
    resumed = await backend.arm_schedule(plan)
    assert stored(crons)[resumed.handle]["spec"]["suspend"] is False
    await backend.close()


async def test_schedules_armed_is_one_list_call_and_finds_what_is_gone(crons, ws):
    backend = ws.backend(crons)
    kept, lost = make_plan(ws, "aaaa00000001"), make_plan(ws, "aaaa00000002")
    other = ws.backend(crons, settings=ws.settings(user="bob"))
    await backend.arm_schedule(kept)
    await other.arm_schedule(make_plan(ws, "aaaa00000002"))  # bob's, with the id of alice's lost one
    before = len(crons.requests("GET", "/cronjobs"))
    armed = await backend.schedules_armed([kept, lost])
    (listing,) = crons.requests("GET", "/cronjobs")[before:]
    assert listing.params["labelSelector"] == cronjob.schedule_selector(backend.settings)
    assert armed[kept.id].present and armed[kept.id].handle == cronjob.cronjob_name(kept)
    assert not armed[lost.id].present and armed[lost.id].handle is None
    assert "gone" in armed[lost.id].message
    assert await backend.schedules_armed([]) == {}
    await other.close()
    await backend.close()


async def test_disarm_deletes_and_leaves_started_runs_going(crons, ws):
    backend = ws.backend(crons)
    plan = make_plan(ws)
    await backend.arm_schedule(plan)
    await backend.disarm_schedule(plan)
    assert stored(crons) == {}
    (delete,) = crons.requests("DELETE", f"/cronjobs/{cronjob.cronjob_name(plan)}")
    assert delete.params["propagationPolicy"] == "Orphan"
    await backend.disarm_schedule(plan)  # already gone: a 404, which is fine
    (armed,) = (await backend.schedules_armed([plan])).values()
    assert not armed.present
    await backend.close()


async def test_an_iso_interval_and_a_missing_kueue_are_refused_in_words(crons, ws):
    backend = ws.backend(crons)
    iso = make_plan(ws, cron=None, expression="R/2026-12-01T06:00:00Z/PT6H")
    with pytest.raises(Conflict, match="cron line") as e:
        await backend.arm_schedule(iso)
    assert e.value.reason == "cron_required"
    with pytest.raises(Conflict, match="serves no Kueue API") as e:
        await backend.arm_schedule(make_plan(ws, queue="team-a"))
    assert e.value.reason == "kueue_missing"
    with pytest.raises(InvalidRequest, match="LocalQueue"):
        await backend.arm_schedule(make_plan(ws, queue="Team A"))
    assert stored(crons) == {}

    await backend.close()
    crons.declare_kueue()
    backend = ws.backend(crons)  # a server started after Kueue was installed
    armed = await backend.arm_schedule(make_plan(ws, queue="team-a"))
    template = stored(crons)[armed.handle]["spec"]["jobTemplate"]
    assert template["metadata"]["labels"][objects.QUEUE_LABEL] == "team-a"
    assert template["spec"]["suspend"] is True
    await backend.close()


async def test_someone_elses_cronjob_and_the_apis_refusals(crons, ws):
    import kmock

    backend = ws.backend(crons)
    plan = make_plan(ws)
    name = cronjob.cronjob_name(plan)
    crons.k.objects[CRONJOBS, NS, name] = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": name, "namespace": NS, "labels": {"app": "theirs"}},
        "spec": {
            "schedule": "* * * * *",
            "jobTemplate": {"spec": {"template": {"spec": {"containers": []}}}},
        },
    }
    with pytest.raises(Conflict, match="not this schedule's"):
        await backend.arm_schedule(plan)
    assert stored(crons)[name]["spec"]["schedule"] == "* * * * *"  # left alone

    status = {
        "kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Forbidden", "code": 403,
        "message": 'cronjobs.batch is forbidden: User "system:serviceaccount:jhub:jupyter" cannot create '
        'resource "cronjobs" in API group "batch" in the namespace "jhub"',
    }  # fmt: skip
    crons.k[f"post /apis/batch/v1/namespaces/{NS}/cronjobs"] << kmock.Response(status=403, payload=status)
    with pytest.raises(Forbidden, match='cannot create resource "cronjobs"'):
        await backend.arm_schedule(make_plan(ws, "bbbb00000001"))
    invalid = {**status, "reason": "Invalid", "code": 422, "message": 'CronJob.batch "x" is invalid: '
               'spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus'}  # fmt: skip
    crons.k[f"get /apis/batch/v1/namespaces/{NS}/cronjobs"] << kmock.Response(status=422, payload=invalid)
    with pytest.raises(InvalidRequest, match="unknown time zone Mars/Olympus"):
        await backend.schedules_armed([plan])
    await backend.close()


async def test_a_run_the_cronjob_started_is_followed_by_its_jobs_name(crons, ws):
    backend = ws.backend(crons)
    backend.job_folder = lambda job: ws.root / job.job_dir
    plan = make_plan(ws)
    armed = await backend.arm_schedule(plan)
    template = stored(crons)[armed.handle]["spec"]["jobTemplate"]
    name = f"{armed.handle}-29400000"  # as the CronJob controller names the Job it makes
    crons.k.objects["batch/v1/jobs", NS, name] = {
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {**template["metadata"], "name": name, "namespace": NS},
        "spec": template["spec"],
    }  # fmt: skip
    (ws.root / ".schedules" / plan.id / "runs" / "run1").mkdir(parents=True)
    run = job_record(
        "0000cccc0001", f".schedules/{plan.id}/runs/run1", name="nightly", backend="kubernetes",
        schedule_id=plan.id, backend_job_id=name, created_at=time.time(),
    )  # fmt: skip
    elsewhere = run.model_copy(update={"id": "0000cccc0002", "schedule_id": "ffff00000000"})
    crons.mark_running(name)
    seen = await backend.poll([run, elsewhere])
    assert seen[run.id].state == "running" and seen[run.id].backend_job_id == name
    assert seen[elsewhere.id].state == "failed"  # the Job is not that schedule's
    crons.k.objects["batch/v1/jobs", NS, name].delete()
    (gone,) = (await backend.poll([run])).values()
    assert gone.state == "failed" and name in (gone.message or "")
    await backend.close()


async def test_a_job_the_cronjob_started_that_made_no_run_is_named(crons, ws):
    from jupyter_gpu_env.contracts.schedules import folder as files

    backend = ws.backend(crons)
    plan = make_plan(ws)
    armed = await backend.arm_schedule(plan)
    template = stored(crons)[armed.handle]["spec"]["jobTemplate"]
    name = f"{armed.handle}-29400000"  # as the CronJob controller names the Job it makes
    crons.k.objects["batch/v1/jobs", NS, name] = {
        "apiVersion": "batch/v1", "kind": "Job", "spec": template["spec"],
        "metadata": {**template["metadata"], "name": name, "namespace": NS, "creationTimestamp": "2026-11-29T06:00:00Z"},
    }  # fmt: skip
    crons.mark_running(name)
    (kept,) = (await backend.schedules_armed([plan])).values()
    assert "without making a run" not in kept.message  # still running: its tick may not have run yet

    crons.mark_ended(name, ok=False, message="Job has reached the specified backoff limit")
    (kept,) = (await backend.schedules_armed([plan])).values()
    assert kept.present and f"Its Job {name} ended without making a run: its pod failed" in kept.message
    assert f"kubectl logs -n {NS} job/{name}" in kept.message

    run = plan.folder / files.RUNS / "20261129-0600-0000cccc0001"
    run.mkdir(parents=True)
    files.write_record(
        run,
        job_record(
            "0000cccc0001", f".schedules/{plan.id}/runs/{run.name}", name="nightly", backend="kubernetes",
            schedule_id=plan.id, backend_job_id=name, created_at=time.time(),
        ),
    )  # fmt: skip
    (kept,) = (await backend.schedules_armed([plan])).values()
    assert "without making a run" not in kept.message  # the tick recorded its run: the run says how it went
    await backend.close()
