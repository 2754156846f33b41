"""A job whose own code writes over the runner's files in its folder, on the real local backend: the
server keeps its own account (who to cancel, when it ran, what it used), and one job's damaged files
never hold up another's."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from typing import Any

import psutil
from batch_fixtures import installed_kernels, running
from helpers import wait_for_sweep, wait_until, write_notebook

from jupyter_gpu_env.backends.local import LocalBackend
from jupyter_gpu_env.jobs.service import JobService
from jupyter_gpu_env.jobs.store import JobStore

# The kernel's parent is the runner, whose last argument is the job's folder.
FOLDER = "import json, os, signal, time, psutil\nfolder = psutil.Process(os.getppid()).cmdline()[-1]"
HOLD = "while not os.path.exists(os.path.join(folder, 'release')):\n    time.sleep(0.05)"


def release(batch: Any) -> None:
    """Let every held notebook end, whatever the test's outcome."""
    for folder in batch.job_folders():
        (folder / "release").touch()


async def test_damaged_progress_is_that_jobs_alone(batch):
    """cells_done: 1e999 once made every refresh fail: no job was ever recorded as finished again."""
    liar = batch.notebook(
        "liar.ipynb",
        [
            FOLDER,
            "open(os.path.join(folder, 'progress.json'), 'w').write('{\"cells_done\": 1e999, \"cells_total\": 3}')\n"
            + HOLD,
        ],
    )
    honest = batch.notebook("honest.ipynb", ["x = 1"])
    svc = batch.service()
    try:
        bad = await svc.submit({"notebook_path": liar})
        await batch.wait_for(svc, bad.id, lambda j: "progress.json is damaged" in j.message)
        good = await svc.submit({"notebook_path": honest})
        good = await batch.wait_for(svc, good.id, batch.ended)
        assert good.state == "succeeded", good.message
        listed = await svc.list()
        assert {j.id for j in listed.items} == {bad.id, good.id}
        (batch.root / bad.job_dir / "release").touch()
        bad = await batch.wait_for(svc, bad.id, batch.ended)
        assert bad.state == "succeeded" and bad.progress.cells_done == bad.progress.cells_total
    finally:
        release(batch)
        await svc.stop()


async def test_a_rewritten_pid_file_cannot_aim_a_cancel_at_another_process(batch):
    victim = subprocess.Popen(["sleep", "300"], start_new_session=True)
    try:
        planted = {
            "pid": victim.pid,
            "create_time": psutil.Process(victim.pid).create_time(),
            "started_at": 1e9,
        }
        nb = batch.notebook(
            "aims.ipynb",
            [FOLDER, f"json.dump({planted!r}, open(os.path.join(folder, 'runner.pid'), 'w'))\n" + HOLD],
        )
        svc = batch.service()
        try:
            job = await svc.submit({"notebook_path": nb})
            runner = int(job.backend_job_id or 0)
            pid_file = batch.root / job.job_dir / "runner.pid"
            await wait_until(
                lambda: f'"pid": {victim.pid}' in pid_file.read_text(), what="the pid file rewritten"
            )
            job = await batch.wait_for(svc, job.id, lambda j: j.state == "running")
            assert job.backend_job_id == str(runner)
            job = await svc.cancel(job.id)
            job = await batch.wait_for(svc, job.id, batch.ended)
            assert job.state == "cancelled"
            await batch.wait_gone(runner, within=30)  # the job's runner was stopped ...
            assert running(victim.pid)  # ... and the process the pid file named was not touched
            assert job.started_at is not None and job.started_at >= job.created_at
        finally:
            release(batch)
            await svc.stop()
    finally:
        victim.kill()
        victim.wait()


async def test_a_forged_status_and_gpu_summary_bill_only_what_was_observed(batch):
    """A job that says it started at 0 and used its GPU at 5000 % is billed its real minute, at most 100 %."""
    forged_gpu = {
        "available": True,
        "samples": 9,
        "mean_utilization_percent": 5000.0,
        "gpu_hours_allocated": 168.0,
    }
    nb = batch.notebook(
        "forges.ipynb",
        [
            FOLDER,
            f"json.dump({forged_gpu!r}, open(os.path.join(folder, 'gpu.json'), 'w'))\n"
            "json.dump({'state': 'succeeded', 'started_at': 0, 'finished_at': time.time(), 'exit_code': 0},"
            " open(os.path.join(folder, 'status.json'), 'w'))\n"
            "os.killpg(os.getppid(), signal.SIGKILL)  # the runner never writes its own status",
        ],
    )
    backend = LocalBackend(max_concurrent=2, kill_grace=3.0, gpu_count=1)
    svc = JobService(
        JobStore(batch.db), {"local": backend}, batch.root, "jobs", kernel_names=installed_kernels,
        refresh_interval=0.2, gpu_sample_interval=0,
    )  # fmt: skip
    try:
        t0 = time.time()
        job = await svc.submit({"notebook_path": nb, "resources": {"gpus": 1}})
        job = await batch.wait_for(svc, job.id, batch.ended)
        assert job.started_at is not None and job.finished_at is not None
        assert t0 <= job.started_at <= job.finished_at <= time.time()
        assert job.gpu is None or not job.gpu.available
        if job.gpu is not None:
            assert "gpu.json is damaged" in (job.gpu.reason or "")
        usage = await svc.usage(start=t0 - 3600)
        wall_hours = (time.time() - t0) / 3600
        assert 0 < usage.total.gpu_hours <= wall_hours
        assert usage.total.gpu_hours_used <= usage.total.gpu_hours
    finally:
        await svc.stop()


async def test_a_retried_run_executes_what_its_record_says(batch, job_service):
    """The run rewrites its job.json (alpha=99) and fails; the retry runs alpha=1, as its record says."""
    nb = write_notebook(
        batch.root, "sweep/rewrites.ipynb",
        [
            FOLDER + "\nspec_path = os.path.join(folder, 'job.json')\nmarker = os.path.join(os.getcwd(), 'once')",
            "if not os.path.exists(marker):\n"
            "    spec = json.load(open(spec_path))\n"
            "    spec['parameters']['alpha'] = 99\n"
            "    json.dump(spec, open(spec_path, 'w'))\n"
            "    open(marker, 'w').close()\n"
            "    raise ValueError('first try fails')",
        ],
        parameters="alpha = 1", results="{'alpha_seen': alpha}",
    )  # fmt: skip
    svc = job_service()
    group = await svc.submit({"notebook_path": nb, "sweep": {"alpha": [1]}})
    group = await wait_for_sweep(svc, group.id)
    assert group.state == "failed"
    group = await svc.sweeps.retry_failed(group.id)
    group = await wait_for_sweep(svc, group.id)
    assert group.state == "succeeded"
    (row,) = (await svc.sweeps.results(group.id)).rows
    assert row.parameters == {"alpha": 1} and row.values == {"alpha_seen": 1}


def test_a_runner_between_its_fork_and_its_exec_counts_as_running(tmp_path):
    """A poll in the first milliseconds once saw the server's own command line on the new runner and
    recorded the job lost; a process the job's code made (not the server's child) never counts."""
    from jupyter_gpu_env.backends.local.processes import runner_of

    child = subprocess.Popen(
        ["sleep", "30"], start_new_session=True
    )  # as a fork not yet exec'd: another argv
    out = subprocess.run(
        ["sh", "-c", "setsid sleep 30 >/dev/null 2>&1 & echo $!"], capture_output=True, text=True, check=True
    )
    orphan = int(out.stdout)  # its parent, sh, has ended: it is nobody's child of ours
    try:
        assert runner_of(child.pid, tmp_path) is not None
        assert runner_of(orphan, tmp_path) is None
    finally:
        child.kill()
        child.wait()
        os.kill(orphan, signal.SIGKILL)


async def test_a_pid_file_not_believed_in_a_queued_job_s_folder_does_not_hold_the_queue(batch):
    """A runner.pid saying launching_at: "soon" (written by another job's code into a queued job's
    folder) once kept that job from ever starting (failed, its runner not found); one naming neither a
    runner nor a launch is as little the server's. Both jobs start, in their turn."""
    holder = batch.notebook("hold.ipynb", [FOLDER, HOLD])
    quick = batch.notebook("quick.ipynb", ["x = 1"])
    svc = batch.service(max_concurrent=1)
    try:
        first = await svc.submit({"notebook_path": holder})
        second = await svc.submit({"notebook_path": quick})
        third = await svc.submit({"notebook_path": quick})
        assert (first.state, second.state, third.state) == ("running", "queued", "queued")
        (batch.root / second.job_dir / "runner.pid").write_text(json.dumps({"launching_at": "soon"}))
        (batch.root / third.job_dir / "runner.pid").write_text(json.dumps({"pid": None}))
        await svc.refresh()
        assert [(await svc.get(j.id)).state for j in (second, third)] == ["queued", "queued"]
        (batch.root / first.job_dir / "release").touch()
        for job in (first, second, third):
            done = await batch.wait_for(svc, job.id, batch.ended)
            assert done.state == "succeeded", (job.id, done.message)
    finally:
        release(batch)
        await svc.stop()


def test_only_a_pid_file_no_launch_wrote_is_taken_away(tmp_path):
    """A claim another process made (a launch under way, a runner) is kept, whatever raced it."""
    from jupyter_gpu_env.backends.local.processes import _clear_stray

    pid_file = tmp_path / "runner.pid"
    for stray in ('{"launching_at": "soon"}', "{}", "not json", '{"pid": null}'):
        pid_file.write_text(stray)
        assert _clear_stray(tmp_path) and not pid_file.exists()
    for claim in (f'{{"launching_at": {time.time()}}}', f'{{"pid": {os.getpid()}}}'):
        pid_file.write_text(claim)
        assert not _clear_stray(tmp_path) and pid_file.read_text() == claim
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runner.pid"]  # nothing left aside
