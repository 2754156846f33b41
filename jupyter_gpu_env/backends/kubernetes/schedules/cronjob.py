"""The CronJob of a schedule, built by pure functions like every Job we make (:mod:`..objects`).

``cronjob_object(plan, settings)`` is the whole translation: ``spec.schedule`` is the plan's cron line
and ``spec.timeZone`` its IANA zone (GA in Kubernetes 1.27); ``concurrencyPolicy`` is ``Forbid`` for
``overlap: skip`` (a run due while the last one still runs, or still waits in Kueue, is not started) and
``Allow`` for ``allow``; ``startingDeadlineSeconds`` the plan's; ``suspend`` true while the schedule is
paused or has no run left. The job template is an ordinary job's (:func:`..objects.job_object` of the
plan's template: image, resources, GPUs or a MIG slice, volumes, security contexts, env) whose container
runs ``python -m jupyter_gpu_env.backends.kubernetes.schedules.tick --run-here SCHEDULE_FOLDER``: the tick makes the run's
folder and record there and runs the runner, so the server adopts the run when it next looks.

Conventions:

- The CronJob is named ``gpuenv-<slug>-<schedule id>``, at most 52 characters (the controller appends
  11 to name each Job) and carries :data:`SCHEDULE_LABEL` on itself, its Jobs and their pods, with the
  labels ordinary Jobs carry except the job id (each run has its own, made by the tick).
- Kueue: the queue label on the job template, and the template ``suspend: true`` (as Kueue's guide for
  CronJobs has it): each Job waits suspended until Kueue admits it.
- The pod learns its Job's name from the downward API (:data:`BACKEND_JOB_ENV`): the tick records it
  as the run's ``backend_job_id``, which is how the backend follows a run it did not submit.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import Any

from kubernetes import client

from ....contracts.schedules.plan import SchedulePlan
from ..checks import label_key_ok, problems
from ..objects import (
    COMPONENT_KEY,
    DNS1123_LABEL_RE,
    JOB_ID_LABEL,
    LABEL_VALUE_RE,
    MANAGED_BY,
    MANAGED_BY_KEY,
    NAME_ANNOTATION,
    QUEUE_LABEL,
    USER_LABEL,
    K8sSettings,
    job_object,
    label_value,
)
from .tick import MODULE as TICK_MODULE

SCHEDULE_LABEL = "jupyter-gpu-env/schedule"
EXPRESSION_ANNOTATION = "jupyter-gpu-env/schedule-expression"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"  # set on every Job's pods since Kubernetes 1.27
BACKEND_JOB_ENV = "JUPYTER_GPU_ENV_BACKEND_JOB_ID"
MAX_NAME = 52  # a CronJob's name: the controller appends "-<11 digits>" for its Jobs (63 at most)
PREFIX = "gpuenv-"
SUCCESSFUL_HISTORY = 3  # finished Jobs the controller keeps (their pods' logs): the records are in folders
FAILED_HISTORY = 3
_CRON_MACROS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")


class CronRequired(ValueError):
    """The plan has no cron form (an ISO-8601 interval): a CronJob cannot hold it."""


def cronjob_name(plan: SchedulePlan) -> str:
    """``gpuenv-<slug>-<id>``: a DNS-1123 label of at most 52 characters, unique by the schedule's id,
    readable by its name (accents dropped: "Ünïcödé" gives "unicode")."""
    ident = re.sub(r"[^a-z0-9]+", "", plan.id.lower())[:16] or "x"
    room = MAX_NAME - len(PREFIX) - len(ident) - 1
    plain = unicodedata.normalize("NFKD", plan.name).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", plain.lower()).strip("-")[:room].rstrip("-")
    return f"{PREFIX}{slug}-{ident}" if slug else f"{PREFIX}{ident}"


def schedule_selector(settings: K8sSettings) -> str:
    """The label selector of every CronJob this user's server keeps in the namespace."""
    return f"{MANAGED_BY_KEY}={MANAGED_BY},{USER_LABEL}={label_value(settings.user)},{SCHEDULE_LABEL}"


def cronjob_object(plan: SchedulePlan, settings: K8sSettings) -> client.V1CronJob:
    """The batch/v1 CronJob that starts ``plan``'s runs; CronRequired without a cron line, ValueError
    for what no Job could be made of (a bad queue or MIG profile)."""
    if not plan.cron:
        raise CronRequired(
            f"The Kubernetes backend keeps cron schedules only, and '{plan.expression}' is an ISO-8601 "
            "interval. Write it as a cron line (e.g. '0 */6 * * *' for every 6 hours, '0 6 * * *' for "
            "06:00 every day)."
        )
    body = job_object(plan.template, plan.folder, settings)
    spec, meta = body.spec, body.metadata
    assert spec is not None and meta is not None and spec.template.metadata is not None
    assert spec.template.spec is not None  # job_object builds them all
    ident = label_value(plan.id)
    queued = QUEUE_LABEL in (meta.labels or {})
    for where in (meta, spec.template.metadata):
        labels = {k: v for k, v in (where.labels or {}).items() if k != JOB_ID_LABEL}
        where.labels = {**labels, SCHEDULE_LABEL: ident}
        where.annotations = {**(where.annotations or {}), NAME_ANNOTATION: plan.name}
    container = spec.template.spec.containers[0]
    container.command = [settings.python, "-m", TICK_MODULE, "--run-here", str(plan.folder)]
    container.env = [
        *(e for e in container.env or [] if e.name != "JUPYTER_GPU_ENV_JOB_ID"),  # the tick makes each run's
        client.V1EnvVar(
            name=BACKEND_JOB_ENV,
            value_from=client.V1EnvVarSource(
                field_ref=client.V1ObjectFieldSelector(field_path=f"metadata.labels['{JOB_NAME_LABEL}']")
            ),
        ),
    ]
    if queued:
        spec.suspend = True  # Kueue admits each Job; it starts none before
    cron_labels = {
        **{k: v for k, v in (meta.labels or {}).items() if k not in (QUEUE_LABEL, JOB_ID_LABEL)},
        COMPONENT_KEY: "schedule",
    }
    return client.V1CronJob(
        api_version="batch/v1",
        kind="CronJob",
        metadata=client.V1ObjectMeta(
            name=cronjob_name(plan),
            namespace=meta.namespace,
            labels=cron_labels,
            annotations={**(meta.annotations or {}), EXPRESSION_ANNOTATION: plan.expression},
        ),
        spec=client.V1CronJobSpec(
            schedule=plan.cron,
            time_zone=plan.timezone or None,
            concurrency_policy="Forbid" if plan.overlap == "skip" else "Allow",
            starting_deadline_seconds=plan.starting_deadline_seconds,
            suspend=not plan.active or plan.next_due is None,
            successful_jobs_history_limit=SUCCESSFUL_HISTORY,
            failed_jobs_history_limit=FAILED_HISTORY,
            job_template=client.V1JobTemplateSpec(
                metadata=client.V1ObjectMeta(labels=meta.labels, annotations=meta.annotations), spec=spec
            ),
        ),
    )


def replacing_patch(existing: Any, desired: Any) -> Any:
    """A JSON merge patch (RFC 7386) that makes ``existing`` into ``desired``: each key ``existing``
    has and ``desired`` lacks is set to null (removed), maps are patched key by key, and everything
    else (lists, scalars) is replaced whole."""
    if not (isinstance(existing, Mapping) and isinstance(desired, Mapping)):
        return desired
    patch: dict[str, Any] = {k: None for k in existing if k not in desired}
    for key, value in desired.items():
        patch[key] = replacing_patch(existing[key], value) if key in existing else value
    return patch


def cronjob_problems(cronjob: Mapping[str, Any]) -> list[str]:
    """What the schema does not check about a CronJob: its name, its schedule and labels, and its job
    template as :func:`..checks.problems` checks a Job (with Kueue's ``suspend`` allowed there)."""
    out: list[str] = []
    meta = cronjob.get("metadata") or {}
    name = meta.get("name") or ""
    if not (DNS1123_LABEL_RE.fullmatch(name) and len(name) <= MAX_NAME):
        out.append(f"CronJob name '{name}' is not a DNS-1123 label of at most {MAX_NAME} characters")
    spec = cronjob.get("spec") or {}
    schedule = str(spec.get("schedule") or "")
    if not (len(schedule.split()) == 5 or schedule in _CRON_MACROS) or "TZ" in schedule:
        out.append(f"schedule '{schedule}' is not five cron fields or a macro (the zone goes in timeZone)")
    if spec.get("concurrencyPolicy") not in ("Forbid", "Allow"):
        out.append(f"concurrencyPolicy {spec.get('concurrencyPolicy')!r} is neither Forbid nor Allow")
    for key, value in (meta.get("labels") or {}).items():
        if not label_key_ok(key) or len(value) > 63 or not LABEL_VALUE_RE.fullmatch(value):
            out.append(f"CronJob label '{key}: {value}' is not valid")
    template = spec.get("jobTemplate") or {}
    job_meta = template.get("metadata") or {}
    job_spec = dict(template.get("spec") or {})
    suspend = job_spec.pop("suspend", None)
    if suspend is not None and not (suspend is True and QUEUE_LABEL in (job_meta.get("labels") or {})):
        out.append("the job template sets suspend without a Kueue queue: its Jobs would never start")
    pod_labels = ((job_spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    for where, labels in (("CronJob", meta), ("job template", job_meta), ("pod", {"labels": pod_labels})):
        if SCHEDULE_LABEL not in (labels.get("labels") or {}):
            out.append(f"the {where} lacks the label {SCHEDULE_LABEL}")
    as_job = {"metadata": {**job_meta, "name": name}, "spec": job_spec}
    return out + problems(as_job)
