"""The keeper's workers on Kubernetes, with the standard library only (the scheduler's environment is the
user's): the API called with ``urllib`` and the pod's service account (its token, CA and namespace under
:data:`SA_DIR`; ``JUPYTER_GPU_ENV_KUBE_API`` names another API server, a proxy or a test's emulator).

- ``kubernetes``: one batch/v1 Job per worker, from the manifest the server put in ``pool["job"]``,
  named ``<cluster>-w<n>`` and started with ``--name`` the same; listed by the cluster's labels (a Job
  Kueue holds, or a pending pod, is ``queued`` with Kueue's or the scheduler's reason); cancelled by
  deleting the Job and its pods. The workers that ``cluster.json``'s ``together`` started with the
  scheduler, pods 1..N of the cluster's one workload, are listed as running under their names
  (``<cluster>-<index>``), marked ``once``: the keeper counts one gone when it has left the scheduler.
- ``operator``: the dask-kubernetes operator's default worker group, whose ``spec.worker.replicas`` is
  patched; its worker pods listed by the operator's labels, named by their ``DASK_WORKER_NAME``. The
  operator chooses which workers leave when the replicas go down (it asks the scheduler to retire the
  least useful), so the keeper retires none of them itself (:attr:`OperatorPool.retires_through_scheduler`).

The Kubernetes launcher copies this module into each cluster's keeper package (``module``:
``pool_kubernetes``), where the keeper's ``make_pool`` finds :func:`make`.
"""

from __future__ import annotations

import asyncio
import json
import os
import ssl
import urllib.error
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

if TYPE_CHECKING or __name__.startswith("jupyter_gpu_env."):  # read in place: tests, type checks
    from ....contracts.dask.keeper.files import Listed, read_json, write_json
else:  # copied beside the keeper into a cluster's folder (``gpuenv_dask/pool_kubernetes.py``)
    from .files import Listed, read_json, write_json

SA_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
API_ENV = "JUPYTER_GPU_ENV_KUBE_API"
TIMEOUT = 20.0
MAX_REPLY = 32 << 20


class KubeError(RuntimeError):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"Kubernetes answered {status}: {message}")
        self.status = status


class Api:
    """The API server the pod's service account reaches: JSON in, JSON out."""

    def __init__(self, env: Any = None, sa_dir: Path = SA_DIR) -> None:
        env = os.environ if env is None else env
        url = env.get(API_ENV, "")
        if not url:
            host, port = env.get("KUBERNETES_SERVICE_HOST", ""), env.get("KUBERNETES_SERVICE_PORT", "443")
            if not host:
                raise RuntimeError("not in a Kubernetes pod (KUBERNETES_SERVICE_HOST is not set)")
            url = f"https://[{host}]:{port}" if ":" in host else f"https://{host}:{port}"
        self.url = url.rstrip("/")
        self.token = _read(sa_dir / "token")
        ca = sa_dir / "ca.crt"
        self.context = ssl.create_default_context(cafile=str(ca) if ca.is_file() else None)

    def call(self, method: str, path: str, body: Any = None, query: dict[str, str] | None = None) -> Any:
        """One request; the reply's JSON. KubeError for an error status."""
        url = self.url + path + (f"?{urlencode(query)}" if query else "")
        data = None if body is None else json.dumps(body).encode()
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = (
                "application/merge-patch+json" if method == "PATCH" else "application/json"
            )
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(
                request, timeout=TIMEOUT, context=self.context if url.startswith("https") else None
            ) as reply:
                raw = reply.read(MAX_REPLY)
        except urllib.error.HTTPError as e:
            raise KubeError(e.code, _message(e.read(64 << 10))) from None
        return json.loads(raw) if raw else {}

    def items(self, path: str, selector: str) -> list[dict[str, Any]]:
        reply = self.call("GET", path, query={"labelSelector": selector})
        return list(reply.get("items") or []) if isinstance(reply, dict) else []


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip() or None
    except OSError:
        return None


def _message(raw: bytes) -> str:
    try:
        data = json.loads(raw)
    except ValueError:
        return raw[:300].decode("utf-8", "replace")
    return str(data.get("message") or data) if isinstance(data, dict) else str(data)[:300]


def _labels(obj: dict[str, Any]) -> dict[str, str]:
    return (obj.get("metadata") or {}).get("labels") or {}


def _matches(obj: dict[str, Any], selector: str) -> bool:
    """The equality selector ``a=b,c`` checked here too (an API server honours it; a proxy may not)."""
    labels = _labels(obj)
    for part in selector.split(","):
        key, _, value = part.partition("=")
        if key not in labels or ("=" in part and labels[key] != value):
            return False
    return not (obj.get("metadata") or {}).get("deletionTimestamp")


def _condition(obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == kind:
            return dict(c)
    return None


def _ended(job: dict[str, Any]) -> bool:
    st = job.get("status") or {}
    done = any((_condition(job, k) or {}).get("status") == "True" for k in ("Complete", "Failed"))
    return done or bool(st.get("succeeded")) or (bool(st.get("failed")) and not st.get("active"))


def pod_reason(pod: dict[str, Any]) -> str:
    """Why a pod is not running, in the scheduler's or the kubelet's words."""
    sched = _condition(pod, "PodScheduled")
    if sched is not None and sched.get("status") == "False":
        return f"Not scheduled ({sched.get('reason') or 'Pending'}): {sched.get('message') or 'waiting for a node'}"
    for cs in (pod.get("status") or {}).get("containerStatuses") or []:
        waiting = (cs.get("state") or {}).get("waiting") or {}
        if waiting.get("reason"):
            return f"{waiting['reason']}: {waiting.get('message') or 'the container is starting'}"
    node = (pod.get("spec") or {}).get("nodeName")
    return f"Starting on node {node}." if node else "Waiting for a node."


def _live_pods(pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [p for p in pods if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]


class KubePool:
    """One worker Job per worker, from ``pool["job"]``; the counter in ``pool-kubernetes.json``."""

    RECORD = "pool-kubernetes.json"

    def __init__(self, folder: Path, spec: dict[str, Any], api: Api | None = None) -> None:
        pool = spec["pool"]
        self.api = api or Api()
        self.namespace = str(pool["namespace"])
        self.base = str(pool["name"])
        self.selector = str(pool["selector"])
        self.manifest: dict[str, Any] = pool["job"]
        self.record = folder / self.RECORD
        self.counter = int((read_json(self.record) or {}).get("counter", 0))
        self.together = [f"{self.base}-{i}" for i in range(1, int(spec.get("together") or 0) + 1)]
        ns = quote(self.namespace, safe="")
        self.jobs_path = f"/apis/batch/v1/namespaces/{ns}/jobs"
        self.pods_path = f"/api/v1/namespaces/{ns}/pods"

    def _job(self, name: str) -> dict[str, Any]:
        body: dict[str, Any] = json.loads(json.dumps(self.manifest))
        body["metadata"]["name"] = name
        for c in body["spec"]["template"]["spec"]["containers"]:
            c["command"] = [*c["command"], "--name", name]
        return body

    async def submit(self, count: int) -> list[str]:
        return await asyncio.to_thread(self._create, count)

    def _create(self, count: int) -> list[str]:
        names: list[str] = []
        try:
            while len(names) < count:
                self.counter += 1
                name = f"{self.base}-w{self.counter}"
                try:
                    self.api.call("POST", self.jobs_path, self._job(name))
                except KubeError as e:
                    if e.status != 409:  # a name left from before a restart: take the next
                        raise
                    continue
                names.append(name)
        finally:
            write_json(self.record, {"counter": self.counter})
        return names

    async def listed(self) -> list[Listed]:
        started_with_me = [Listed(n, "running", once=True) for n in self.together]
        return started_with_me + await asyncio.to_thread(self._list)

    def _list(self) -> list[Listed]:
        jobs = [j for j in self.api.items(self.jobs_path, self.selector) if _matches(j, self.selector)]
        jobs = [j for j in jobs if not _ended(j)]
        if not jobs:
            return []
        pods: dict[str, dict[str, Any]] = {}
        for pod in _live_pods(self.api.items(self.pods_path, self.selector)):
            if _matches(pod, self.selector):
                pods[
                    _labels(pod).get("batch.kubernetes.io/job-name") or _labels(pod).get("job-name") or ""
                ] = pod
        out = []
        for job in jobs:
            name = str(job["metadata"]["name"])
            found = pods.get(name)
            if found is not None and (found.get("status") or {}).get("phase") == "Running":
                out.append(Listed(name, "running", node=(found.get("spec") or {}).get("nodeName")))
            elif found is not None:
                out.append(Listed(name, "queued", reason=pod_reason(found)))
            elif (job.get("spec") or {}).get("suspend"):
                queue = _labels(job).get("kueue.x-k8s.io/queue-name")
                where = f"Kueue queue '{queue}'" if queue else "Kueue"
                out.append(Listed(name, "queued", reason=f"Waiting for {where} to admit the Job."))
            else:
                out.append(Listed(name, "queued", reason="Waiting for the Job's pod to be created."))
        return out

    async def cancel(self, names: list[str]) -> None:
        await asyncio.to_thread(self._delete, names)

    def _delete(self, names: list[str]) -> None:
        for name in (n for n in names if n not in self.together):  # the keeper retires those itself
            try:
                self.api.call(
                    "DELETE",
                    f"{self.jobs_path}/{quote(name, safe='')}",
                    {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"},
                )
            except KubeError as e:
                if e.status != 404:
                    raise

    async def cancel_all(self) -> None:
        def every() -> list[str]:
            jobs = self.api.items(self.jobs_path, self.selector)
            return [str(j["metadata"]["name"]) for j in jobs if _matches(j, self.selector)]

        await self.cancel(await asyncio.to_thread(every))


class OperatorPool:
    """The operator's default worker group, by its replicas."""

    retires_through_scheduler = True  # the operator picks the workers that leave, through the scheduler

    def __init__(self, folder: Path, spec: dict[str, Any], api: Api | None = None) -> None:
        pool = spec["pool"]
        self.api = api or Api()
        ns = quote(str(pool["namespace"]), safe="")
        self.group = str(pool["group"])
        self.group_path = (
            f"/apis/kubernetes.dask.org/v1/namespaces/{ns}/daskworkergroups/{quote(self.group, safe='')}"
        )
        self.pods_path = f"/api/v1/namespaces/{ns}/pods"
        self.selector = f"dask.org/workergroup-name={self.group},dask.org/component=worker"

    def _replicas(self) -> int:
        group = self.api.call("GET", self.group_path)
        return int(((group.get("spec") or {}).get("worker") or {}).get("replicas") or 0)

    def _set(self, replicas: int) -> None:
        self.api.call("PATCH", self.group_path, {"spec": {"worker": {"replicas": max(0, replicas)}}})

    async def submit(self, count: int) -> list[str]:
        def grow() -> list[str]:
            have = self._replicas()
            self._set(have + count)
            return [f"{self.group}-asked-{have + i + 1}" for i in range(count)]

        return await asyncio.to_thread(grow)

    async def listed(self) -> list[Listed]:
        return await asyncio.to_thread(self._list)

    def _list(self) -> list[Listed]:
        try:
            replicas = self._replicas()
        except KubeError as e:
            if e.status == 404:  # the operator has not made the group yet, or the cluster is being deleted
                return []
            raise
        pods = [
            p for p in _live_pods(self.api.items(self.pods_path, self.selector)) if _matches(p, self.selector)
        ]
        out = []
        for pod in pods:
            name = _worker_name(pod)
            if (pod.get("status") or {}).get("phase") == "Running":
                out.append(Listed(name, "running", node=(pod.get("spec") or {}).get("nodeName")))
            else:
                out.append(Listed(name, "queued", reason=pod_reason(pod)))
        for i in range(len(pods), replicas):  # asked for; the operator has not made their pods yet
            out.append(
                Listed(f"{self.group}-asked-{i + 1}", "queued", reason="Waiting for the Dask operator.")
            )
        return out

    async def cancel(self, names: list[str]) -> None:
        await asyncio.to_thread(lambda: self._set(self._replicas() - len(names)))

    async def cancel_all(self) -> None:
        await asyncio.to_thread(self._set, 0)


def _worker_name(pod: dict[str, Any]) -> str:
    """The name the worker joins with: the operator's ``DASK_WORKER_NAME`` (its Deployment's name)."""
    for c in (pod.get("spec") or {}).get("containers") or []:
        for e in c.get("env") or []:
            if e.get("name") == "DASK_WORKER_NAME" and e.get("value"):
                return str(e["value"])
    return str((pod.get("metadata") or {}).get("name"))


def make(folder: Path, spec: dict[str, Any], python: str) -> KubePool | OperatorPool:
    """The keeper's pool for ``cluster.json``'s ``pool`` (what ``make_pool`` calls): ``kubernetes`` or
    ``operator``."""
    if spec["pool"]["kind"] == "operator":
        return OperatorPool(folder, spec)
    return KubePool(folder, spec)
