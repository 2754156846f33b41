"""Jobs cancelled on the local backend: every runner ends, no folder of an ended job is left saying a
runner lives (a runner.pid), and a cancel never starts the job it is stopping."""

from __future__ import annotations

import asyncio

import psutil
from helpers import wait_until

HOLD = (
    "import os, time, psutil\nfolder = psutil.Process(os.getppid()).cmdline()[-1]\n"
    "while not os.path.exists(os.path.join(folder, 'release')):\n    time.sleep(0.05)"
)


def runners_of(folders: set[str]) -> list[int]:
    """The live runner processes of these job folders."""
    found = []
    for p in psutil.process_iter(["cmdline", "status"]):
        argv = p.info["cmdline"] or []
        if p.info["status"] != psutil.STATUS_ZOMBIE and argv[-1:] and argv[-1] in folders:
            if "jupyter_gpu_env.runner" in argv:
                found.append(p.pid)
    return found


async def test_thirty_jobs_cancelled_at_once_leave_no_runner_and_no_pid_file(batch):
    nb = batch.notebook("hold.ipynb", [HOLD])
    svc = batch.service(max_concurrent=4)
    jobs = []
    try:
        jobs = [await svc.submit({"notebook_path": nb}) for _ in range(30)]
        running = [j for j in jobs if j.state == "running"]
        assert len(running) == 4
        for job in running:  # each runner has its kernel executing the notebook
            await batch.wait_for(svc, job.id, lambda j: j.progress.cells_total > 0)
        cancelled = await asyncio.gather(*(svc.cancel(j.id) for j in jobs))
        assert {j.state for j in cancelled} == {"cancelled"}
        folders = {str(batch.root / j.job_dir) for j in jobs}
        await wait_until(lambda: not runners_of(folders), within=30, what="every runner ending")
        left = lambda: [f for f in batch.job_folders() if (f / "runner.pid").exists()]  # noqa: E731
        await wait_until(lambda: not left(), within=5, what=lambda: f"runner.pid gone from {left()}")
        ran = [f for f in batch.job_folders() if (f / "log.txt").exists()]
        assert len(ran) == 4, "a cancel started a job it was stopping"
    finally:
        for folder in batch.job_folders():
            (folder / "release").touch()
        await svc.stop()


async def test_cancelling_a_queued_job_as_a_slot_frees_never_starts_it(batch):
    """The cancel looks at how the job stands first; that look once started it in the slot just freed
    (its notebook began, then was killed)."""
    nb = batch.notebook("hold.ipynb", [HOLD])
    svc = batch.service(max_concurrent=1)
    try:
        first = await svc.submit({"notebook_path": nb})
        second = await svc.submit({"notebook_path": nb})
        assert (first.state, second.state) == ("running", "queued")
        (batch.root / first.job_dir / "release").touch()
        await batch.wait_gone(int(first.backend_job_id or 0), within=60)  # no refresh has seen it end
        second = await svc.cancel(second.id)
        assert second.state == "cancelled"
        folder = batch.root / second.job_dir
        assert not (folder / "runner.pid").exists() and not (folder / "log.txt").exists()
        assert (await svc.get(first.id)).state == "succeeded"
        assert not (batch.root / first.job_dir / "runner.pid").exists()  # an ended job's, gone too
    finally:
        for folder in batch.job_folders():
            (folder / "release").touch()
        await svc.stop()
