"""A batch kernel is accounted and held to the site's GPU idle rule as a job is: its GPU summary (the
host's sampler writes gpu.json as the runner's does; this machine has no GPU, so the test writes it) is
recorded on its job, and an idle one is cancelled with its reason, unless the site exempts batch
kernels (``c.BatchKernels.gpu_idle_applies = False``)."""

from __future__ import annotations

import json

from helpers import wait_until

from jupyter_gpu_env.contracts import jobfiles
from jupyter_gpu_env.contracts.batchkernel import files
from jupyter_gpu_env.efficiency.idle import IdleEnforcer
from jupyter_gpu_env.jobs.sessions import SessionAsk, SessionJobs
from jupyter_gpu_env.models.jobs import JobRequest

GPU = {"available": True, "devices": [{"name": "NVIDIA H100 80GB HBM3"}], "samples": 10}


async def _idle_session(batch, svc, seconds: float):
    request = JobRequest.model_validate({"notebook_path": "a.ipynb", "kernel": "python3", "backend": "local"})
    ask = SessionAsk(
        request=request, cwd=batch.root, kernel_session={"bind": "loopback", "orphan_timeout": 120}
    )
    job = await SessionJobs(svc).submit(ask)
    folder = batch.root / job.job_dir
    await wait_until(lambda: files.read_host(folder), within=60, what="the kernel host's host.json")
    (folder / jobfiles.GPU_SUMMARY).write_text(json.dumps({**GPU, "idle_seconds": seconds}))
    return await batch.wait_for(svc, job.id, lambda j: j.gpu is not None and j.gpu.idle_seconds == seconds)


async def test_an_idle_batch_kernel_is_recorded_and_cancelled_like_a_job(batch, job_service):
    svc = job_service()
    job = await _idle_session(batch, svc, 905)
    assert job.kind == "kernel" and job.gpu.devices[0].name == "NVIDIA H100 80GB HBM3"
    await IdleEnforcer(svc, threshold=600, grace=300).tick()
    job = await batch.wait_for(svc, job.id, lambda j: j.state == "cancelled")
    assert job.reason == "gpu_idle" and job.message.startswith("Cancelled: its GPU was idle for 15 min.")


async def test_a_site_may_exempt_batch_kernels(batch, job_service):
    svc = job_service()
    job = await _idle_session(batch, svc, 905)
    await IdleEnforcer(svc, threshold=600, grace=300, exempt=("kernel",)).tick()
    assert (await svc.get(job.id)).state == "running"
    await svc.cancel(job.id)
