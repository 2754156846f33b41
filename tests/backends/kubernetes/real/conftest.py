"""The real-cluster tier: the backend against a real Kubernetes control plane with Kueue, on loopback.

Set ``GPU_ENV_K8S_BIN`` to a folder holding ``etcd-local`` (etcd 3.6), ``kube-apiserver``,
``kube-controller-manager``, ``kube-scheduler`` (Kubernetes 1.36), ``kueue`` (Kueue's manager),
``kueue-crds/`` (Kueue's config/components/crd/bases) and ``kueue-webhooks.yaml`` (its
config/components/webhook/manifests.yaml). The control plane (:mod:`.cluster`) is started once for the
session, as root (Kueue and the pods run in mount namespaces of their own), and stopped at its end; its
state and logs stay in pytest's temporary folder (``k8s-real*/``). Without the variable every test here
is skipped, saying what is missing.

Each test gets a :class:`Real`: a root folder that the pods mount at the same path (hostPath), a user of
its own (so that its Jobs are its own: the backend selects by the user's label), backends that reach the
API server with the server's service-account kubeconfig (:mod:`.tenancy`), never the admin's, and
services over them. After the test the services are stopped, and the user's Jobs and pods are removed
(as admin) so that the next test finds the quota free.
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import wait_until, write_notebook

from .cluster import NODE, ControlPlane, missing
from .tenancy import Tenancy

BIN_ENV = "GPU_ENV_K8S_BIN"
NEEDS = "etcd-local, kube-apiserver, kube-controller-manager, kube-scheduler, kueue, kueue-crds/, kueue-webhooks.yaml"
IMAGE = "local/gpu-env:real-tier"  # never pulled: the node agent runs commands on this machine
CHECKOUT = str(Path(__import__("jupyter_gpu_env").__file__).parents[1])
HOLD = "import pathlib, time\nwhile not pathlib.Path(gate).exists():\n    time.sleep(0.1)"


@pytest.fixture(scope="session")
def real_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ControlPlane, Tenancy]]:
    folder = os.environ.get(BIN_ENV, "")
    if not folder:
        pytest.skip(f"{BIN_ENV} is not set: the real-cluster tier needs a folder with {NEEDS}")
    lacking = missing(Path(folder))
    if lacking:
        pytest.skip(f"{BIN_ENV}={folder} lacks {', '.join(lacking)} (the real-cluster tier needs {NEEDS})")
    if os.geteuid() != 0:
        pytest.skip(
            "the real-cluster tier runs as root: Kueue and the pods run in mount namespaces of their own"
        )
    plane = ControlPlane(Path(folder), tmp_path_factory.mktemp("k8s-real"))
    try:
        plane.start()
        tenancy = Tenancy(plane)
        t0 = time.monotonic()
        tenancy.setup()
        plane.timings["tenancy_s"] = time.monotonic() - t0
        report = {"timings": plane.timings, "visibility": plane.visibility, "rss_mib": plane.rss_mib()}
        (plane.state / "startup.json").write_text(json.dumps(report, indent=1))
        print(f"\nreal cluster in {plane.state}: {json.dumps(report)}", file=sys.__stderr__, flush=True)
        yield plane, tenancy
        (plane.state / "rss-at-end.json").write_text(json.dumps(plane.rss_mib(), indent=1))
    finally:
        plane.stop()


class Real:
    """One test's view of the real cluster: its folder, its user, its backends and services."""

    def __init__(self, plane: ControlPlane, tenancy: Tenancy, tmp_path: Path) -> None:
        self.plane, self.tenancy = plane, tenancy
        self.root = tmp_path / "home"
        self.root.mkdir()
        self.db = tmp_path / "state" / "jobs.sqlite"
        self.user = "t-" + uuid.uuid4().hex[:8]
        self.namespace = tenancy.namespace
        self.services: list[Any] = []
        self.backends: list[Any] = []

    def settings(self, **kw: Any) -> Any:
        from jupyter_gpu_env.backends.kubernetes import objects

        t = self.tenancy
        base: dict[str, Any] = dict(
            image=IMAGE,
            namespace=t.namespace,
            user=self.user,
            volumes=({"name": "home", "hostPath": {"path": str(self.root), "type": "Directory"}},),
            volume_mounts=({"name": "home", "mountPath": str(self.root)},),
            local_queue=t.local_queue,
            pipeline_service_account=t.pipeline_account,
            priorities=t.priorities or {},
            termination_grace_seconds=30,
            # the "image" is this checkout: pods import the package the tests import
            env={"PYTHONPATH": CHECKOUT},
        )
        base.update(kw)
        return objects.K8sSettings(**base)

    def backend(self, *, kubeconfig: Path | None = None, **kw: Any) -> Any:
        from jupyter_gpu_env.backends.kubernetes.backend import KubernetesBackend

        settings = kw.pop("settings", None) or self.settings()
        kw.setdefault("status_grace", 5.0)
        backend = KubernetesBackend(
            "kubernetes", settings=settings, kubeconfig=str(kubeconfig or self.tenancy.kubeconfig), **kw
        )
        self.backends.append(backend)
        return backend

    def service(self, backend: Any = None, **kw: Any) -> Any:
        from jupyter_client.kernelspec import KernelSpecManager

        from jupyter_gpu_env.jobs.service import JobService
        from jupyter_gpu_env.jobs.store import JobStore

        svc = JobService(
            JobStore(self.db),
            {"kubernetes": backend or self.backend()},
            self.root,
            "jobs",
            kernel_names=lambda: set(KernelSpecManager().find_kernel_specs()),
            refresh_interval=0.5,
            **kw,
        )
        self.services.append(svc)
        return svc

    def notebook(self, name: str, cells: list[str], **kw: Any) -> str:
        return write_notebook(self.root, name, cells, **kw)

    def gated_notebook(self, name: str) -> str:
        """A notebook that runs until the file its parameter ``gate`` names exists: a job that holds its
        quota for as long as a test needs."""
        return self.notebook(name, [HOLD], parameters="gate = ''")

    async def pipeline_ended(self, pipes: Any, pipeline_id: str, within: float = 240.0) -> Any:
        """Rounds of the server (the jobs' loop, then the pipelines') until the pipeline has ended."""

        async def ended() -> Any:
            await pipes.jobs.refresh()
            await pipes.advance()
            got = await pipes.get(pipeline_id)
            return got if got.state not in ("queued", "running", "waiting") else None

        return await wait_until(ended, within=within, every=1, what="the pipeline ending")

    # ----- what the API server holds, read as admin -----

    def selector(self) -> str:
        return f"jupyter-gpu-env/user={self.user}"

    def jobs(self, selector: str | None = None) -> list[dict[str, Any]]:
        return self._list("/apis/batch/v1", "jobs", selector)

    def pods(self, selector: str | None = None) -> list[dict[str, Any]]:
        return self._list("/api/v1", "pods", selector)

    def workloads(self) -> list[dict[str, Any]]:
        return self._list("/apis/kueue.x-k8s.io/v1beta2", "workloads", "")

    def _list(self, prefix: str, plural: str, selector: str | None) -> list[dict[str, Any]]:
        from urllib.parse import quote

        query = f"?labelSelector={quote(selector or self.selector())}" if selector != "" else ""
        status, answer = self.plane.get(f"{prefix}/namespaces/{self.namespace}/{plural}{query}")
        assert status == 200, answer
        return list(answer["items"])

    def get(self, path: str) -> Any:
        status, answer = self.plane.get(path)
        assert status == 200, answer
        return answer

    def pod_of(self, job_name: str) -> dict[str, Any]:
        pods = self.pods(f"batch.kubernetes.io/job-name={job_name}")
        assert pods, f"no pod of Job {job_name}"
        return max(pods, key=lambda p: p["metadata"]["creationTimestamp"])

    async def wait_gone(self, within: float = 90.0) -> None:
        """Until neither Job nor pod of this user is left (the quota they held is free again)."""

        def left() -> str:
            return f"{[j['metadata']['name'] for j in self.jobs()]} / {[p['metadata']['name'] for p in self.pods()]}"

        await wait_until(lambda: not self.jobs() and not self.pods(), within=within, every=0.5,
                         what=lambda: f"the Jobs and pods of {self.user} going ({left()} left)")  # fmt: skip

    async def clean(self) -> None:
        for svc in self.services:
            await svc.stop()
        for backend in self.backends:
            await backend.close()
        for kind in ("batch/v1/jobs", "batch/v1/cronjobs"):
            path = f"/apis/{kind.rsplit('/', 1)[0]}/namespaces/{self.namespace}/{kind.rsplit('/', 1)[1]}"
            self.plane.request(
                "DELETE", f"{path}?labelSelector={self.selector()}&propagationPolicy=Background"
            )
        await self.wait_gone()


@pytest.fixture
def real(real_cluster: tuple[ControlPlane, Tenancy], tmp_path: Path, jp_asyncio_loop: Any) -> Iterator[Real]:
    plane, tenancy = real_cluster
    plane.check_alive()
    r = Real(plane, tenancy, tmp_path)
    try:
        yield r
    finally:
        jp_asyncio_loop.run_until_complete(r.clean())


__all__ = ["NODE", "Real"]
