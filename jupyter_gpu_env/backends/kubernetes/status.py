"""What a Kubernetes Job's state is and why it waits: pure readers of Job, Pod, Workload and Node objects
as the API returns them (plain dicts), read and tested apart from the backend that fetches them.
"""

from __future__ import annotations

import ipaddress
import logging
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from ...contracts.jobfiles import EXIT_PREEMPTED
from ..base import Observation
from . import objects
from .capacity import GPU, allocatable_from_labels, capacity, gpu_resources

log = logging.getLogger(__name__)

_PENDING_WAITING = {
    "ErrImagePull",
    "ImagePullBackOff",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
    "RunContainerError",
}

# Why a pod was stopped, from its DisruptionTarget condition's reason (Kubernetes 1.26+): the requeue's
# reason for an opportunistic job, and words for the user.
_DISRUPTIONS = {
    "PreemptionByScheduler": ("preempted", "preempted by the scheduler for a pod of higher priority"),
    "PreemptionByKubeScheduler": ("preempted", "preempted by the scheduler for a pod of higher priority"),
    "EvictionByEvictionAPI": ("evicted", "evicted (its node was drained)"),
    "TerminationByKubelet": ("evicted", "stopped by its node (resource pressure or a node shutdown)"),
    "DeletionByTaintManager": ("node_lost", "deleted because its node became unreachable"),
    "DeletionByPodGC": ("node_lost", "deleted because its node is gone"),
}
# Kueue's reasons for deactivating a workload, before and since 0.9: it is not requeued by itself.
_DEACTIVATED = ("InactiveWorkload", "Deactivated")


@dataclass
class ClusterView:
    """What the nodes offer, read at most every ``capacity_ttl`` seconds."""

    read_at: float = 0.0
    profiles: tuple[str, ...] | None = None  # None: unknown (not read yet, or not readable)
    max_gpus_per_node: int | None = None
    any_gpu: bool | None = None
    error: str | None = None


def cluster_view(nodes: Iterable[dict[str, Any]]) -> ClusterView:
    """MIG profiles the schedulable nodes offer and the most whole GPUs on one node."""
    nodes = list(nodes)
    rows = capacity(nodes, [])
    profiles = sorted({p for r in rows if (p := objects.profile_of_resource(r.resource))})
    per_node = []
    for node in nodes:
        if (node.get("spec") or {}).get("unschedulable"):
            continue
        status = node.get("status") or {}
        offered = gpu_resources(status.get("allocatable")) or allocatable_from_labels(labels_of(node))
        per_node.append(offered.get(GPU, 0))
    return ClusterView(
        read_at=time.time(),
        profiles=tuple(profiles),
        max_gpus_per_node=max(per_node, default=0),
        any_gpu=bool(rows),
    )


def labels_of(obj: Mapping[str, Any]) -> dict[str, str]:
    return (obj.get("metadata") or {}).get("labels") or {}


def uid_of(item: Mapping[str, Any]) -> str | None:
    return (item.get("metadata") or {}).get("uid") or None


def uid_or_name(item: Mapping[str, Any]) -> str:
    return uid_of(item) or "name:" + str((item.get("metadata") or {}).get("name"))


def kueue_managed(item: Mapping[str, Any]) -> bool:
    return bool(labels_of(item).get(objects.QUEUE_LABEL)) or bool((item.get("spec") or {}).get("suspend"))


def timestamp(value: Any) -> float | None:
    if not value:
        return None
    if isinstance(value, datetime):
        return value.timestamp()
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _condition(obj: Mapping[str, Any], kind: str) -> dict[str, Any] | None:
    conditions: list[dict[str, Any]] = (obj.get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c.get("type") == kind), None)


def _true(cond: Mapping[str, Any] | None) -> bool:
    return cond is not None and cond.get("status") == "True"


def job_observation(item: Mapping[str, Any]) -> Observation | None:
    """The end a Job's conditions report (Complete / Failed), or None while it has not ended."""
    st = item.get("status") or {}
    name = (item.get("metadata") or {}).get("name")
    complete = _condition(item, "Complete")
    completions = (item.get("spec") or {}).get("completions") or 1  # an Indexed Job's: one per index
    if _true(complete) or (st.get("succeeded") or 0) >= completions:
        return Observation(
            state="succeeded",
            message="The Kubernetes Job completed.",
            backend_job_id=name,
            exit_code=0,
            started_at=timestamp(st.get("startTime")),
            finished_at=timestamp(st.get("completionTime"))
            or timestamp((complete or {}).get("lastTransitionTime")),
        )
    failed = _condition(item, "Failed")
    if _true(failed) or ((st.get("failed") or 0) > 0 and not st.get("active")):
        failed = failed or {}
        reason = failed.get("reason") or ""
        deadline = (item.get("spec") or {}).get("activeDeadlineSeconds")
        if reason == "DeadlineExceeded":
            return Observation(
                state="failed",
                reason="time_limit",
                message=f"Kubernetes stopped the job at its deadline ({deadline} s after it started).",
                backend_job_id=name,
                started_at=timestamp(st.get("startTime")),
                finished_at=timestamp(failed.get("lastTransitionTime")),
            )
        return Observation(
            state="failed",
            reason="pod_failed",
            message=f"The Kubernetes Job failed ({reason or 'no reason given'}): {failed.get('message') or ''}".rstrip(
                ": "
            ),
            backend_job_id=name,
            started_at=timestamp(st.get("startTime")),
            finished_at=timestamp(failed.get("lastTransitionTime")),
        )
    return None


def without_runner(obs: Observation, started: bool, what: str = "The Kubernetes Job") -> Observation:
    """A Job that ended while its runner left no ``status.json``: its Complete condition says only that the
    pod's command exited 0, not that the notebook ran (only the runner's own word says "succeeded")."""
    if obs.state != "succeeded":
        return obs
    if started:
        words = (
            "its runner started (it left a heartbeat) but wrote no status.json, so how the notebook "
            "ended is unknown; see the job's log."
        )
    else:
        words = (
            "its runner never ran in the job folder (no heartbeat, no status.json): the pod's command "
            "ended without running the notebook. Check that the image's Python has jupyter-gpu-env "
            "(c.KubernetesBackend.python) and that the job folder is mounted in the pod at the same path."
        )
    return replace(
        obs, state="failed", reason="lost", exit_code=None, message=f"{what} completed, but {words}"
    )


def explain_end(obs: Observation, item: Mapping[str, Any], pods: list[dict[str, Any]]) -> Observation:
    """Add what the pod says (exit code, OOMKilled, eviction, its last log lines) to a Job's end."""
    if obs.state != "failed" or not pods:
        return obs
    pod = pods[0]
    pst = pod.get("status") or {}
    term: dict[str, Any] = {}
    for cs in pst.get("containerStatuses") or []:
        if cs.get("name") == objects.CONTAINER:
            term = (
                (cs.get("state") or {}).get("terminated")
                or (cs.get("lastState") or {}).get("terminated")
                or {}
            )
    code = term.get("exitCode")
    if term.get("reason") == "OOMKilled":
        limit = _container_limit(pod, "memory")
        return replace(
            obs,
            reason="out_of_memory",
            exit_code=code,
            message="The job ran out of memory" + (f" (limit {limit})" if limit else "") + " and was killed.",
        )
    if pst.get("reason") == "Evicted" or _true(_pod_condition(pod, "DisruptionTarget")):
        cond = _pod_condition(pod, "DisruptionTarget") or {}
        why = pst.get("message") or cond.get("message") or cond.get("reason") or "evicted"
        return replace(obs, reason="evicted", exit_code=code, message=f"The pod was evicted: {why}")
    if obs.reason == "time_limit":
        return replace(obs, exit_code=code)
    if term:
        tail = (term.get("message") or "").strip()
        message = f"The pod's container ended with exit code {code} ({term.get('reason') or 'Error'})"
        return replace(obs, exit_code=code, message=message + (f": {tail[-1500:]}" if tail else "."))
    return obs


def _pod_condition(pod: Mapping[str, Any], kind: str) -> dict[str, Any] | None:
    return _condition(pod, kind)


def _container_limit(pod: Mapping[str, Any], resource: str) -> str | None:
    for c in (pod.get("spec") or {}).get("containers") or []:
        if c.get("name") == objects.CONTAINER:
            return ((c.get("resources") or {}).get("limits") or {}).get(resource)
    return None


def kueue_requeue(workload: Mapping[str, Any] | None) -> str | None:
    """``evicted`` (``node_lost`` for Kueue's NodeFailures) while Kueue holds a workload it evicted and
    has not admitted again: its Evicted condition is True (Kueue resets it to False on readmission)."""
    evicted = _condition(workload, "Evicted") if workload is not None else None
    if not _true(evicted):
        return None
    return "node_lost" if (evicted or {}).get("reason") == "NodeFailures" else "evicted"


def stopped_for_other_work(pod: Mapping[str, Any]) -> tuple[str, str] | None:
    """(requeue reason, words) when ``pod`` was stopped for other work: a DisruptionTarget condition
    (preempted, evicted, its node lost), or the runner's exit code for a preemption it saw itself."""
    cond = _pod_condition(pod, "DisruptionTarget")
    if _true(cond):
        cond = cond or {}
        requeued, words = _DISRUPTIONS.get(cond.get("reason") or "", ("preempted", "stopped for other work"))
        return requeued, words + (f" ({cond['message']})" if cond.get("message") else "")
    if _exit_code(pod) == EXIT_PREEMPTED:
        return "preempted", "stopped for other work (the runner saved the notebook and the attempt)"
    return None


def replacement_observation(obs: Observation, pods: list[dict[str, Any]]) -> Observation:
    """An opportunistic job whose pod (``pods``: newest first) was stopped for other work while its Job
    lives on: queued again, requeued, until the pod that replaces it runs; a job whose newest pod is
    pending (Kueue admitted it again) is queued, whatever an earlier pod's heartbeat says."""
    newest = pods[0] if pods else None
    if newest is None or _live(newest):
        return obs
    for pod in pods:
        stopped = stopped_for_other_work(pod)
        if stopped is None:
            continue
        name = (pod.get("metadata") or {}).get("name")
        then = "Waiting for the pod that replaces it." if pod is newest else pod_reason(newest)
        return replace(
            obs,
            state="queued",
            requeued=stopped[0],
            started_at=None,
            pending_reason=f"Pod {name} was {stopped[1]}; requeued, the notebook resumes from its "
            f"checkpoint. {then}",
        )
    if (newest.get("status") or {}).get("phase") == "Pending":  # the heartbeat is an earlier pod's
        return replace(obs, state="queued", started_at=None, pending_reason=pod_reason(newest))
    return obs


def _live(pod: Mapping[str, Any]) -> bool:
    """Running and not being stopped."""
    meta, st = pod.get("metadata") or {}, pod.get("status") or {}
    return (
        st.get("phase") == "Running"
        and not meta.get("deletionTimestamp")
        and not _true(_pod_condition(pod, "DisruptionTarget"))
    )


def pod_ip(pods: list[dict[str, Any]]) -> str | None:
    """Where a job runs: the address of its newest pod (``pods``: newest first) while that pod runs, as
    Kubernetes gives it in ``status.podIP``; None while none runs, or for what is not an IP address."""
    st = (pods[0].get("status") or {}) if pods and _live(pods[0]) else {}
    try:
        return str(ipaddress.ip_address(st.get("podIP") or ""))
    except ValueError:
        return None


def _exit_code(pod: Mapping[str, Any]) -> int | None:
    for cs in (pod.get("status") or {}).get("containerStatuses") or []:
        if cs.get("name") == objects.CONTAINER:
            term = (cs.get("state") or {}).get("terminated") or {}
            code = term.get("exitCode")
            return code if isinstance(code, int) else None
    return None


def pending_observation(
    obs: Observation,
    item: Mapping[str, Any],
    pods: list[dict[str, Any]],
    workload: dict[str, Any] | None,
    *,
    kueue: bool = True,
) -> Observation:
    """Why a Job is not running yet: Kueue's word while it holds the Job, then the pod's. A Job that Kueue
    evicted, or whose pod was stopped for other work, is said to be requeued (believed of an
    opportunistic job only)."""
    spec = item.get("spec") or {}
    queue = labels_of(item).get(objects.QUEUE_LABEL)
    pod = pods[0] if pods else None
    if pod is not None and _live(pod):
        started = None
        for cs in (pod.get("status") or {}).get("containerStatuses") or []:
            started = timestamp(((cs.get("state") or {}).get("running") or {}).get("startedAt")) or started
        return Observation(state="running", backend_job_id=obs.backend_job_id, started_at=started)
    held = spec.get("suspend") or (queue and not pods)
    why = workload_reason(workload, queue) if kueue and held else None
    if spec.get("suspend"):
        reason = why or (
            f"Waiting for Kueue to admit the Job (queue '{queue}')."
            if queue
            else "The Job is suspended (spec.suspend) and nothing resumes it."
        )
        requeued = kueue_requeue(workload) if workload is not None else ("evicted" if queue else None)
        return replace(obs, pending_reason=reason, requeued=requeued)
    if pod is None:
        return replace(obs, pending_reason=why or "Waiting for the Job's pod to be created.")
    return replacement_observation(replace(obs, pending_reason=pod_reason(pod)), pods)


def workload_reason(workload: Mapping[str, Any] | None, queue: str | None) -> str | None:
    """Kueue's answer for a waiting Job, from its Workload's conditions; None when it has none yet."""
    where = f"Kueue queue '{queue}'" if queue else "Kueue"
    if workload is None:
        return f"Waiting for Kueue to create the Job's workload ({where})." if queue else None
    evicted = _condition(workload, "Evicted")
    reserved = _condition(workload, "QuotaReserved")
    admitted = _condition(workload, "Admitted")
    if _true(_condition(workload, "Finished")):
        return None
    if evicted is not None and _true(evicted) and not _true(admitted):
        why = evicted.get("reason") or "evicted"
        then = (
            "; it waits, deactivated, until an administrator activates it again (spec.active)."
            if why.startswith(_DEACTIVATED)
            else f"; waiting in {where} to be admitted again."
        )
        return f"Evicted by Kueue ({why}): {evicted.get('message') or ''}".rstrip(": ") + then
    if reserved is not None and not _true(reserved):
        msg = reserved.get("message") or reserved.get("reason") or "no quota yet"
        return f"Waiting in {where}: {msg}"
    if _true(reserved) and not _true(admitted):
        msg = (admitted or {}).get("message") or "waiting for admission checks"
        return f"Quota reserved in {where}; not admitted yet: {msg}"
    if _true(admitted):
        return f"Admitted by {where}; starting the pod."
    return f"Queued in {where}."


def waits_for_quota(workload: Mapping[str, Any]) -> bool:
    """Does Kueue hold the workload in its queue for quota (where it has a place), not as inadmissible?"""
    reserved = _condition(workload, "QuotaReserved")
    return reserved is not None and not _true(reserved) and reserved.get("reason") != "Inadmissible"


def pod_reason(pod: Mapping[str, Any]) -> str:
    """Why a pod is not running, in the scheduler's or the kubelet's own words."""
    st = pod.get("status") or {}
    sched = _condition(pod, "PodScheduled")
    if sched is not None and sched.get("status") == "False":
        return f"Not scheduled ({sched.get('reason') or 'Pending'}): {sched.get('message') or 'waiting for a node'}"
    for cs in [*(st.get("initContainerStatuses") or []), *(st.get("containerStatuses") or [])]:
        waiting = (cs.get("state") or {}).get("waiting") or {}
        if waiting.get("reason") in _PENDING_WAITING:
            return f"{waiting['reason']}: {waiting.get('message') or 'the container cannot start'}"
        if waiting.get("reason"):
            return f"Starting the container ({waiting['reason']}): pulling the image and mounting volumes."
    node = (pod.get("spec") or {}).get("nodeName")
    if node:
        return f"Starting the pod on node {node}."
    return f"The pod is {st.get('phase') or 'Pending'}" + (
        f": {st.get('message')}" if st.get("message") else "."
    )
