"""The Kubernetes Job of a batch job, built by pure functions with the official client's models.

``job_object(job, folder, settings)`` is the whole translation: no API call, no environment read, so
every Job the backend can create is validated offline (kubernetes-validate, strict) and by the checks
in :mod:`.checks`. What the pod runs is the same runner every backend runs,
``python -m jupyter_gpu_env.runner JOB_FOLDER``, behind a small POSIX shell wrapper that copies its
output both to ``log.txt`` in the job folder and to the pod's log, and passes SIGTERM (cancel) on.

Conventions the backend relies on:

- The Job is named ``nb-<slug>-<job id>`` (at most 56 characters: a valid label value, since pods
  carry the Job's name in a label) and carries the labels :data:`MANAGED_BY`, :data:`JOB_ID_LABEL` and
  :data:`USER_LABEL` on itself and on its pods.
- GPUs: ``nvidia.com/gpu: N`` or one ``nvidia.com/mig-<profile>`` (the device plugin's ``mixed``
  strategy; ``+me`` is spelled ``.me``), requests equal to limits, never both in one container.
- Kueue: only the ``kueue.x-k8s.io/queue-name`` label; Kueue's webhook suspends and resumes the Job.
- ``backoffLimit: 0``, ``restartPolicy: Never``: a notebook is not re-run behind the user's back.
- An opportunistic job (where ``settings.priorities`` maps it) gets its PriorityClass on the pod, its
  Kueue WorkloadPriorityClass as the Job's label, and a ``podFailurePolicy`` that ignores a pod stopped
  for other work (the runner's exit code 3, or the pod's DisruptionTarget condition): ignored failures
  do not count against ``backoffLimit: 0``, so that pod is replaced and the notebook resumes, while any
  other failure still fails the Job at once.
- A kernel session's Job (``kind: kernel``, component :data:`KERNEL_COMPONENT`, which a NetworkPolicy
  letting the server reach kernel pods can select) never gets that policy, whatever its priority: an
  interactive kernel cannot resume in a new pod, so a pod stopped for other work ends its session.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubernetes import client

from ...contracts.jobfiles import EXIT_PREEMPTED
from ...models.jobs import Job
from ...models.resources import MIG_PROFILE_RE
from .entrypoint import ENTRYPOINT

CONTAINER = "runner"
MANAGED_BY_KEY = "app.kubernetes.io/managed-by"
MANAGED_BY = "jupyter-gpu-env"
COMPONENT_KEY = "app.kubernetes.io/component"
KERNEL_COMPONENT = "batch-kernel"  # a kernel session's Job and pod; a notebook's are "batch-job"
JOB_ID_LABEL = "jupyter-gpu-env/job-id"
USER_LABEL = "jupyter-gpu-env/user"
BACKEND_LABEL = "jupyter-gpu-env/backend"
USER_ANNOTATION = "jupyter-gpu-env/user"
NAME_ANNOTATION = "jupyter-gpu-env/job-name"
NOTEBOOK_ANNOTATION = "jupyter-gpu-env/notebook"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "jupyter-gpu-env/priority"  # on opportunistic Jobs and their pods only
WORKLOAD_PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
PRIORITY_KEYS = ("priority_class", "workload_priority_class", "description")
GPU_RESOURCE = "nvidia.com/gpu"
MIG_PREFIX = "nvidia.com/mig-"
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS")

LABEL_VALUE_RE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
DNS1123_LABEL_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS1123_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
QUALIFIED_NAME_RE = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")


@dataclass(frozen=True)
class K8sSettings:
    """Everything :func:`job_object` needs besides the job: the backend's configuration, resolved.

    Lists of dicts are Kubernetes JSON (camelCase), as ``kubectl get -o json`` shows them; they are
    checked by :func:`check_settings`.
    """

    image: str
    namespace: str = "default"
    user: str = "unknown"
    backend_name: str = "kubernetes"
    image_pull_policy: str = "IfNotPresent"
    service_account: str = ""
    pipeline_service_account: str = ""
    python: str = "python"
    volumes: tuple[Mapping[str, Any], ...] = ()
    volume_mounts: tuple[Mapping[str, Any], ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    node_selector: Mapping[str, str] = field(default_factory=dict)
    tolerations: tuple[Mapping[str, Any], ...] = ()
    gpu_tolerations: tuple[Mapping[str, Any], ...] = ()
    local_queue: str = ""
    ttl_seconds_after_finished: int | None = 3600
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    default_cpus: int | None = 1
    default_memory_bytes: int | None = 2 << 30
    cpu_limit: bool = True
    time_limit_grace: int = 60
    pod_security_context: Mapping[str, Any] = field(default_factory=dict)
    container_security_context: Mapping[str, Any] = field(default_factory=dict)
    run_as_user: int | None = None
    run_as_group: int | None = None
    priority_class_name: str = ""
    # priority ("normal", "opportunistic") -> {"priority_class", "workload_priority_class", "description"}
    priorities: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    termination_grace_seconds: int | None = 60


# ----- names -----


def label_value(text: str, fallback: str = "unknown") -> str:
    """A valid label value from any text: invalid characters become '-', at most 63 characters."""
    s = re.sub(r"[^A-Za-z0-9_.-]+", "-", text)[:63]
    s = re.sub(r"^[^A-Za-z0-9]+|[^A-Za-z0-9]+$", "", s)
    return s or fallback


def job_name(job: Job) -> str:
    """``nb-<slug>-<id>``: a DNS-1123 label of at most 56 characters, unique by the job id."""
    slug = re.sub(r"[^a-z0-9]+", "-", job.name.lower()).strip("-")[:38].rstrip("-")
    ident = re.sub(r"[^a-z0-9]+", "", job.id.lower())[:16] or "x"
    return f"nb-{slug}-{ident}" if slug else f"nb-{ident}"


def mig_resource(profile: str) -> str:
    """The extended resource of a MIG profile: the device plugin writes ``1g.10gb+me`` as ``1g.10gb.me``."""
    return MIG_PREFIX + profile.replace("+", ".")


def profile_of_resource(resource: str) -> str | None:
    """The MIG profile a resource name stands for, in the form requests use; None when it is not one."""
    if not resource.startswith(MIG_PREFIX):
        return None
    name = resource.removeprefix(MIG_PREFIX)
    name = re.sub(r"\.me$", "+me", name)
    return name if MIG_PROFILE_RE.fullmatch(name) else None


def quantity(nbytes: int) -> str:
    """Bytes as the shortest exact binary quantity: ``4Gi``, ``512Mi``, else plain bytes."""
    for suffix, size in (("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
        if nbytes % size == 0:
            return f"{nbytes // size}{suffix}"
    return str(nbytes)


def identity_labels(job: Job, settings: K8sSettings) -> dict[str, str]:
    return {
        MANAGED_BY_KEY: MANAGED_BY,
        COMPONENT_KEY: KERNEL_COMPONENT if job.kind == "kernel" else "batch-job",
        JOB_ID_LABEL: label_value(job.id),
        USER_LABEL: label_value(settings.user),
        BACKEND_LABEL: label_value(settings.backend_name),
    }


def selector_for_user(settings: K8sSettings) -> str:
    """The label selector of every Job this user's server manages in the namespace."""
    return f"{MANAGED_BY_KEY}={MANAGED_BY},{USER_LABEL}={label_value(settings.user)}"


# ----- deserializing configuration -----

_API = client.ApiClient()


def to_model(data: Mapping[str, Any], klass: str, what: str) -> Any:
    """A client model from Kubernetes JSON; ValueError naming ``what`` for keys the model does not know."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{what} must be an object in Kubernetes JSON form, not {type(data).__name__}")
    try:
        model = _API._ApiClient__deserialize(dict(data), klass)  # type: ignore[attr-defined]
    except (ValueError, TypeError) as e:
        raise ValueError(f"{what} is not a valid {klass[2:]}: {e}") from None
    back = _API.sanitize_for_serialization(model)  # type: ignore[no-untyped-call]  # the kubernetes client has no type hints
    lost = _lost_keys(dict(data), back)
    if lost:
        raise ValueError(
            f"{what} has keys a {klass[2:]} does not have: {', '.join(lost)} "
            "(write Kubernetes JSON in camelCase, e.g. persistentVolumeClaim.claimName)"
        )
    return model


def _lost_keys(given: Any, kept: Any, where: str = "") -> list[str]:
    if isinstance(given, Mapping):
        kept = kept if isinstance(kept, Mapping) else {}
        out = []
        for k, v in given.items():
            path = f"{where}.{k}" if where else str(k)
            if k not in kept:
                if v is not None:
                    out.append(path)
            else:
                out += _lost_keys(v, kept[k], path)
        return out
    if isinstance(given, list) and isinstance(kept, list):
        return [
            p
            for i, (g, k) in enumerate(zip(given, kept, strict=False))
            for p in _lost_keys(g, k, f"{where}[{i}]")
        ]
    return []


# ----- the Job -----


def job_object(job: Job, folder: str | Path, settings: K8sSettings) -> client.V1Job:
    """The batch/v1 Job that runs ``job`` from ``folder`` (a path the pod sees at the same place)."""
    name = job_name(job)
    labels = {**settings.labels, **identity_labels(job, settings)}
    priority = settings.priorities.get(job.priority) or {}
    opportunistic = job.priority == "opportunistic"
    if opportunistic:
        labels[PRIORITY_LABEL] = "opportunistic"
    job_labels = dict(labels)
    if priority.get("workload_priority_class"):
        job_labels[WORKLOAD_PRIORITY_LABEL] = priority["workload_priority_class"]
    queue = job.queue if job.queue is not None else (settings.local_queue or None)
    if queue is not None:
        if not (DNS1123_SUBDOMAIN_RE.fullmatch(queue) and len(queue) <= 63):
            raise ValueError(f"Kueue queue {queue!r} is not a valid LocalQueue name")
        job_labels[QUEUE_LABEL] = queue
    annotations = {
        **settings.annotations,
        USER_ANNOTATION: settings.user,
        NAME_ANNOTATION: job.name,
        NOTEBOOK_ANNOTATION: job.notebook_path,
    }
    res = job.resources
    if res.mig_profile is not None and not MIG_PROFILE_RE.fullmatch(res.mig_profile):
        raise ValueError(f"MIG profile {res.mig_profile!r} is not valid")
    wants_gpu = res.mig_profile is not None or bool(res.gpus)
    account = service_account(job, settings)
    tolerations = [
        to_model(t, "V1Toleration", "toleration")
        for t in (*settings.tolerations, *(settings.gpu_tolerations if wants_gpu else ()))
    ]
    container = client.V1Container(
        name=CONTAINER,
        image=settings.image,
        image_pull_policy=settings.image_pull_policy,
        command=["/bin/sh", "-c", ENTRYPOINT, "gpu-env-runner", str(folder), settings.python],
        env=[client.V1EnvVar(name=k, value=v) for k, v in _env(job, settings).items()],
        resources=resources(job, settings),
        # A container that fails without a status leaves its last log lines in the pod's status.
        termination_message_policy="FallbackToLogsOnError",
        volume_mounts=[to_model(m, "V1VolumeMount", "volume mount") for m in settings.volume_mounts] or None,
        security_context=(
            to_model(settings.container_security_context, "V1SecurityContext", "container security context")
            if settings.container_security_context
            else None
        ),
    )
    pod_spec = client.V1PodSpec(
        restart_policy="Never",
        containers=[container],
        volumes=[to_model(v, "V1Volume", "volume") for v in settings.volumes] or None,
        node_selector=dict(settings.node_selector) or None,
        tolerations=tolerations or None,
        service_account_name=account or None,
        # The runner needs no API access (a pipeline's node does: it creates the node's children); a pod
        # without a token cannot misuse one.
        automount_service_account_token=bool(account),
        enable_service_links=False,
        security_context=_pod_security_context(settings),
        priority_class_name=priority.get("priority_class") or settings.priority_class_name or None,
        termination_grace_period_seconds=settings.termination_grace_seconds,
    )
    limit = res.time_limit_seconds
    spec = client.V1JobSpec(
        backoff_limit=0,
        completions=1,
        parallelism=1,
        ttl_seconds_after_finished=settings.ttl_seconds_after_finished,
        # The runner stops at the limit itself, saving what ran; Kubernetes ends the pod a little
        # later if the runner cannot (the timer also counts scheduling and the image pull).
        active_deadline_seconds=limit + settings.time_limit_grace if limit else None,
        # A kernel's pod stopped for other work is not replaced (backoffLimit 0 fails the Job): the
        # session ends, as any kernel's whose allocation ends.
        pod_failure_policy=preemption_policy() if opportunistic and job.kind != "kernel" else None,
        template=client.V1PodTemplateSpec(
            metadata=client.V1ObjectMeta(labels=labels, annotations=annotations), spec=pod_spec
        ),
    )
    return client.V1Job(
        api_version="batch/v1",
        kind="Job",
        metadata=client.V1ObjectMeta(
            name=name, namespace=settings.namespace or None, labels=job_labels, annotations=annotations
        ),
        spec=spec,
    )


def preemption_policy() -> client.V1PodFailurePolicy:
    """An opportunistic Job's pod stopped for other work is replaced, not counted as a failure: the
    runner's :data:`EXIT_PREEMPTED` (it saved the notebook and recorded the attempt), or a pod the
    cluster disrupted (preempted by the scheduler, evicted, its node drained or lost) before it could."""
    return client.V1PodFailurePolicy(
        rules=[
            client.V1PodFailurePolicyRule(
                action="Ignore",
                on_pod_conditions=[
                    client.V1PodFailurePolicyOnPodConditionsPattern(type="DisruptionTarget", status="True")
                ],
            ),
            client.V1PodFailurePolicyRule(
                action="Ignore",
                on_exit_codes=client.V1PodFailurePolicyOnExitCodesRequirement(
                    container_name=CONTAINER, operator="In", values=[EXIT_PREEMPTED]
                ),
            ),
        ]
    )


def service_account(job: Job, settings: K8sSettings) -> str:
    """The pod's service account: a pipeline node's pod creates the node's children with it."""
    if job.pipeline_id is not None and settings.pipeline_service_account:
        return settings.pipeline_service_account
    return settings.service_account


def resources(job: Job, settings: K8sSettings) -> client.V1ResourceRequirements:
    """CPU and memory requests (limits too, unless CPU limits are off); GPUs with requests == limits."""
    res = job.resources
    requests: dict[str, str] = {}
    limits: dict[str, str] = {}
    cpus = res.cpus or settings.default_cpus
    if cpus:
        requests["cpu"] = str(cpus)
        if settings.cpu_limit:
            limits["cpu"] = str(cpus)
    memory = res.memory_bytes or settings.default_memory_bytes
    if memory:
        requests["memory"] = limits["memory"] = quantity(memory)
    if res.mig_profile is not None:
        requests[mig_resource(res.mig_profile)] = limits[mig_resource(res.mig_profile)] = "1"
    elif res.gpus:
        requests[GPU_RESOURCE] = limits[GPU_RESOURCE] = str(res.gpus)
    return client.V1ResourceRequirements(requests=requests or None, limits=limits or None)


def _env(job: Job, settings: K8sSettings) -> dict[str, str]:
    env = {"PYTHONUNBUFFERED": "1"}
    cpus = job.resources.cpus or settings.default_cpus
    if cpus:
        env.update(dict.fromkeys(THREAD_VARS, str(cpus)))
    if job.resources.mig_profile is None and not job.resources.gpus:
        # Images built on CUDA's set NVIDIA_VISIBLE_DEVICES=all: without this, a pod that asked
        # for no GPU would see every GPU of its node through the NVIDIA runtime.
        env["NVIDIA_VISIBLE_DEVICES"] = "void"
    env.update(settings.env)
    env["JUPYTER_GPU_ENV_JOB_ID"] = job.id
    return env


def _pod_security_context(settings: K8sSettings) -> client.V1PodSecurityContext | None:
    data = dict(settings.pod_security_context)
    if settings.run_as_user is not None:
        data.setdefault("runAsUser", settings.run_as_user)
    if settings.run_as_group is not None:
        data.setdefault("runAsGroup", settings.run_as_group)
    return to_model(data, "V1PodSecurityContext", "pod security context") if data else None


def as_dict(obj: Any) -> dict[str, Any]:
    """A model as the API's JSON (camelCase, no nulls)."""
    data: dict[str, Any] = _API.sanitize_for_serialization(obj)  # type: ignore[no-untyped-call]  # the kubernetes client has no type hints
    return data
