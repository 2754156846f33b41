"""What Kubernetes' own schema does not check: our rules for the backend's settings (at start) and for
every Job built (names, labels, quantities, extended resources, restart policy, Kueue's label)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from kubernetes.utils import parse_quantity

from .objects import (
    COMPONENT_KEY,
    DNS1123_LABEL_RE,
    DNS1123_SUBDOMAIN_RE,
    GPU_RESOURCE,
    KERNEL_COMPONENT,
    LABEL_VALUE_RE,
    MIG_PREFIX,
    PRIORITY_KEYS,
    PRIORITY_LABEL,
    QUALIFIED_NAME_RE,
    QUEUE_LABEL,
    K8sSettings,
    to_model,
)


def check_settings(settings: K8sSettings) -> list[str]:
    """What is wrong with the configuration, in words (empty when nothing is)."""
    errors: list[str] = []

    def each(items: Iterable[Mapping[str, Any]], klass: str, what: str) -> None:
        for i, item in enumerate(items):
            try:
                to_model(item, klass, f"{what}[{i}]")
            except ValueError as e:
                errors.append(str(e))

    each(settings.volumes, "V1Volume", "volumes")
    each(settings.volume_mounts, "V1VolumeMount", "volume_mounts")
    each(settings.tolerations, "V1Toleration", "tolerations")
    each(settings.gpu_tolerations, "V1Toleration", "gpu_tolerations")
    for what, data, klass in (
        ("pod_security_context", settings.pod_security_context, "V1PodSecurityContext"),
        ("container_security_context", settings.container_security_context, "V1SecurityContext"),
    ):
        if data:
            try:
                to_model(data, klass, what)
            except ValueError as e:
                errors.append(str(e))
    names = {v.get("name") for v in settings.volumes}
    for m in settings.volume_mounts:
        if m.get("name") not in names:
            errors.append(f"volume_mounts names volume '{m.get('name')}', which volumes does not define")
    if not settings.image:
        errors.append(
            "no image: set c.KubernetesBackend.image, or run the server where JUPYTER_IMAGE_SPEC is set "
            "(JupyterHub's KubeSpawner sets it)"
        )
    if settings.namespace and not DNS1123_LABEL_RE.fullmatch(settings.namespace):
        errors.append(f"namespace '{settings.namespace}' is not a valid namespace name")
    for option, account in (
        ("service_account", settings.service_account),
        ("pipeline_service_account", settings.pipeline_service_account),
    ):
        if account and not (DNS1123_SUBDOMAIN_RE.fullmatch(account) and len(account) <= 253):
            errors.append(f"{option} '{account}' is not a valid service account name")
    if settings.local_queue and not DNS1123_SUBDOMAIN_RE.fullmatch(settings.local_queue):
        errors.append(f"local_queue '{settings.local_queue}' is not a valid LocalQueue name")
    if settings.image_pull_policy not in ("Always", "IfNotPresent", "Never"):
        errors.append("image_pull_policy must be Always, IfNotPresent or Never")
    for key, value in {**settings.labels, **settings.node_selector}.items():
        if not label_key_ok(key) or not LABEL_VALUE_RE.fullmatch(str(value)) or len(str(value)) > 63:
            errors.append(f"'{key}: {value}' is not a valid label")
    for key in settings.annotations:
        if not label_key_ok(key):
            errors.append(f"'{key}' is not a valid annotation key")
    for name in settings.env:
        if not re.fullmatch(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$", name):
            errors.append(f"'{name}' is not a valid environment variable name")
    errors += priority_problems(settings.priorities)
    return errors


def priority_problems(priorities: Mapping[str, Mapping[str, str]]) -> list[str]:
    """What is wrong with ``c.KubernetesBackend.priorities``, in words."""
    errors: list[str] = []
    for name, entry in priorities.items():
        where = f"priorities['{name}']"
        if name not in ("normal", "opportunistic"):
            errors.append(f"{where}: the priorities are 'normal' and 'opportunistic', not '{name}'")
            continue
        unknown = sorted(set(entry) - set(PRIORITY_KEYS))
        if unknown:
            errors.append(
                f"{where} has keys it does not know: {', '.join(unknown)} (it takes {', '.join(PRIORITY_KEYS)})"
            )
        pod_class, workload_class = entry.get("priority_class", ""), entry.get("workload_priority_class", "")
        if pod_class and not (DNS1123_SUBDOMAIN_RE.fullmatch(pod_class) and len(pod_class) <= 253):
            errors.append(f"{where}: priority_class '{pod_class}' is not a valid PriorityClass name")
        if workload_class and not (
            DNS1123_SUBDOMAIN_RE.fullmatch(workload_class) and len(workload_class) <= 63
        ):
            errors.append(
                f"{where}: workload_priority_class '{workload_class}' is not a valid WorkloadPriorityClass "
                "name (a DNS subdomain of at most 63 characters: it is a label's value)"
            )
        if name == "opportunistic" and not (pod_class or workload_class):
            errors.append(
                f"{where} needs a priority_class or a workload_priority_class: without one, nothing lets "
                "other work take its GPU"
            )
    return errors


def label_key_ok(key: str) -> bool:
    """A label or annotation key: an optional DNS subdomain prefix and a qualified name."""
    prefix, _, name = key.rpartition("/")
    if prefix and (len(prefix) > 253 or not DNS1123_SUBDOMAIN_RE.fullmatch(prefix)):
        return False
    return bool(name) and len(name) <= 63 and bool(QUALIFIED_NAME_RE.fullmatch(name))


def problems(job: Mapping[str, Any]) -> list[str]:
    """Checks on a Job as JSON that the OpenAPI schema does not make: names, labels, quantities,
    extended resources, restart policy, Kueue's label and suspend.
    """
    out: list[str] = []
    meta = job.get("metadata") or {}
    name = meta.get("name") or ""
    if not (DNS1123_LABEL_RE.fullmatch(name) and len(name) <= 63):
        out.append(f"Job name '{name}' is not a DNS-1123 label of at most 63 characters")
    spec = job.get("spec") or {}
    template = spec.get("template") or {}
    pod = template.get("spec") or {}
    for where, labels in (
        ("Job", meta.get("labels") or {}),
        ("pod", (template.get("metadata") or {}).get("labels") or {}),
    ):
        for key, value in labels.items():
            if not label_key_ok(key):
                out.append(f"{where} label key '{key}' is not a qualified name")
            if len(value) > 63 or not LABEL_VALUE_RE.fullmatch(value):
                out.append(f"{where} label '{key}: {value}' has an invalid value")
    if pod.get("restartPolicy") not in ("Never", "OnFailure"):
        out.append(f"restartPolicy is {pod.get('restartPolicy')!r}; a Job needs Never or OnFailure")
    if spec.get("podFailurePolicy") is not None:
        if (meta.get("labels") or {}).get(PRIORITY_LABEL) != "opportunistic":
            out.append("podFailurePolicy on a Job that is not opportunistic: a normal job is never re-run")
        if (meta.get("labels") or {}).get(COMPONENT_KEY) == KERNEL_COMPONENT:
            out.append("podFailurePolicy on a kernel's Job: an interactive kernel is never replaced")
        if pod.get("restartPolicy") != "Never":
            out.append("podFailurePolicy needs restartPolicy Never")
        actions = {r.get("action") for r in (spec["podFailurePolicy"].get("rules") or [])}
        if actions - {"Ignore"}:
            out.append(
                f"podFailurePolicy may only ignore a preemption, not {', '.join(sorted(actions - {'Ignore'}))}"
            )
    if spec.get("completionMode") == "Indexed":  # a sweep: each index fails alone, none is re-run
        if spec.get("backoffLimitPerIndex") != 0 or "backoffLimit" in spec:
            out.append(
                "an Indexed Job needs backoffLimitPerIndex 0 and no backoffLimit: a failed run is not re-run"
            )
        if not 1 <= (spec.get("parallelism") or 0) <= (spec.get("completions") or 0):
            out.append("an Indexed Job's parallelism must be from 1 to its completions")
    elif spec.get("backoffLimit") != 0:
        out.append("backoffLimit must be 0: a failed notebook is not re-run")
    if "suspend" in spec:
        out.append("spec.suspend is set; Kueue's webhook manages it")
    queue = (meta.get("labels") or {}).get(QUEUE_LABEL)
    if queue is not None and not DNS1123_SUBDOMAIN_RE.fullmatch(queue):
        out.append(f"Kueue queue name '{queue}' is not a valid LocalQueue name")
    for c in [*(pod.get("containers") or []), *(pod.get("initContainers") or [])]:
        res = c.get("resources") or {}
        requests, limits = res.get("requests") or {}, res.get("limits") or {}
        for kind, values in (("request", requests), ("limit", limits)):
            for key, value in values.items():
                try:
                    q = parse_quantity(value)  # type: ignore[no-untyped-call]  # the kubernetes client has no type hints
                except ValueError:
                    out.append(f"{kind} {key}: '{value}' is not a quantity")
                    continue
                if q < 0:
                    out.append(f"{kind} {key}: '{value}' is negative")
                if "/" in key and key.split("/", 1)[0] not in ("kubernetes.io",) and q != int(q):
                    out.append(f"{kind} {key}: extended resources are whole numbers, not '{value}'")
        for key in {**requests, **limits}:
            if "/" in key and not key.startswith("kubernetes.io/") and requests.get(key) != limits.get(key):
                out.append(
                    f"extended resource {key}: requests ({requests.get(key)}) must equal limits ({limits.get(key)})"
                )
        for key in requests.keys() & limits.keys():
            try:
                asked, most = parse_quantity(requests[key]), parse_quantity(limits[key])  # type: ignore[no-untyped-call]  # the kubernetes client has no type hints
                if asked > most:
                    out.append(f"{key}: request {requests[key]} exceeds limit {limits[key]}")
            except ValueError:
                pass
        gpu_keys = [k for k in {**requests, **limits} if k == GPU_RESOURCE]
        mig_keys = [k for k in {**requests, **limits} if k.startswith(MIG_PREFIX)]
        if gpu_keys and mig_keys:
            out.append(f"container {c.get('name')} asks for both {GPU_RESOURCE} and {', '.join(mig_keys)}")
        if len(mig_keys) > 1:
            out.append(f"container {c.get('name')} asks for several MIG profiles: {', '.join(mig_keys)}")
    return out
