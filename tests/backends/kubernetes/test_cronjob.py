"""Every CronJob the backend can build for a schedule: schema-valid (kubernetes-validate, strict, each
pinned version), passing the project's own checks, and saying what the schedule says."""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path

import pytest

from jupyter_gpu_env.backends.kubernetes import objects
from jupyter_gpu_env.backends.kubernetes.schedules import cronjob
from jupyter_gpu_env.contracts.schedules.plan import SchedulePlan

from .test_objects import CONFIGS, K8S_VERSIONS, MIG_PROFILES, REQUESTS, make_job, settings

kubernetes_validate = pytest.importorskip("kubernetes_validate")
pytestmark = pytest.mark.usefixtures("schemas_read_once")

FOLDER = Path("/home/jovyan/.jupyter-gpu-env/schedules/5c3e9a1b2d4f")


def make_plan(resources: dict | None = None, *, queue: str | None = None, **fields) -> SchedulePlan:
    base = dict(
        id="5c3e9a1b2d4f",
        name="nightly training",
        folder=FOLDER,
        template=make_job(resources or {}, queue=queue),
        expression="0 6 * * *",
        cron="0 6 * * *",
        timezone="Europe/Rome",
        overlap="skip",
        active=True,
        next_due=time.time() + 3600,
        generation=1,
    )
    base.update(fields)
    return SchedulePlan(**base)


def build(plan: SchedulePlan, s: objects.K8sSettings) -> dict:
    return objects.as_dict(cronjob.cronjob_object(plan, s))


def check(d: dict, plan: SchedulePlan, s: objects.K8sSettings) -> None:
    """Schema (strict, every pinned version), the project's checks, and what the plan implies."""
    for version in K8S_VERSIONS:
        kubernetes_validate.validate(d, version, strict=True)
    assert cronjob.cronjob_problems(d) == []
    spec = d["spec"]
    assert spec["schedule"] == plan.cron and spec["timeZone"] == plan.timezone
    assert spec["concurrencyPolicy"] == {"skip": "Forbid", "allow": "Allow"}[plan.overlap]
    assert spec["startingDeadlineSeconds"] == plan.starting_deadline_seconds
    assert spec["suspend"] is (not plan.active or plan.next_due is None)
    assert spec["successfulJobsHistoryLimit"] <= 3 and spec["failedJobsHistoryLimit"] <= 3
    name = d["metadata"]["name"]
    assert len(name) <= 52 and len(f"{name}-{29_000_000:010d}") <= 63  # the Job: minutes since 1970
    job = spec["jobTemplate"]
    pod = job["spec"]["template"]
    ident = objects.label_value(plan.id)
    for where in (d["metadata"]["labels"], job["metadata"]["labels"], pod["metadata"]["labels"]):
        assert where[cronjob.SCHEDULE_LABEL] == ident and objects.JOB_ID_LABEL not in where
        assert where[objects.USER_LABEL] == objects.label_value(s.user)
        assert where[objects.MANAGED_BY_KEY] == objects.MANAGED_BY
        assert all(where[k] == v for k, v in s.labels.items())
    queue = plan.template.queue or s.local_queue
    assert job["metadata"]["labels"].get(objects.QUEUE_LABEL) == (queue or None)
    assert objects.QUEUE_LABEL not in d["metadata"]["labels"] | pod["metadata"]["labels"]
    assert job["spec"].get("suspend") is (True if queue else None)
    c = pod["spec"]["containers"][0]
    tick = "jupyter_gpu_env.backends.kubernetes.schedules.tick"
    assert c["command"] == [s.python, "-m", tick, "--run-here", str(plan.folder)]
    assert c["image"] == s.image
    env = {e["name"]: e for e in c["env"]}
    assert "JUPYTER_GPU_ENV_JOB_ID" not in env
    assert env[cronjob.BACKEND_JOB_ENV]["valueFrom"]["fieldRef"]["fieldPath"] == (
        f"metadata.labels['{cronjob.JOB_NAME_LABEL}']"
    )


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_every_plan_builds_a_valid_cronjob(config):
    s = settings(config)
    for resources, overlap, active in itertools.product(REQUESTS, ("skip", "allow"), (True, False)):
        plan = make_plan(resources, overlap=overlap, active=active)
        check(build(plan, s), plan, s)


def test_the_job_template_is_an_ordinary_jobs():
    """Resources, GPUs, a MIG slice, volumes, tolerations and security contexts as a Job gets them."""
    s = objects.K8sSettings(image="img", namespace="jhub", **CONFIGS["everything"], **CONFIGS["volumes"])
    for resources in (
        {"gpus": 2, "cpus": 8, "memory": "64G", "time_limit": 3600},
        {"mig_profile": "1g.10gb+me"},
    ):
        plan = make_plan(resources)
        ordinary = objects.as_dict(objects.job_object(plan.template, plan.folder, s))
        d = build(plan, s)
        template = d["spec"]["jobTemplate"]["spec"]
        pod, job_pod = template["template"]["spec"], ordinary["spec"]["template"]["spec"]
        assert pod["containers"][0]["resources"] == job_pod["containers"][0]["resources"]
        for key in ("volumes", "tolerations", "securityContext", "nodeSelector", "serviceAccountName"):
            assert pod[key] == job_pod[key]
        assert pod["containers"][0]["volumeMounts"] == job_pod["containers"][0]["volumeMounts"]
        assert pod["containers"][0]["securityContext"] == job_pod["containers"][0]["securityContext"]
        assert template["backoffLimit"] == 0 and pod["restartPolicy"] == "Never"
        assert template["ttlSecondsAfterFinished"] == 600
        assert template.get("activeDeadlineSeconds") == ordinary["spec"].get("activeDeadlineSeconds")
    limits = build(make_plan({"mig_profile": "1g.10gb+me"}), s)["spec"]["jobTemplate"]["spec"]["template"]
    assert limits["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/mig-1g.10gb.me"] == "1"
    for profile in MIG_PROFILES:
        plan = make_plan({"mig_profile": profile})
        check(build(plan, settings("bare")), plan, settings("bare"))


def test_overlap_pause_and_a_schedule_with_no_run_left():
    s = settings("bare")
    assert build(make_plan(overlap="skip"), s)["spec"]["concurrencyPolicy"] == "Forbid"
    assert build(make_plan(overlap="allow"), s)["spec"]["concurrencyPolicy"] == "Allow"
    assert build(make_plan(active=True), s)["spec"]["suspend"] is False
    assert build(make_plan(active=False), s)["spec"]["suspend"] is True
    ended = make_plan(next_due=None)
    assert build(ended, s)["spec"]["suspend"] is True
    check(build(ended, s), ended, s)
    macro = make_plan(cron="@hourly", expression="@hourly", timezone="America/Argentina/Buenos_Aires")
    d = build(macro, s)
    check(d, macro, s)
    assert d["spec"]["timeZone"] == "America/Argentina/Buenos_Aires"
    assert d["metadata"]["annotations"][cronjob.EXPRESSION_ANNOTATION] == "@hourly"


def test_the_kueue_queue_goes_on_the_job_template_which_waits_suspended():
    for queue, default in itertools.product([None, "team-a"], ["", "team-default"]):
        s = objects.K8sSettings(image="img", namespace="jhub", user="alice", local_queue=default)
        plan = make_plan({"gpus": 1}, queue=queue)
        d = build(plan, s)
        check(d, plan, s)
    d = build(make_plan(queue="team-a"), settings("bare"))
    assert d["spec"]["jobTemplate"]["metadata"]["labels"][objects.QUEUE_LABEL] == "team-a"
    assert d["spec"]["jobTemplate"]["spec"]["suspend"] is True
    with pytest.raises(ValueError, match="not a valid LocalQueue"):
        build(make_plan(queue="Team A"), settings("bare"))


def test_names_fit_52_characters_and_stay_readable_and_unique():
    s = settings("bare")
    names = ["x" * 300, "Ünïcödé notebook – final (v2).ipynb", "---", "日本語のノート", "a.b_c d", "nightly"]
    seen = set()
    for i, name in enumerate(names):
        plan = make_plan(name=name, id=f"{i:012x}")
        d = build(plan, s)
        check(d, plan, s)
        made = d["metadata"]["name"]
        assert made.startswith("gpuenv-") and made.endswith(plan.id) and len(made) <= 52
        seen.add(made)
    assert len(seen) == len(names)
    assert cronjob.cronjob_name(make_plan(name="Ünïcödé notebook")) == "gpuenv-unicode-notebook-5c3e9a1b2d4f"
    assert cronjob.cronjob_name(make_plan(name="日本語のノート")) == "gpuenv-5c3e9a1b2d4f"
    assert len(cronjob.cronjob_name(make_plan(name="x" * 300))) == 52


def test_an_iso_interval_is_no_cronjob():
    plan = make_plan(cron=None, expression="R/2026-12-01T06:00:00Z/PT6H")
    with pytest.raises(cronjob.CronRequired, match="cron line"):
        cronjob.cronjob_object(plan, settings("bare"))


def test_the_checks_catch_what_the_schema_lets_through():
    good = build(make_plan({"gpus": 1}), settings("bare"))

    def mutate(fn) -> str:
        d = json.loads(json.dumps(good))
        fn(d)
        for version in K8S_VERSIONS:
            kubernetes_validate.validate(d, version, strict=True)
        return " ".join(cronjob.cronjob_problems(d))

    assert "at most 52" in mutate(lambda d: d["metadata"].update(name="gpuenv-" + "a" * 50))
    assert "never start" in mutate(lambda d: d["spec"]["jobTemplate"]["spec"].update(suspend=True))
    assert "timeZone" in mutate(lambda d: d["spec"].update(schedule="CRON_TZ=UTC 0 6 * * *"))
    assert "Forbid nor Allow" in mutate(lambda d: d["spec"].update(concurrencyPolicy="Replace"))
    assert "lacks the label" in mutate(
        lambda d: d["spec"]["jobTemplate"]["metadata"]["labels"].pop(cronjob.SCHEDULE_LABEL)
    )
    assert "backoffLimit" in mutate(lambda d: d["spec"]["jobTemplate"]["spec"].update(backoffLimit=6))
    assert "is not valid" in mutate(lambda d: d["metadata"]["labels"].update({"x": "a b"}))


def test_the_replacing_patch_removes_what_is_gone():
    existing = {"a": 1, "m": {"keep": 1, "drop": 2, "deep": {"x": 1}}, "l": [1, 2], "gone": {"y": 1}}
    desired = {"a": 2, "m": {"keep": 1, "deep": {"z": 3}}, "l": [3], "new": True}
    patch = cronjob.replacing_patch(existing, desired)
    assert patch == {
        "gone": None,
        "a": 2,
        "m": {"drop": None, "keep": 1, "deep": {"x": None, "z": 3}},
        "l": [3],
        "new": True,
    }
