"""How a Dask cluster's Kubernetes objects read: which are ours (the selector checked again here) and what a
scheduler's pod says of it. Pure, on the objects as the API returns them."""

from __future__ import annotations

from typing import Any

from ...dask import SchedulerSeen
from .. import status
from .workload import INDEX_LABEL


def is_scheduler_pod(pod: dict[str, Any]) -> bool:
    """A scheduler Job's pod, or pod 0 of a cluster's one workload (its others are workers)."""
    return status.labels_of(pod).get(INDEX_LABEL, "0") == "0"


def ours(item: dict[str, Any], selector: str, *, terminating: bool = False) -> bool:
    """The selector checked here too (a proxy may ignore it); terminating objects only when asked."""
    labels = status.labels_of(item)
    for part in selector.split(","):
        key, eq, value = part.partition("=")
        if key not in labels or (eq and labels[key] != value):
            return False
    return terminating or not (item.get("metadata") or {}).get("deletionTimestamp")


def from_pod(pod: dict[str, Any]) -> SchedulerSeen:
    st = pod.get("status") or {}
    phase = st.get("phase")
    if phase == "Running":
        return SchedulerSeen(state="running", host=st.get("podIP") or None)
    if phase in ("Succeeded", "Failed"):
        term: dict[str, Any] = {}
        for cs in st.get("containerStatuses") or []:
            term = (cs.get("state") or {}).get("terminated") or term
        how = f"exit code {term.get('exitCode')}" if term else phase.lower()
        tail = (term.get("message") or "").strip()[-500:]
        return SchedulerSeen(
            state="ended", reason=f"The scheduler's pod ended ({how})" + (f": {tail}" if tail else ".")
        )
    return SchedulerSeen(state="queued", reason=status.pod_reason(pod))
