"""The local backend hands out GPUs and MIG slices (its own inventory, as nvidia-smi -L would list them),
and stops an opportunistic job when a normal one needs its GPU: real runners, real kernels."""

from __future__ import annotations

import pytest
from batch_fixtures import installed_kernels
from helpers import printed

from jupyter_gpu_env.backends.local import LocalBackend
from jupyter_gpu_env.errors import Conflict
from jupyter_gpu_env.jobs.service import JobService
from jupyter_gpu_env.jobs.store import JobStore

WAITS = [
    "import os, pathlib, time\nprint('devices:', os.environ.get('CUDA_VISIBLE_DEVICES'))",
    "while not pathlib.Path(go).exists():\n    time.sleep(0.05)",
]
RESUMES = [
    "import os, pathlib, time\nprint('resumed:', resumed, 'devices:', os.environ.get('CUDA_VISIBLE_DEVICES'))",
    "(pathlib.Path(checkpoint_dir) / 'ran').touch()\nwhile not pathlib.Path(go).exists():\n    time.sleep(0.05)",
]


def _service(batch, gpus: list[str], slots: int = 6) -> JobService:
    backend = LocalBackend(max_concurrent=slots, kill_grace=3.0, gpus=gpus)
    return JobService(
        JobStore(batch.db), {"local": backend}, batch.root, "jobs", kernel_names=installed_kernels,
        refresh_interval=0.2,
    )  # fmt: skip


async def test_jobs_get_gpus_and_slices_of_their_own_and_wait_while_none_is_free(batch):
    go = batch.root / "go"
    nb = batch.notebook("gpu.ipynb", WAITS, parameters="go = ''")
    svc = _service(batch, ["GPU-aaaa", "GPU-bbbb", "MIG-cccc:1g.10gb"])
    params = {"go": str(go)}
    try:
        info = svc.backends["local"].info()
        assert info.mig_profiles == ["1g.10gb"] and info.limits.max_gpus == 2
        assert [p.name for p in info.priorities] == ["normal", "opportunistic"]
        first = await svc.submit({"notebook_path": nb, "parameters": params, "resources": {"gpus": 1}})
        second = await svc.submit({"notebook_path": nb, "parameters": params, "resources": {"gpus": 1}})
        third = await svc.submit({"notebook_path": nb, "parameters": params, "resources": {"gpus": 1}})
        sliced = await svc.submit(
            {"notebook_path": nb, "parameters": params, "resources": {"mig_profile": "1g.10gb"}}
        )
        cpu = await svc.submit({"notebook_path": nb, "parameters": params, "resources": {"gpus": 0}})
        assert [j.state for j in (first, second, third)] == ["running", "running", "queued"]
        # a slice and a job with no GPU are not held up by the job waiting for a whole GPU
        for job in (sliced, cpu):
            await batch.wait_for(svc, job.id, lambda j: j.state == "running")
        third = await svc.get(third.id)
        assert third.pending_reason == "Waiting for a free GPU: 2 of 2 in use." and third.queue_position == 1
        capacity = await svc.capacity("local")
        assert {(r.profile, r.total, r.free) for r in capacity.rows} == {(None, 2, 0), ("1g.10gb", 1, 0)}

        with pytest.raises(Conflict, match="offers at most 2 GPUs, not 3"):
            await svc.submit({"notebook_path": nb, "parameters": params, "resources": {"gpus": 3}})
        with pytest.raises(Conflict, match="not offered"):
            await svc.submit(
                {"notebook_path": nb, "parameters": params, "resources": {"mig_profile": "3g.40gb"}}
            )

        go.touch()
        done = [await batch.wait_for(svc, j.id, batch.ended) for j in (first, second, third, sliced, cpu)]
        assert [j.state for j in done] == ["succeeded"] * 5, [(j.state, j.message) for j in done]
        seen = [printed(batch.root / j.output_path).split("devices: ")[1].strip() for j in done]
        assert seen[:2] == ["GPU-aaaa", "GPU-bbbb"] and seen[2] in ("GPU-aaaa", "GPU-bbbb")
        assert seen[3] == "MIG-cccc" and seen[4] == ""  # gpus: 0 sees none
        assert done[2].started_at >= min(done[0].finished_at, done[1].finished_at)
    finally:
        go.touch()
        await svc.stop()


async def test_a_normal_job_preempts_an_opportunistic_one_which_resumes_after_it(batch):
    go = batch.root / "go"
    nb = batch.notebook("train.ipynb", RESUMES, parameters="go = ''\ncheckpoint_dir = None\nresumed = False")
    svc = _service(batch, ["GPU-aaaa"])
    params = {"go": str(go)}
    try:
        low = await svc.submit(
            {"notebook_path": nb, "parameters": params, "resources": {"gpus": 1}, "priority": "opportunistic"}
        )
        assert low.state == "running" and low.checkpoint_dir == f"{low.job_dir}/checkpoint"
        await batch.wait_for(svc, low.id, lambda j: (batch.root / j.checkpoint_dir / "ran").exists())
        high = await svc.submit({"notebook_path": nb, "parameters": params, "resources": {"gpus": 1}})
        assert high.state == "queued"

        low = await batch.wait_for(svc, low.id, lambda j: j.state == "queued")
        assert [a.reason for a in low.attempts] == ["preempted"] and low.attempts[0].cells_done >= 2
        assert "Preempted; requeued" in low.message
        high = await batch.wait_for(svc, high.id, lambda j: j.state == "running")
        low = await svc.get(low.id)
        assert low.state == "queued" and "after the normal jobs" in (low.pending_reason or "")

        go.touch()
        high = await batch.wait_for(svc, high.id, batch.ended)
        low = await batch.wait_for(svc, low.id, batch.ended)
        assert (high.state, low.state) == ("succeeded", "succeeded"), low.message
        assert low.message == "All cells ran (preempted once, resumed)."
        (first,) = low.attempts
        assert first.ended_at <= first.resumed_at <= low.finished_at  # the wait between, not billed
        assert low.started_at < high.started_at < low.finished_at
        out = printed(batch.root / low.output_path)
        assert "resumed: True devices: GPU-aaaa" in out
        first_attempt = (batch.root / low.output_path).with_suffix(".attempt-1.ipynb")
        assert "resumed: False" in printed(first_attempt)  # the stopped attempt's notebook is kept
    finally:
        go.touch()
        await svc.stop()
