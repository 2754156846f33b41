"""Kubernetes without a cluster: a kmock API server on loopback driven by the real client.

kmock (an aiohttp server) runs on the event loop pytest-jupyter gives each test; the backend's
synchronous client calls it from worker threads, as it calls a real API server. kmock stores what
is created and serves it back (list, get, delete, 404, 409); it sets no uid and no status and
ignores label selectors, so the tests play the controllers: they write a Job's status, its pods and
Kueue's Workload into the store. kmock's own pytest plugin is disabled (`-p no:kmock` in
pyproject.toml: its fixture runs on pytest-asyncio's loop, not pytest-jupyter's), so the server is
started here.

``FakeCluster.run_pod`` plays the kubelet: it runs the created Job's own container command
(``/bin/sh -c <entrypoint> ... FOLDER PYTHON``) on this machine with this Python, so the runner
really executes the notebook in the job folder, then marks the Job Complete or Failed by the exit code.
"""

from __future__ import annotations

import asyncio
import functools
import os
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import kmock_server, write_notebook

from jupyter_gpu_env.jobs.service import JobService
from jupyter_gpu_env.jobs.store import JobStore

try:  # the `kubernetes` extra; without it these tests are not collected
    from jupyter_gpu_env.backends.kubernetes import objects
    from jupyter_gpu_env.backends.kubernetes.backend import KubernetesBackend
except ImportError:
    collect_ignore_glob = ["test_*.py"]

NS = "jhub"
JOBS = "batch/v1/jobs"
PODS = "v1/pods"
NODES = "v1/nodes"


def rfc3339(t: float | None = None) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() if t is None else t))


class FakeCluster:
    """A kmock emulator plus the controllers' side of the story, written by hand."""

    def __init__(self, emulator: Any) -> None:
        self.k = emulator
        self.url = str(emulator.url).rstrip("/")
        for resource in (JOBS, PODS, NODES):
            emulator.resources[resource] = {}

    # ----- the client side -----

    def api_client(self) -> Any:
        from kubernetes import client

        cfg = client.Configuration()
        cfg.host = self.url
        return client.ApiClient(cfg)

    def requests(self, method: str | None = None, path_part: str = "") -> list[Any]:
        out = []
        for req in list(self.k):
            if method and str(req.method).split(".")[-1].upper() != method.upper():
                continue
            if path_part and path_part not in str(req.url):
                continue
            out.append(req)
        return out

    # ----- stored objects -----

    def jobs(self) -> dict[str, dict[str, Any]]:
        out = {}
        for (resource, _ns, name), obj in self.k.objects.items():
            if str(resource.plural) == "jobs" and not obj.deleted:
                out[name] = obj.raw
        return out

    def job(self, name: str) -> dict[str, Any]:
        return self.k.objects[JOBS, NS, name].raw

    def job_exists(self, name: str) -> bool:
        try:
            return not self.k.objects[JOBS, NS, name].deleted
        except KeyError:
            return False

    def patch_job(self, name: str, changes: dict[str, Any]) -> None:
        self.k.objects[JOBS, NS, name].patch(changes)

    def give_uid(self, name: str) -> str:
        uid = str(uuid.uuid4())
        self.patch_job(name, {"metadata": {"uid": uid}})
        return uid

    def add_pod(
        self, job_name: str, status: dict[str, Any], *, suffix: str = "abcde", created: float | None = None
    ) -> str:
        job = self.job(job_name)
        template = job["spec"]["template"]
        pod_name = f"{job_name}-{suffix}"
        self.k.objects[PODS, NS, pod_name] = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": pod_name,
                "namespace": NS,
                "labels": {**template["metadata"]["labels"], "batch.kubernetes.io/job-name": job_name},
                "creationTimestamp": rfc3339(created),
            },
            "spec": template["spec"],
            "status": status,
        }
        return pod_name

    def add_workload(self, job_name: str, conditions: list[dict[str, Any]], version: str = "v1beta1") -> None:
        job = self.job(job_name)
        uid = job["metadata"].get("uid") or self.give_uid(job_name)
        self.k.objects[f"kueue.x-k8s.io/{version}/workloads", NS, f"job-{job_name}-1a2b3"] = {
            "apiVersion": f"kueue.x-k8s.io/{version}",
            "kind": "Workload",
            "metadata": {
                "name": f"job-{job_name}-1a2b3",
                "namespace": NS,
                "labels": {"kueue.x-k8s.io/job-uid": uid},
                "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": job_name, "uid": uid}],
            },
            "spec": {"queueName": job["metadata"]["labels"].get(objects.QUEUE_LABEL)},
            "status": {"conditions": conditions},
        }

    def declare_kueue(self, version: str = "v1beta1") -> None:
        self.k.resources[f"kueue.x-k8s.io/{version}/workloads"] = {}

    def serve_pending(self, queue: str, workloads: list[dict[str, Any]], version: str = "v1beta1") -> None:
        """Kueue's visibility API for ``queue``: its pending workloads, in the shape Kueue serves them."""
        import json

        import kmock

        body = {"apiVersion": f"visibility.kueue.x-k8s.io/{version}", "kind": "PendingWorkloadsSummary",
                "metadata": {"creationTimestamp": None}, "items": workloads}  # fmt: skip
        path = (
            f"/apis/visibility.kueue.x-k8s.io/{version}/namespaces/{NS}/localqueues/{queue}/pendingworkloads"
        )
        self.k[f"get {path}"] << kmock.Response(
            headers={"Content-Type": "application/json"}, payload=json.dumps(body).encode()
        )

    def workload_name(self, job_name: str) -> str:
        return f"job-{job_name}-1a2b3"  # as add_workload names it

    def serve_log(self, pod_name: str, text: bytes) -> None:
        import kmock

        self.k[f"get /api/v1/namespaces/{NS}/pods/{pod_name}/log"] << kmock.Response(
            headers={"Content-Type": "text/plain; charset=utf-8"}, payload=text
        )

    def add_node(self, name: str, allocatable: dict[str, str], labels: dict[str, str] | None = None) -> None:
        self.k.objects[NODES, None, name] = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": labels or {}},
            "spec": {},
            "status": {"allocatable": allocatable},
        }

    # ----- the controllers and the kubelet -----

    def mark_running(self, name: str) -> None:
        self.patch_job(name, {"status": {"active": 1, "ready": 1, "startTime": rfc3339()}})

    def mark_ended(
        self, name: str, ok: bool, reason: str = "BackoffLimitExceeded", message: str = ""
    ) -> None:
        now = rfc3339()
        cond = {
            "type": "Complete" if ok else "Failed",
            "status": "True",
            "lastTransitionTime": now,
            **({} if ok else {"reason": reason, "message": message}),
        }
        status = {"active": 0, "ready": 0, "conditions": [cond]}
        status.update({"succeeded": 1, "completionTime": now} if ok else {"failed": 1})
        self.patch_job(name, {"status": status})

    async def start_pod(self, name: str) -> asyncio.subprocess.Process:
        """Start the Job's container command here and leave it running (a pod that a test stops)."""
        job = self.job(name)
        container = job["spec"]["template"]["spec"]["containers"][0]
        argv = [*container["command"][:-1], sys.executable]
        env = {e["name"]: e["value"] for e in container.get("env") or []}
        self.mark_running(name)
        return await asyncio.create_subprocess_exec(*argv, env={**os.environ, **env})

    async def run_pod(self, name: str, timeout: float = 90.0) -> tuple[int, bytes]:
        """Run the Job's container command here, as a kubelet would on a node sharing the folder.

        Returns the exit code and what the container wrote to stdout (the pod log).
        """
        job = self.job(name)
        container = job["spec"]["template"]["spec"]["containers"][0]
        argv = [*container["command"][:-1], sys.executable]  # the last argument is the image's Python
        env = {e["name"]: e["value"] for e in container.get("env") or []}
        self.mark_running(name)
        proc = await asyncio.create_subprocess_exec(
            *argv, env={**os.environ, **env}, stdout=asyncio.subprocess.PIPE
        )
        out, _ = await asyncio.wait_for(proc.communicate(), timeout)
        assert proc.returncode is not None
        self.mark_ended(name, proc.returncode == 0)
        return proc.returncode, out


@pytest.fixture(scope="module")
def schemas_read_once() -> Iterator[None]:
    """kubernetes-validate reads and parses its schema files on every call (30 ms); read each once, in a
    module that validates many objects (``pytestmark = pytest.mark.usefixtures("schemas_read_once")``)."""
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    with pytest.MonkeyPatch.context() as mp:
        utils = kubernetes_validate.utils
        mp.setattr(utils, "schema_contents", functools.cache(utils.schema_contents))
        yield


@pytest.fixture
def cluster(jp_asyncio_loop) -> Iterator[FakeCluster]:
    with kmock_server(jp_asyncio_loop) as emulator:
        yield FakeCluster(emulator)


class Workspace:
    """A server root with notebooks and a job folder, and backends/services over a FakeCluster."""

    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path / "home"
        self.root.mkdir()
        self.db = tmp_path / "state" / "jobs.sqlite"

    def settings(self, **kw: Any) -> objects.K8sSettings:
        base: dict[str, Any] = dict(
            image="quay.io/jupyter/scipy-notebook:2024-05-27",
            namespace=NS,
            user="alice",
            volumes=({"name": "home", "persistentVolumeClaim": {"claimName": "claim-alice"}},),
            volume_mounts=({"name": "home", "mountPath": str(self.root)},),
        )
        base.update(kw)
        return objects.K8sSettings(**base)

    def backend(
        self, cluster: FakeCluster, *, settings: objects.K8sSettings | None = None, **kw: Any
    ) -> KubernetesBackend:
        kw.setdefault("status_grace", 0.0)
        kw.setdefault("api_client", cluster.api_client)
        return KubernetesBackend("kubernetes", settings=settings or self.settings(), **kw)

    def service(self, backend: KubernetesBackend) -> JobService:
        from jupyter_client.kernelspec import KernelSpecManager

        return JobService(
            JobStore(self.db),
            {"kubernetes": backend},
            self.root,
            "jobs",
            kernel_names=lambda: set(KernelSpecManager().find_kernel_specs()),
            refresh_interval=0.2,
        )

    def notebook(self, name: str, cells: list[str]) -> str:
        """Write a notebook under the root; returns its path."""
        return write_notebook(self.root, name, cells)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path)
