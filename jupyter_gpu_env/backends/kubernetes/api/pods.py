"""A job's pods: all of a user's pods in one list call, grouped by job, and the newest one's log (for a
job folder that is not shared, so that the log is only in the pod's). Blocking: run through KubeApi.run.
"""

from __future__ import annotations

import codecs
import logging
from typing import Any

from kubernetes import client

from ....models.jobs import LogChunk
from .. import objects
from ..status import labels_of
from .client import ApiError, KubeApi

log = logging.getLogger(__name__)


def by_job(
    api: KubeApi, api_client: Any, namespace: str, selector: str, ids: set[str]
) -> dict[str, list[dict[str, Any]]]:
    """The pods of the given jobs by job id, newest first; none when pods cannot be listed."""
    try:
        pods = api.items(
            "list pods", client.CoreV1Api(api_client).list_namespaced_pod, namespace, label_selector=selector
        )
    except ApiError as e:
        log.info("pods could not be listed: %s", e)
        return {}
    wanted = {objects.label_value(i): i for i in ids}
    out: dict[str, list[dict[str, Any]]] = {}
    for pod in pods:
        jid = labels_of(pod).get(objects.JOB_ID_LABEL)
        if jid in wanted:
            out.setdefault(wanted[jid], []).append(pod)
    for group in out.values():
        group.sort(key=lambda p: (p.get("metadata") or {}).get("creationTimestamp") or "", reverse=True)
    return out


def newest_log(
    api: KubeApi, api_client: Any, namespace: str, selector: str, job_id: str, limit_bytes: int
) -> bytes | None:
    """The first ``limit_bytes`` of the runner container's log in the job's newest pod; None when there is
    no pod or its container has not started."""
    pod = next(iter(by_job(api, api_client, namespace, selector, {job_id}).get(job_id, [])), None)
    if pod is None:
        return None
    try:
        data = api.raw(
            client.CoreV1Api(api_client).read_namespaced_pod_log,
            (pod.get("metadata") or {}).get("name"),
            namespace,
            container=objects.CONTAINER,
            limit_bytes=max(1, limit_bytes),
            what="read the pod log",
            parse=False,
        )
    except ApiError as e:
        if e.status in (400, 404):  # the container has not started, or the pod is gone
            return None
        raise
    return data if isinstance(data, bytes) else str(data).encode()


def log_chunk(raw: bytes, offset: int, limit: int, *, ended: bool) -> LogChunk:
    """The piece of ``raw`` from ``offset``, cut at a character boundary; at its end once the job ``ended``."""
    body = raw[offset : offset + limit]
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    text = decoder.decode(body, final=False)
    used = len(body) - len(decoder.getstate()[0])
    if used == 0 and body:  # a chunk too small for one character still advances
        text, used = body.decode("utf-8", "replace"), len(body)
    nxt = offset + used
    whole = len(raw) < offset + limit
    return LogChunk(offset=offset, next_offset=nxt, text=text, eof=ended and whole and nxt >= len(raw))
