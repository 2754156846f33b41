"""A batch kernel session on the Kubernetes backend, through kmock and the stand-in kubelet: the kernel
job's Job as built (valid, never replaced), its pod running the real kernel host on the shared folder,
the session meeting it, one execute, the record saying where it runs, and the end it asks for."""

from __future__ import annotations

import asyncio
import json
import signal
from typing import Any

import pytest
from helpers import wait_until
from jupyter_client.asynchronous import AsyncKernelClient

from jupyter_gpu_env.backends.kubernetes import checks, objects
from jupyter_gpu_env.batchkernels.session import KernelSession
from jupyter_gpu_env.jobs.sessions import SessionAsk
from jupyter_gpu_env.models.jobs import JobRequest

kubernetes_validate = pytest.importorskip("kubernetes_validate")
NS = "jhub"  # the namespace of the conftest's workspace
POD_IP = "127.0.0.1"  # the stand-in's pod: loopback only here


async def test_a_kernel_session_runs_in_its_pod_answers_and_ends_when_asked(cluster, ws):
    svc = ws.service(ws.backend(cluster))
    request = JobRequest.model_validate(
        {
            "notebook_path": "analysis.ipynb",
            "backend": "kubernetes",
            "kernel": "python3",
            "name": "interactive",
        }
    )
    ask = SessionAsk(request=request, cwd=ws.root, kernel_session={"bind": "loopback", "orphan_timeout": 120})
    session = KernelSession(svc, ask, poll_interval=0.2, launch_timeout=120)
    starting = asyncio.ensure_future(session.start())
    pod: asyncio.subprocess.Process | None = None
    try:
        job = await wait_until(lambda: session.job, within=30, what="the session's job")
        name = objects.job_name(job)
        (post,) = cluster.requests("POST", f"/namespaces/{NS}/jobs")
        body = json.loads(post.body)
        for version in ("1.29.0", "1.37.0"):
            kubernetes_validate.validate(body, version, strict=True)
        assert checks.problems(body) == []
        # A kernel's pod stopped for any reason is not replaced: the Job fails, the session ends.
        assert body["spec"]["backoffLimit"] == 0 and "podFailurePolicy" not in body["spec"]
        assert body["spec"]["template"]["spec"]["restartPolicy"] == "Never"
        assert body["metadata"]["labels"][objects.COMPONENT_KEY] == objects.KERNEL_COMPONENT
        assert not starting.done()  # no pod runs yet: the session waits

        cluster.add_pod(name, {"phase": "Running", "podIP": POD_IP})
        pod = await cluster.start_pod(name)  # the kubelet runs the Job's own command: the kernel host
        info = await asyncio.wait_for(starting, 90)
        assert (info["ip"], info["transport"]) == (POD_IP, "tcp")

        outputs: list[dict[str, Any]] = []
        client = AsyncKernelClient()
        client.load_connection_info(info)
        client.start_channels()
        try:
            await client.wait_for_ready(timeout=30)
            reply = await client.execute_interactive("1+1", timeout=30, output_hook=outputs.append)
        finally:
            client.stop_channels()
        assert reply["content"]["status"] == "ok"
        results = [m["content"]["data"]["text/plain"] for m in outputs if m["msg_type"] == "execute_result"]
        assert results == ["2"]

        running = await svc.get(job.id)
        assert (running.state, running.kind, running.node) == ("running", "kernel", POD_IP)

        await session.end()
        assert await asyncio.wait_for(pod.wait(), 60) == 0  # the host stopped; the pod's command exited 0
        cluster.mark_ended(name, ok=True)
        await svc.refresh()
        done = await svc.get(job.id)
        assert (done.state, done.reason, done.node) == ("succeeded", "shut_down", POD_IP)
    finally:
        if not starting.done():
            starting.cancel()
        if pod is not None and pod.returncode is None:
            pod.send_signal(signal.SIGTERM)  # the entry point passes it on to the host
            await asyncio.wait_for(pod.wait(), 30)
        await svc.stop()
