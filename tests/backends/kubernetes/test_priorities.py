"""Opportunistic jobs on Kubernetes, built: the site's PriorityClass and Kueue WorkloadPriorityClass,
and the podFailurePolicy that replaces a pod stopped for other work without counting it as a failure;
a normal job never gets that policy. Every object is checked strictly against the pinned Kubernetes
schemas and by the project's checks; c.KubernetesBackend.priorities is checked at start."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from helpers import job_record, run_record
from traitlets.config import Config

from jupyter_gpu_env.backends.kubernetes import checks, objects
from jupyter_gpu_env.backends.kubernetes.backend import KubernetesBackend
from jupyter_gpu_env.backends.kubernetes.pipelines.carry import MANIFEST
from jupyter_gpu_env.backends.kubernetes.schedules import cronjob
from jupyter_gpu_env.backends.kubernetes.sweeps import indexed
from jupyter_gpu_env.contracts.schedules.plan import SchedulePlan
from jupyter_gpu_env.errors import Conflict
from jupyter_gpu_env.jobs.runner.runner import EXIT_PREEMPTED
from jupyter_gpu_env.models.backends import NORMAL_WORDS, OPPORTUNISTIC_WORDS
from jupyter_gpu_env.models.jobs import Job, JobRequest
from jupyter_gpu_env.models.resources import JobResources

kubernetes_validate = pytest.importorskip("kubernetes_validate")
pytestmark = pytest.mark.usefixtures("schemas_read_once")
K8S_VERSIONS = ("1.29.0", "1.37.0")

PRIORITIES = {"opportunistic": {"priority_class": "batch-low", "workload_priority_class": "opportunistic"}}
RETRY_RULES = [
    {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
    {
        "action": "Ignore",
        "onExitCodes": {"containerName": "runner", "operator": "In", "values": [EXIT_PREEMPTED]},
    },
]


def settings(**kw) -> objects.K8sSettings:
    base = dict(image="quay.io/jupyter/pytorch-notebook:cuda12", namespace="jhub", local_queue="team-a",
                priorities=PRIORITIES, priority_class_name="batch-default")  # fmt: skip
    return objects.K8sSettings(**{**base, **kw})


def make_job(priority: str = "opportunistic", **fields) -> Job:
    return job_record("3f2a9c0d1e4b", name="train", backend="kubernetes", priority=priority,
                      resources=JobResources(gpus=1), created_at=time.time(), **fields)  # fmt: skip


def valid(body: dict) -> dict:
    for version in K8S_VERSIONS:
        kubernetes_validate.validate(body, version, strict=True)
    assert checks.problems(body) == []
    return body


def test_an_opportunistic_job_gets_its_classes_and_is_replaced_when_stopped_for_other_work():
    body = valid(objects.as_dict(objects.job_object(make_job(), "/home/u/jobs/x", settings())))
    spec, pod = body["spec"], body["spec"]["template"]["spec"]
    assert pod["priorityClassName"] == "batch-low"  # the site's class for it, over the default one
    assert body["metadata"]["labels"][objects.WORKLOAD_PRIORITY_LABEL] == "opportunistic"
    assert objects.WORKLOAD_PRIORITY_LABEL not in body["spec"]["template"]["metadata"]["labels"]
    assert body["metadata"]["labels"][objects.PRIORITY_LABEL] == "opportunistic"
    assert body["spec"]["template"]["metadata"]["labels"][objects.PRIORITY_LABEL] == "opportunistic"
    # Ignored failures do not count: backoffLimit 0 still fails the Job at once on any other failure.
    assert spec["podFailurePolicy"] == {"rules": RETRY_RULES}
    assert spec["backoffLimit"] == 0 and pod["restartPolicy"] == "Never"
    assert pod["terminationGracePeriodSeconds"] == 60  # time for the runner to save and record


def test_a_normal_job_is_never_given_the_retry_policy():
    configured = {**PRIORITIES, "normal": {"workload_priority_class": "interactive-first"}}
    for s in (settings(), settings(priorities={}), settings(priorities=configured)):
        body = valid(objects.as_dict(objects.job_object(make_job("normal"), "/home/u/jobs/x", s)))
        assert "podFailurePolicy" not in body["spec"] and body["spec"]["backoffLimit"] == 0
        assert objects.PRIORITY_LABEL not in body["metadata"]["labels"]
        assert body["spec"]["template"]["spec"]["priorityClassName"] == "batch-default"
    assert body["metadata"]["labels"][objects.WORKLOAD_PRIORITY_LABEL] == "interactive-first"
    # Even where opportunistic is not configured, what the contract refused never runs unprotected:
    # an opportunistic job still gets the policy, and no classes.
    body = valid(objects.as_dict(objects.job_object(make_job(), "/x", settings(priorities={}))))
    assert body["spec"]["podFailurePolicy"] == {"rules": RETRY_RULES}
    assert body["spec"]["template"]["spec"]["priorityClassName"] == "batch-default"
    assert objects.WORKLOAD_PRIORITY_LABEL not in body["metadata"]["labels"]


@pytest.mark.parametrize("priority", ["normal", "opportunistic"])
def test_a_kernel_sessions_job_is_never_replaced_whatever_its_priority(priority):
    """An interactive kernel cannot resume in a new pod: its Job fails at once when its pod is stopped,
    for other work or not (backoffLimit 0, no podFailurePolicy), and the session ends."""
    body = valid(
        objects.as_dict(objects.job_object(make_job(priority, kind="kernel"), "/u/jobs/k", settings()))
    )
    spec, pod = body["spec"], body["spec"]["template"]["spec"]
    assert "podFailurePolicy" not in spec and spec["backoffLimit"] == 0 and pod["restartPolicy"] == "Never"
    for labels in (body["metadata"]["labels"], body["spec"]["template"]["metadata"]["labels"]):
        assert labels[objects.COMPONENT_KEY] == objects.KERNEL_COMPONENT  # what a NetworkPolicy selects
    # An opportunistic one still runs where other work may stop it: its classes stay.
    assert (pod["priorityClassName"] == "batch-low") == (priority == "opportunistic")
    notebook = objects.as_dict(objects.job_object(make_job(priority), "/u/jobs/n", settings()))
    assert notebook["metadata"]["labels"][objects.COMPONENT_KEY] == "batch-job"
    assert ("podFailurePolicy" in notebook["spec"]) == (priority == "opportunistic")
    # The checks refuse the policy on a kernel's Job, whoever put it there.
    body["spec"]["podFailurePolicy"] = {"rules": RETRY_RULES}
    assert any("a kernel's Job" in p for p in checks.problems(body))


def test_the_checks_refuse_a_retry_policy_on_a_normal_job_or_one_that_does_more_than_ignore():
    body = objects.as_dict(objects.job_object(make_job(), "/x", settings()))
    normal = json.loads(json.dumps(body))
    del normal["metadata"]["labels"][objects.PRIORITY_LABEL]
    assert any("not opportunistic" in p for p in checks.problems(normal))
    failing = json.loads(json.dumps(body))
    failing["spec"]["podFailurePolicy"]["rules"].append(
        {"action": "Count", "onExitCodes": {"operator": "In", "values": [1]}}
    )
    assert any("only ignore" in p for p in checks.problems(failing))
    restarting = json.loads(json.dumps(body))
    restarting["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure"
    assert any("needs restartPolicy Never" in p for p in checks.problems(restarting))


def test_a_sweep_of_opportunistic_runs_is_one_indexed_job_whose_stopped_pods_are_replaced():
    runs = [run_record(i, backend="kubernetes", priority="opportunistic") for i in range(3)]
    body = valid(
        objects.as_dict(indexed.indexed_job_object(runs, Path("/home/u/jobs/s/runs.txt"), 2, settings()))
    )
    assert body["spec"]["podFailurePolicy"] == {"rules": RETRY_RULES}
    assert body["spec"]["backoffLimitPerIndex"] == 0 and "backoffLimit" not in body["spec"]
    assert body["metadata"]["labels"][objects.WORKLOAD_PRIORITY_LABEL] == "opportunistic"
    assert body["spec"]["template"]["spec"]["priorityClassName"] == "batch-low"
    normal = [run_record(i, backend="kubernetes") for i in range(3)]
    plain = valid(
        objects.as_dict(indexed.indexed_job_object(normal, Path("/home/u/jobs/s/runs.txt"), 2, settings()))
    )
    assert "podFailurePolicy" not in plain["spec"]


def test_an_opportunistic_schedules_jobs_get_the_same():
    plan = SchedulePlan(
        id="5c3e9a1b2d4f", name="nightly", folder=Path("/home/u/.jupyter-gpu-env/schedules/5c3e9a1b2d4f"),
        template=make_job(), expression="0 6 * * *", cron="0 6 * * *", timezone="UTC", overlap="skip",
        active=True, next_due=time.time() + 3600, generation=1,
    )  # fmt: skip
    body = objects.as_dict(cronjob.cronjob_object(plan, settings()))
    for version in K8S_VERSIONS:
        kubernetes_validate.validate(body, version, strict=True)
    assert cronjob.cronjob_problems(body) == []
    template = body["spec"]["jobTemplate"]
    assert template["spec"]["podFailurePolicy"] == {"rules": RETRY_RULES}
    assert template["metadata"]["labels"][objects.WORKLOAD_PRIORITY_LABEL] == "opportunistic"
    assert template["spec"]["template"]["spec"]["priorityClassName"] == "batch-low"


async def test_an_opportunistic_pipeline_node_is_staged_with_the_same(cluster, ws):
    backend = ws.backend(cluster, settings=ws.settings(priorities=PRIORITIES))
    backend.job_folder = lambda job: ws.root / job.job_dir
    node = make_job(pipeline_id="7a7a7a7a7a7a", job_dir="jobs/train-3f2a9c0d1e4b")
    (ws.root / node.job_dir).mkdir(parents=True)
    try:
        await backend.stage([node])
        staged = valid(json.loads((ws.root / node.job_dir / MANIFEST).read_text()))
        assert staged["spec"]["podFailurePolicy"] == {"rules": RETRY_RULES}
        assert staged == objects.as_dict(objects.job_object(node, ws.root / node.job_dir, backend.settings))
    finally:
        await backend.close()


def build(**options) -> KubernetesBackend:
    return KubernetesBackend("k8s", config=Config({"KubernetesBackend": {"image": "x:1", **options}}))


def test_opportunistic_is_offered_only_where_configured_and_in_the_sites_words():
    plain = build()
    assert [(p.name, p.description) for p in plain.info().priorities] == [("normal", NORMAL_WORDS)]
    with pytest.raises(Conflict) as refused:
        plain.validate(JobRequest(notebook_path="a.ipynb", backend="k8s", priority="opportunistic"))
    assert refused.value.reason == "priority_unavailable"

    offered = build(priorities=PRIORITIES).info().priorities
    assert [(p.name, p.description) for p in offered] == [
        ("normal", NORMAL_WORDS),
        ("opportunistic", OPPORTUNISTIC_WORDS),
    ]
    worded = build(
        priorities={
            "opportunistic": {
                **PRIORITIES["opportunistic"],
                "description": "Spare A100s; stopped for the day's interactive work.",
            }
        }
    )
    assert worded.info().priorities[1].description == "Spare A100s; stopped for the day's interactive work."
    worded.validate(JobRequest(notebook_path="a.ipynb", backend="k8s", priority="opportunistic"))
    assert worded.settings.termination_grace_seconds == 60
    assert build(termination_grace_seconds=300).settings.termination_grace_seconds == 300


def test_bad_priorities_stop_the_start_with_every_reason():
    with pytest.raises(ValueError) as e:
        build(
            priorities={
                "opportunistic": {"description": "no class"},
                "low": {"priority_class": "x"},
                "normal": {"priority_class": "Not_A_Name", "workload_priority_class": "w" * 64, "queue": "q"},
            }
        )
    text = str(e.value)
    assert text.startswith("c.KubernetesBackend: ")
    assert "priorities['opportunistic'] needs a priority_class or a workload_priority_class" in text
    assert "the priorities are 'normal' and 'opportunistic', not 'low'" in text
    assert "priority_class 'Not_A_Name' is not a valid PriorityClass name" in text
    assert "is not a valid WorkloadPriorityClass name" in text
    assert "priorities['normal'] has keys it does not know: queue" in text
