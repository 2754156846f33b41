"""What the server assigned and recorded stands, whatever a job writes in a job folder (its own or a
queued one's): the queue goes on, a retry runs its record's limits, the GPUs stay the server's to give."""

from __future__ import annotations

import json

from batch_fixtures import installed_kernels
from helpers import wait_for_sweep, wait_until, write_notebook

from jupyter_gpu_env.backends.local import LocalBackend
from jupyter_gpu_env.jobs.service import JobService
from jupyter_gpu_env.jobs.store import JobStore

FOLDER = "import json, os, time, psutil\nfolder = psutil.Process(os.getppid()).cmdline()[-1]"
HOLD = "while not os.path.exists(os.path.join(folder, 'release')):\n    time.sleep(0.05)"


async def test_a_queued_retry_whose_job_json_another_job_rewrote_keeps_its_record_s_limit(batch):
    """The run lifts the time limit in its own job.json and fails; then another job's code lifts it in
    the job.json of the retry waiting in the queue: the retry still stops at its record's 20 s (it once
    ran on, as the rewritten job.json said). 20 s, not less: a kernel that starts slowly on a busy machine
    must not reach the limit before the first try's own failure."""
    nb = write_notebook(
        batch.root, "sweep/fails.ipynb",
        [
            FOLDER + "\nspec_path = os.path.join(folder, 'job.json')\nmarker = os.path.join(os.getcwd(), 'once')",
            "if not os.path.exists(marker):\n"
            "    spec = json.load(open(spec_path))\n"
            "    spec['time_limit_seconds'] = spec['resources']['time_limit_seconds'] = None\n"
            "    json.dump(spec, open(spec_path, 'w'))\n"
            "    open(marker, 'w').close()\n"
            "    raise ValueError('first try fails')",
            "time.sleep(120)",
        ],
        parameters="alpha = 1",
    )  # fmt: skip
    holder = batch.notebook("hold.ipynb", [FOLDER, HOLD])
    svc = batch.service(max_concurrent=1)
    try:
        group = await svc.submit(
            {"notebook_path": nb, "sweep": {"alpha": [1]}, "resources": {"time_limit": "0:00:20"}}
        )
        group = await wait_for_sweep(svc, group.id)
        (tried,) = await svc.sweeps.records.runs(group.id)
        assert (tried.state, tried.reason) == ("failed", "cell_error"), tried.message  # the first try's own
        first = await svc.submit({"notebook_path": holder})
        group = await svc.sweeps.retry_failed(group.id)
        (run,) = await svc.sweeps.records.runs(group.id)
        assert run.state == "queued"
        spec_path = batch.root / run.job_dir / "job.json"
        spec = json.loads(spec_path.read_text())
        spec["time_limit_seconds"] = None
        spec["resources"]["time_limit_seconds"] = None
        spec_path.write_text(json.dumps(spec))
        (batch.root / first.job_dir / "release").touch()
        run = await batch.wait_for(svc, run.id, batch.ended, within=150)
        assert (run.state, run.reason) == ("failed", "time_limit"), run.message
        assert run.finished_at - run.started_at < 100  # its record's 20 s, not the notebook's 120 s
    finally:
        for folder in batch.job_folders():
            (folder / "release").touch()
        await svc.stop()


async def test_after_a_restart_the_gpus_held_are_the_ones_the_server_gave(batch):
    """A job rewrote the devices in its runner.pid (GPU-bbbb for its GPU-aaaa); after a restart a new
    job was once given GPU-aaaa, which the first still used."""
    swap = (
        "path = os.path.join(folder, 'runner.pid')\n"
        "spec = json.load(open(path))\n"
        "spec['devices'] = ['GPU-bbbb']\n"
        "json.dump(spec, open(path, 'w'))\n"
    )
    seen = "open(os.path.join(folder, 'devices'), 'w').write(os.environ['CUDA_VISIBLE_DEVICES'])"
    liar = batch.notebook("liar.ipynb", [FOLDER, seen, swap, HOLD])
    honest = batch.notebook("honest.ipynb", [FOLDER, seen, HOLD])

    def server() -> JobService:
        backend = LocalBackend(max_concurrent=4, kill_grace=3.0, gpus=["GPU-aaaa", "GPU-bbbb"])
        return JobService(
            JobStore(batch.db), {"local": backend}, batch.root, "jobs", kernel_names=installed_kernels,
            refresh_interval=0.2,
        )  # fmt: skip

    first = server()
    try:
        held = await first.submit({"notebook_path": liar, "resources": {"gpus": 1}})
        pid_file = batch.root / held.job_dir / "runner.pid"
        await wait_until(lambda: "GPU-bbbb" in pid_file.read_text(), what="the pid file rewritten")
    finally:
        await first.stop()  # the job runs on
    second = server()
    sent = [held]
    try:
        await second.reconcile()
        given = await second.submit({"notebook_path": honest, "resources": {"gpus": 1}})
        waits = await second.submit({"notebook_path": honest, "resources": {"gpus": 1}})
        sent += [given, waits]
        await batch.wait_for(second, given.id, lambda j: j.state == "running")
        assert (await second.get(waits.id)).state == "queued"
        out = batch.root / given.job_dir / "devices"
        await wait_until(out.exists, what="the second job's devices written")
        assert out.read_text() == "GPU-bbbb"
        assert (batch.root / held.job_dir / "devices").read_text() == "GPU-aaaa"
    finally:
        for folder in batch.job_folders():
            (folder / "release").touch()
        for job in sent:
            await batch.wait_for(second, job.id, batch.ended)
        await second.stop()
