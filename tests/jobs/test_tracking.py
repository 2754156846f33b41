"""What the tracker makes of an observation, applied to a record in a real store: which jobs a backend
may say it requeued, and what a job's folder may claim of its energy."""

from __future__ import annotations

import time

from helpers import job_record

from jupyter_gpu_env.backends.base import Observation
from jupyter_gpu_env.jobs.attempts import summed
from jupyter_gpu_env.jobs.tracking import FolderFiles
from jupyter_gpu_env.models.attempts import JobAttempt
from jupyter_gpu_env.models.jobs import Cost, JobGpuDevice, JobGpuUsage


async def test_a_requeue_is_believed_of_an_opportunistic_notebook_never_of_a_kernel_session(batch):
    svc = batch.service()  # not started: nothing polls these records but this test
    now = time.time()
    ids = {"notebook": "0000aaaa0001", "kernel": "0000aaaa0002"}
    for kind, job_id in ids.items():
        await svc.store.insert(
            job_record(
                job_id,
                kind=kind,
                priority="opportunistic",
                state="running",
                created_at=now - 60,
                started_at=now - 30,
                backend_job_id="4242",
            )  # fmt: skip
        )
    stopped = Observation(state="queued", requeued="preempted", pending_reason="Preempted for other work.")
    try:
        notebook = await svc.tracker.apply(await svc.store.get(ids["notebook"]), stopped, FolderFiles())
        kernel = await svc.tracker.apply(await svc.store.get(ids["kernel"]), stopped, FolderFiles())
        assert notebook.state == "queued" and [a.reason for a in notebook.attempts] == ["preempted"]
        # A kernel cannot resume in a new allocation: its record runs on until its backend says it ended.
        assert kernel.state == "running" and kernel.attempts == []
        ended = Observation(state="failed", reason="preempted", message="Stopped for other work.")
        kernel = await svc.tracker.apply(kernel, ended, FolderFiles())
        assert (kernel.state, kernel.reason, kernel.attempts) == ("failed", "preempted", [])
    finally:
        await svc.stop()


async def test_the_energy_a_folder_claims_is_capped_at_what_the_run_could_draw(batch):
    """1500 W a device held over the record's run time at most; the folder's carbon and cost never kept."""
    svc = batch.service()
    now = time.time()
    await svc.store.insert(
        job_record(
            "0000bbbb0001", state="running", created_at=now - 120, started_at=now - 60, resources={"gpus": 1}
        )  # fmt: skip
    )
    claimed = JobGpuUsage(
        available=True,
        devices=[JobGpuDevice(name="NVIDIA H100 80GB HBM3")],
        gpu_hours_allocated=0.01,
        energy_joules=5e9,
        energy_source="counter",
        co2e_grams=0.0,
        cost=Cost(amount=0.0, currency="EUR"),
    )
    try:
        job = await svc.tracker.apply(await svc.store.get("0000bbbb0001"), None, FolderFiles(gpu=claimed))
        assert job.gpu is not None and job.gpu.energy_joules is not None
        assert 1500 * 59 <= job.gpu.energy_joules <= 1500 * 61  # one device, about 60 s
        assert "kept at that bound" in (job.gpu.energy_note or "")
        assert (job.gpu.co2e_grams, job.gpu.cost) == (None, None)
        believable = claimed.model_copy(update={"energy_joules": 30_000.0})
        job = await svc.tracker.apply(job, None, FolderFiles(gpu=believable))
        assert job.gpu is not None and job.gpu.energy_joules == 30_000.0 and job.gpu.energy_note is None
        assert (await svc.store.get(job.id)).gpu == job.gpu  # what the ledger keeps
    finally:
        await svc.stop()


def test_a_resumed_jobs_energy_sums_its_attempts():
    first = JobAttempt(number=1, reason="preempted", gpu_hours_allocated=0.2, energy_joules=1000.0,
                       energy_source="counter")  # fmt: skip
    unmeasured = JobAttempt(number=2, reason="evicted", gpu_hours_allocated=0.1)
    now = JobGpuUsage(
        available=True, gpu_hours_allocated=0.3, energy_joules=500.0, energy_source="power samples"
    )
    total = summed(now, [first])
    assert (total.gpu_hours_allocated, total.energy_joules) == (0.5, 1500.0)
    assert total.energy_source == "power samples"  # the least exact of the parts names the sum
    gap = summed(now, [first, unmeasured])
    assert gap.energy_joules == 1500.0
    assert gap.energy_note == "Attempt 2 measured no energy: the sum counts the other attempts' only."
    blind = now.model_copy(update={"energy_joules": None, "energy_source": None})
    alone = summed(blind, [first])
    assert (alone.energy_joules, alone.energy_source) == (1000.0, "counter")
    assert (
        alone.energy_note
        == "The current attempt measured no energy: the sum counts the other attempts' only."
    )
    assert summed(blind, [unmeasured]).energy_joules is None
