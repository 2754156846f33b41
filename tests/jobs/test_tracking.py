"""What the tracker makes of an observation, applied to a record in a real store: which jobs a backend
may say it requeued."""

from __future__ import annotations

import time

from helpers import job_record

from jupyter_gpu_env.backends.base import Observation
from jupyter_gpu_env.jobs.tracking import FolderFiles


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
