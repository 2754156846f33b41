"""Kueue's side of a queued Job: which Workload API the cluster serves, and the Workloads of given Jobs.

A Job queued through Kueue is created suspended; its Workload's conditions (QuotaReserved, Admitted,
Evicted) say why it waits. Discovery asks ``/apis/kueue.x-k8s.io/<version>`` for each known version,
newest first, at most two calls, and remembers the answer for a while: a cluster without Kueue costs
nothing on later polls. All calls block; the backend runs them in a worker thread.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..status import labels_of, uid_of, uid_or_name
from .client import ApiError, KubeApi

log = logging.getLogger(__name__)

GROUP = "kueue.x-k8s.io"
VERSIONS = ("v1beta2", "v1beta1")  # newest first; the first the server serves is used
JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"
DISCOVERY_TTL = 600.0
VISIBILITY_GROUP = "visibility.kueue.x-k8s.io"
VISIBILITY_VERSIONS = ("v1beta1", "v1alpha1")  # the on-demand visibility API (Kueue 0.9+; 0.6+)


UNSERVED = (
    "its place in the queue is not known: this cluster does not serve Kueue's visibility API "
    "(visibility.kueue.x-k8s.io, Kueue's VisibilityOnDemand feature)"
)
FORBIDDEN = (
    "its place in the queue is not known: the server's Role may not read Kueue's pending workloads "
    "(get on localqueues/pendingworkloads in visibility.kueue.x-k8s.io; see docs/admin-kubernetes.md)"
)


@dataclass(frozen=True)
class Places:
    """Where Kueue holds one LocalQueue's pending Workloads (name -> place in the LocalQueue, in its
    ClusterQueue), or, in words, why that cannot be known."""

    found: dict[str, tuple[int, int]] = field(default_factory=dict)
    unknown: str | None = None


class KueueReader:
    """Reads Workloads through one :class:`KubeApi`, remembering which API version answers."""

    def __init__(self, api: KubeApi) -> None:
        self.api = api
        self._discovered: tuple[float, str | None] = (0.0, None)
        self._visibility_unserved: tuple[float, bool] = (0.0, False)

    def version(self) -> str | None:
        """The Workload API version the cluster serves (v1beta2 preferred), None without Kueue."""
        checked, version = self._discovered
        if time.time() - checked < DISCOVERY_TTL:
            return version
        from kubernetes import client

        version = None
        custom = client.CustomObjectsApi(self.api.client())
        for candidate in VERSIONS:
            try:
                reply = self.api.raw(custom.get_api_resources, GROUP, candidate, what="discover Kueue's API")
            except ApiError as e:
                if e.status != 404:
                    log.info("Kueue's API could not be discovered: %s", e)
                continue
            resources = reply.get("resources") if isinstance(reply, dict) else None
            if "workloads" in {r.get("name") for r in resources or []}:
                version = candidate
                break
        self._discovered = (time.time(), version)
        return version

    def workloads(self, namespace: str, items: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]] | None:
        """The Workloads of these Jobs, by Job uid (or name when the Job has no uid); None without Kueue.

        One list call, narrowed by the job-uid label when every Job has a uid; a Workload made before
        Kueue set that label is matched by its owner reference instead.
        """
        version = self.version()
        if version is None:
            return None
        from kubernetes import client

        items = list(items)
        uids = sorted({u for u in (uid_of(i) for i in items) if u})
        selector = f"{JOB_UID_LABEL} in ({','.join(uids)})" if uids and len(uids) == len(items) else None
        try:
            reply = self.api.raw(
                client.CustomObjectsApi(self.api.client()).list_namespaced_custom_object,
                GROUP,
                version,
                namespace,
                "workloads",
                label_selector=selector,
                what="list Kueue Workloads",
            )
        except ApiError as e:
            if e.status == 404:
                self._discovered = (0.0, None)  # Kueue went away or changed versions: discover again
            log.info("Kueue workloads could not be listed: %s", e)
            return {}
        by_name = {(i.get("metadata") or {}).get("name"): i for i in items}
        wanted_uids = set(uids)
        out: dict[str, dict[str, Any]] = {}
        for workload in (reply.get("items") if isinstance(reply, dict) else None) or []:
            uid = labels_of(workload).get(JOB_UID_LABEL)
            if uid and uid in wanted_uids:
                out[uid] = workload
                continue
            for ref in (workload.get("metadata") or {}).get("ownerReferences") or []:
                match = by_name.get(ref.get("name")) if ref.get("kind") == "Job" else None
                if match is not None and ref.get("uid") in (None, uid_of(match)):
                    out[uid_or_name(match)] = workload
        return out

    def pending_positions(self, namespace: str, queue: str) -> Places:
        """Kueue's visibility API for one LocalQueue: pending Workload name -> (place in the
        LocalQueue, place in its ClusterQueue), both from 1; where it cannot be read, why not. A cluster
        that does not serve it is asked again only after DISCOVERY_TTL."""
        checked, unserved = self._visibility_unserved
        if unserved and time.time() - checked < DISCOVERY_TTL:
            return Places(unknown=UNSERVED)
        api_client = self.api.client()
        for version in VISIBILITY_VERSIONS:
            path = f"/apis/{VISIBILITY_GROUP}/{version}/namespaces/{namespace}/localqueues/{queue}/pendingworkloads"

            def fetch(path: str = path, _preload_content: bool = False, _request_timeout: Any = None) -> Any:
                # A subresource no typed method covers: the client's own request building and auth.
                method, url, headers, body, post = api_client.param_serialize(
                    "GET", path, header_params={"Accept": "application/json"}, auth_settings=["BearerToken"]
                )
                return api_client.call_api(
                    method,
                    url,
                    header_params=headers,
                    body=body,
                    post_params=post,
                    _request_timeout=_request_timeout,
                ).response

            try:
                reply = self.api.raw(fetch, what="read Kueue's pending workloads")
            except ApiError as e:
                if e.status == 404:
                    continue  # this version is not served; try the older one
                log.info("Kueue's pending workloads could not be read: %s", e)
                if e.status == 403:
                    return Places(unknown=FORBIDDEN)
                return Places(
                    unknown=f"its place in the queue is not known: Kueue's visibility API did not answer ({e})"
                )
            self._visibility_unserved = (time.time(), False)
            out: dict[str, tuple[int, int]] = {}
            for item in (reply.get("items") if isinstance(reply, dict) else None) or []:
                name = (item.get("metadata") or {}).get("name")
                local, cluster = item.get("positionInLocalQueue"), item.get("positionInClusterQueue")
                if name and isinstance(local, int) and isinstance(cluster, int):
                    out[name] = (local + 1, cluster + 1)  # the API counts from 0
            return Places(found=out)
        self._visibility_unserved = (time.time(), True)
        return Places(unknown=UNSERVED)
