"""End to end on a real cluster: run only when KUBECONFIG is set (never here: no API server).

Needs, besides KUBECONFIG (its current context, or GPU_ENV_K8S_CONTEXT):

- GPU_ENV_K8S_IMAGE: an image with jupyter-gpu-env, papermill and a `python3` kernel;
- GPU_ENV_K8S_SHARED_DIR: a folder of this machine that job pods see at the same path (on kind:
  an extraMount of the node plus the default hostPath volume below);
- optionally GPU_ENV_K8S_VOLUME (the volume as JSON; default a hostPath of the shared folder),
  GPU_ENV_K8S_NAMESPACE (default `default`) and GPU_ENV_K8S_QUEUE (a Kueue LocalQueue to go through).

The server's identity needs the Role of docs/admin-kubernetes.md in that namespace.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import pytest
from helpers import ended, wait_for_job, wait_until, write_notebook

from jupyter_gpu_env.backends.kubernetes import objects
from jupyter_gpu_env.contracts import jobfiles

NEEDED = ("KUBECONFIG", "GPU_ENV_K8S_IMAGE", "GPU_ENV_K8S_SHARED_DIR")
pytestmark = pytest.mark.skipif(
    not all(os.environ.get(v) for v in NEEDED),
    reason="a real cluster: set " + ", ".join(NEEDED) + " (see the module docstring)",
)


@pytest.fixture
def real(tmp_path):
    from jupyter_gpu_env.backends.kubernetes.backend import KubernetesBackend

    shared = Path(os.environ["GPU_ENV_K8S_SHARED_DIR"]) / f"gpu-env-e2e-{uuid.uuid4().hex[:8]}"
    shared.mkdir(parents=True)
    volume = json.loads(
        os.environ.get("GPU_ENV_K8S_VOLUME")
        or json.dumps({"hostPath": {"path": os.environ["GPU_ENV_K8S_SHARED_DIR"], "type": "Directory"}})
    )
    settings = objects.K8sSettings(
        image=os.environ["GPU_ENV_K8S_IMAGE"],
        namespace=os.environ.get("GPU_ENV_K8S_NAMESPACE", "default"),
        user="gpu-env-e2e",
        volumes=({"name": "shared", **volume},),
        volume_mounts=({"name": "shared", "mountPath": os.environ["GPU_ENV_K8S_SHARED_DIR"]},),
        local_queue=os.environ.get("GPU_ENV_K8S_QUEUE", ""),
        run_as_user=os.getuid(),
        run_as_group=os.getgid(),
        ttl_seconds_after_finished=300,
        default_memory_bytes=1 << 30,
    )

    class Real:
        root = shared

        def backend(self):
            return KubernetesBackend(
                "kubernetes",
                settings=settings,
                kubeconfig=os.environ["KUBECONFIG"],
                context=os.environ.get("GPU_ENV_K8S_CONTEXT", ""),
            )

        def service(self):
            from jupyter_client.kernelspec import KernelSpecManager

            from jupyter_gpu_env.jobs.service import JobService
            from jupyter_gpu_env.jobs.store import JobStore

            return JobService(
                JobStore(tmp_path / "jobs.sqlite"),
                {"kubernetes": self.backend()},
                shared,
                "jobs",
                kernel_names=lambda: set(KernelSpecManager().find_kernel_specs()),
                refresh_interval=1.0,
            )

        def notebook(self, name, cells):
            return write_notebook(shared, name, cells)

        async def wait(self, svc, job_id, done, within=600.0):
            return await wait_for_job(svc, job_id, done, within=within, every=2)

    return Real()


async def test_a_notebook_runs_on_the_cluster_and_succeeds(real):
    nb = real.notebook("hello.ipynb", ["import socket", "print('ran on', socket.gethostname())"])
    svc = real.service()
    try:
        job = await svc.submit({"notebook_path": nb, "backend": "kubernetes", "resources": {"cpus": 1}})
        job = await real.wait(svc, job.id, ended)
        assert job.state == "succeeded", job.message
        assert "ran on nb-hello-" in (real.root / job.log_path).read_text()
    finally:
        await svc.stop()


async def test_a_running_job_is_cancelled(real):
    nb = real.notebook("sleep.ipynb", ["print('sleeping', flush=True)", "import time; time.sleep(600)"])
    svc = real.service()
    try:
        job = await svc.submit({"notebook_path": nb, "backend": "kubernetes"})
        job = await real.wait(svc, job.id, lambda j: j.state == "running")
        job = await svc.cancel(job.id)
        assert job.state == "cancelled"
        # The runner saw SIGTERM and said so.
        await wait_until(
            lambda: jobfiles.read_status(real.root / job.job_dir), within=60, every=1, what="the pod stopping"
        )
        assert jobfiles.read_status(real.root / job.job_dir)["state"] == "cancelled"
    finally:
        await svc.stop()


async def test_an_impossible_request_says_why_it_waits(real):
    nb = real.notebook("big.ipynb", ["1"])
    svc = real.service()
    try:
        job = await svc.submit({"notebook_path": nb, "backend": "kubernetes", "resources": {"cpus": 1000}})
        job = await real.wait(
            svc,
            job.id,
            lambda j: "Insufficient cpu" in (j.pending_reason or "") or "quota" in (j.pending_reason or ""),
            within=120,
        )
        assert job.state == "queued"
        await svc.cancel(job.id)
    finally:
        await svc.stop()
