"""`c.GpuEnvApp.job_gpu_idle_action = "cancel"`: a real local job whose runner reports its GPU idle is
warned, then cancelled after the grace with its reason recorded and its end told to the notifier. This
machine has no GPU, so the test writes the runner's GPU summary (gpu.json) as its sampler would on one."""

from __future__ import annotations

import json

from jupyter_gpu_env.contracts import jobfiles
from jupyter_gpu_env.efficiency.idle import IdleEnforcer

GPU = {"available": True, "devices": [{"name": "NVIDIA H100 80GB HBM3"}], "samples": 10}


def _report_idle(folder, seconds: float) -> None:
    (folder / jobfiles.GPU_SUMMARY).write_text(json.dumps({**GPU, "idle_seconds": seconds}))


async def test_an_idle_job_is_warned_then_cancelled_with_its_reason_told(batch, job_service):
    nb = batch.notebook("idle.ipynb", ["import time\ntime.sleep(300)"])
    svc = job_service()
    told = []
    svc.tracker.on_ended = told.append
    enforcer = IdleEnforcer(svc, threshold=600, grace=300)
    job = await svc.submit({"notebook_path": nb})
    folder = batch.root / job.job_dir
    _report_idle(folder, 120)
    job = await batch.wait_for(svc, job.id, lambda j: j.gpu is not None and j.gpu.idle_seconds == 120)
    await enforcer.tick()
    assert (await svc.get(job.id)).message == "Running on local."  # under the threshold: nothing

    _report_idle(folder, 660)
    await batch.wait_for(svc, job.id, lambda j: j.gpu.idle_seconds == 660)
    await enforcer.tick()
    job = await svc.get(job.id)
    assert job.state == "running"
    assert job.message == (
        "Its GPU has been idle for 11 min: it will be cancelled in 4 min unless it uses the GPU again."
    )
    _report_idle(folder, 30)  # it worked again: the warning is withdrawn
    await batch.wait_for(svc, job.id, lambda j: j.gpu.idle_seconds == 30)
    await enforcer.tick()
    assert (await svc.get(job.id)).message == "Running on local."

    _report_idle(folder, 905)
    await batch.wait_for(svc, job.id, lambda j: j.gpu.idle_seconds == 905)
    await enforcer.tick()
    job = await svc.get(job.id)
    assert (job.state, job.reason) == ("cancelled", "gpu_idle")
    assert job.message.startswith("Cancelled: its GPU was idle for 15 min.")
    assert [(j.id, j.reason) for j in told] == [(job.id, "gpu_idle")]
