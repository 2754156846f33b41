"""A batch kernel on the real cluster: the kernel's Job held by Kueue while a job holds the queue's GPUs
(the session waits, no pod), then admitted; its pod run by the node agent with the Job's own command (the
real kernel host, in this venv), the session meeting it over loopback, one execute in the pod, the record
saying where it runs, and the end it asks for, after which the Job succeeds and the run reads "shut
down"."""

from __future__ import annotations

import asyncio
from typing import Any

from helpers import wait_for_job, wait_until
from jupyter_client.asynchronous import AsyncKernelClient

from jupyter_gpu_env.backends.kubernetes import objects
from jupyter_gpu_env.batchkernels.session import KernelSession
from jupyter_gpu_env.jobs.sessions import SessionAsk
from jupyter_gpu_env.models.jobs import JobRequest


async def test_a_kernel_waits_in_kueue_runs_in_its_pod_answers_and_ends_when_asked(real):
    svc = real.service()
    gate = real.root / "go"
    holder = await svc.submit({"notebook_path": real.gated_notebook("hold.ipynb"), "backend": "kubernetes",
                               "resources": {"gpus": 2}, "parameters": {"gate": str(gate)}})  # fmt: skip
    await wait_for_job(svc, holder.id, lambda j: j.state == "running", within=180, every=1)

    nb = real.notebook("analysis.ipynb", ["1 + 1"])
    request = JobRequest.model_validate(
        {"notebook_path": nb, "backend": "kubernetes", "kernel": "python3", "name": "interactive",
         "resources": {"gpus": 1}}
    )  # fmt: skip
    ask = SessionAsk(
        request=request, cwd=real.root, kernel_session={"bind": "loopback", "orphan_timeout": 120}
    )
    session = KernelSession(svc, ask, poll_interval=0.2, launch_timeout=180)
    starting = asyncio.ensure_future(session.start())
    kernels = f"{objects.COMPONENT_KEY}={objects.KERNEL_COMPONENT}"
    try:
        job = await wait_until(lambda: session.job, within=30, what="the session's job")
        queued = await wait_for_job(
            svc, job.id, lambda j: j.state == "queued" and bool(j.pending_reason), within=60
        )
        assert "quota" in (queued.pending_reason or ""), queued.pending_reason
        assert real.pods(kernels) == [] and not starting.done()  # held by Kueue: no pod, the session waits
        gate.touch()  # the job ends; its GPUs return to the queue and Kueue admits the kernel
        info = await asyncio.wait_for(starting, 200)
    finally:
        if not starting.done():
            starting.cancel()
    assert (info["ip"], info["transport"]) == ("127.0.0.1", "tcp")
    (made,) = real.jobs(kernels)
    assert made["spec"]["backoffLimit"] == 0
    assert made["metadata"]["labels"].get("kueue.x-k8s.io/queue-name") == real.tenancy.local_queue

    outputs: list[dict[str, Any]] = []
    client = AsyncKernelClient()
    client.load_connection_info(info)
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=60)
        reply = await client.execute_interactive(
            "import socket; socket.gethostname()", timeout=60, output_hook=outputs.append
        )
    finally:
        client.stop_channels()
    assert reply["content"]["status"] == "ok"
    (shown,) = [m["content"]["data"]["text/plain"] for m in outputs if m["msg_type"] == "execute_result"]
    pod = real.pod_of(made["metadata"]["name"])
    assert shown == repr(pod["metadata"]["name"])  # it ran in the pod (the agent gives each its hostname)

    running = await wait_for_job(svc, job.id, lambda j: j.state == "running", within=30, every=0.5)
    assert (running.kind, running.node) == ("kernel", "127.0.0.1")

    await session.end()
    done = await wait_for_job(svc, job.id, lambda j: j.state == "succeeded", within=120, every=1)
    assert done.reason == "shut_down"
    ended = real.pod_of(made["metadata"]["name"])
    assert ended["status"]["phase"] == "Succeeded"  # the host stopped and the pod's command exited 0
