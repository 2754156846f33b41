"""End to end on a real single-node SLURM 22.05 (scripts/slurm-local.sh, two fake GPUs through gres).

Notebooks go through JobService with the SLURM backend: sbatch of the generated script, the real runner
and papermill on the "node", squeue/scontrol for state, scancel to cancel.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from helpers import printed, wait_until

from jupyter_gpu_env import proc
from jupyter_gpu_env.backends.slurm import script
from jupyter_gpu_env.contracts import jobfiles
from jupyter_gpu_env.errors import Conflict

PRINT_GPU = "import os; print('CVD=' + repr(os.environ.get('CUDA_VISIBLE_DEVICES')))"


def outputs(root, job) -> str:
    return printed(root / job.output_path)


async def test_notebook_runs_with_its_parameter_and_a_gpu_reaches_the_job(slurm):
    """Two jobs at once: a parameterised one in the `short` partition, and one that asks for a GPU."""
    nb = slurm.notebook("params.ipynb", ["print('doubled:', alpha * 2)", PRINT_GPU], parameters="alpha = 1")
    svc = slurm.service()
    try:
        plain = await svc.submit(
            {
                "notebook_path": nb,
                "backend": "slurm",
                "parameters": {"alpha": 21},
                "queue": "short",
                "resources": {"gpus": 0, "time_limit": "0:05:00", "memory": "1G"},
            }
        )
        gpu = await svc.submit({"notebook_path": nb, "backend": "slurm", "resources": {"gpus": 1}})
        assert plain.state == "queued" and plain.backend_job_id and gpu.backend_job_id
        text = (slurm.root / plain.job_dir / script.SCRIPT).read_text()
        assert "#SBATCH --partition=short" in text and "#SBATCH --time=5" in text
        assert "#SBATCH --mem=1G" in text and "--gres" not in text
        assert "#SBATCH --gres=gpu:1" in (slurm.root / gpu.job_dir / script.SCRIPT).read_text()

        slurm.commands.clear()
        plain = await slurm.wait_for(svc, plain.id, slurm.ended, within=90)
        gpu = await slurm.wait_for(svc, gpu.id, slurm.ended, within=90)
        assert plain.state == "succeeded", plain.message
        assert gpu.state == "succeeded", gpu.message
        # One squeue per poll for both jobs; never one query per job.
        polls = [c for c in slurm.commands if c[0] == "squeue"]
        assert polls and all(f"--jobs={plain.backend_job_id},{gpu.backend_job_id}" in c for c in polls[:1])
        assert not [c for c in slurm.commands if c[0] == "scontrol"]

        printed = outputs(slurm.root, plain)
        assert "doubled: 42" in printed
        assert "CVD=''" in printed  # gpus=0: no GPU picked up by default
        assert plain.progress.cells_done == plain.progress.cells_total == 4
        assert plain.exit_code == 0 and plain.started_at and plain.finished_at
        log = (await svc.log(plain.id)).text
        assert "doubled: 42" in log and "job succeeded" in log

        gpu_printed = outputs(slurm.root, gpu)
        assert "CVD='0'" in gpu_printed or "CVD='1'" in gpu_printed, gpu_printed

        shown = await slurm.sh("scontrol", "-o", "show", "job", plain.backend_job_id)
        assert "Partition=short" in shown.stdout and "TimeLimit=00:05:00" in shown.stdout
    finally:
        await svc.stop()


async def test_cancel_a_running_job(slurm):
    nb = slurm.notebook(
        "sleeps.ipynb", ["print('started', flush=True)", "import time; time.sleep(120)", "print('never')"]
    )
    svc = slurm.service()
    try:
        job = await svc.submit({"notebook_path": nb, "backend": "slurm"})
        folder = slurm.root / job.job_dir
        job = await slurm.wait_for(svc, job.id, lambda j: j.progress.cells_done >= 1, within=60)
        assert job.state == "running" and "SLURM job" in job.message

        job = await svc.cancel(job.id)
        assert job.state == "cancelled"

        async def both_ended():  # the runner records the cancel itself, and SLURM ends the job
            status = jobfiles.read_status(folder)
            row = await svc.backends["slurm"].controller.scontrol(job.backend_job_id)
            return (status, row) if status and row and row.state == "CANCELLED" else None

        status, row = await wait_until(
            both_ended, within=20, every=0.2, what="the runner and SLURM ending it"
        )
        assert status["state"] == "cancelled"
        assert row.state == "CANCELLED"
        assert (await svc.get(job.id)).state == "cancelled"
        assert "never" not in outputs(slurm.root, job)
    finally:
        await svc.stop()


@pytest.mark.parametrize(
    ("resources", "queue", "slurm_says"),
    [
        ({"gpus": 64}, None, "Requested node configuration is not available"),
        ({"memory": "900G"}, None, "Memory specification can not be satisfied"),
        ({"time_limit": "20"}, "short", "Requested time limit is invalid"),
        ({}, "nope", "Invalid partition name specified"),
    ],
)
async def test_impossible_request_is_refused_with_slurms_message(slurm, resources, queue, slurm_says):
    nb = slurm.notebook("any.ipynb", ["print(1)"])
    svc = slurm.service()
    try:
        with pytest.raises(Conflict) as err:
            await svc.submit(
                {"notebook_path": nb, "backend": "slurm", "resources": resources, "queue": queue}
            )
        assert slurm_says in str(err.value) and str(err.value).startswith("SLURM refused the job")
        assert err.value.reason == "slurm_refused"
        assert (await svc.store.count()) == 0  # nothing recorded
        jobs = slurm.root / "jobs"
        assert not jobs.exists() or not list(jobs.iterdir())  # no folder left behind
    finally:
        await svc.stop()


async def test_pending_reason_while_the_gpus_are_taken_then_cancelled_from_outside(slurm):
    """A job waiting for GPUs says why; one scancelled outside the server ends cancelled, saying so."""
    blocker = slurm.root / "blocker.sh"
    blocker.write_text("#!/bin/bash\nsleep 120\n")
    taken = await slurm.sh("sbatch", "--parsable", "--gres=gpu:2", "--output=/dev/null", str(blocker))
    blocker_id = taken.stdout.strip()
    nb = slurm.notebook("waits.ipynb", ["print(1)"])
    svc = slurm.service()
    try:
        job = await svc.submit({"notebook_path": nb, "backend": "slurm", "resources": {"gpus": 1}})
        job = await slurm.wait_for(
            svc, job.id, lambda j: (j.pending_reason or "").startswith("Resources"), within=30
        )
        assert job.state == "queued"
        assert job.pending_reason.startswith("Resources: waiting for free GPUs"), job.pending_reason

        await slurm.sh("scancel", job.backend_job_id)
        job = await slurm.wait_for(svc, job.id, slurm.ended, within=30)
        assert job.state == "cancelled" and "Cancelled in SLURM" in job.message
        assert job.started_at is None  # it never ran
    finally:
        await slurm.sh("scancel", blocker_id)
        await svc.stop()


async def test_info_reads_partitions_and_gpus_from_sinfo(slurm):
    backend = slurm.backend()
    await backend.refresh_info()
    info = backend.info()
    assert info.kind == "slurm"
    assert info.queues == ["debug", "short", "scavenger"] and info.default_queue == "debug"
    assert info.supports_gpus and info.limits.max_gpus == 2
    assert info.limits.max_cpus and info.limits.max_memory_bytes
    assert info.limits.max_time_limit_seconds is None  # debug has no limit

    offered = slurm.backend(partitions=["short"])
    await offered.refresh_info()
    info = offered.info()
    assert info.queues == ["short"] and info.default_queue == "short"
    assert info.limits.max_time_limit_seconds == 600


@pytest.mark.skipif(
    not (shutil.which("squashfuse") and shutil.which("mksquashfs") and os.path.exists("/dev/fuse")),
    reason="needs squashfuse, mksquashfs and /dev/fuse",
)
async def test_image_is_mounted_on_the_node_with_squashfuse(slurm, tmp_path):
    """The script mounts the job's image for the runner's lifetime and tells it where (the prefix variable).

    The image is a small virtual environment whose site-packages point at this project's, so its Python
    can start a kernel. Whether the notebook then runs inside it is the runner's part: until the runner
    reads the prefix, it refuses images, saying so.
    """
    env = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    site = next((env / "lib").glob("python3*/site-packages"))
    (site / "project.pth").write_text("\n".join(p for p in sys.path if p.endswith("site-packages")) + "\n")
    image = tmp_path / "env.sqfs"
    subprocess.run(["mksquashfs", str(env), str(image), "-quiet", "-noappend"], check=True)
    python = tmp_path / "node-python"
    python.write_text(
        "#!/bin/bash\n"
        f'echo "image at ${script.IMAGE_PREFIX_ENV}: $(ls "${script.IMAGE_PREFIX_ENV}" | tr "\\n" " ")"\n'
        f'grep -q " ${script.IMAGE_PREFIX_ENV} fuse" /proc/mounts && echo "image mounted: yes"\n'
        f'exec {sys.executable} "$@"\n'
    )
    python.chmod(0o755)
    nb = slurm.notebook("in-image.ipynb", ["import sys; print('prefix', sys.prefix)"])
    backend = slurm.backend(image_runtime="squashfuse", python=str(python))
    svc = slurm.service(backend, images=lambda name: str(image) if name == "env-image" else None)
    try:
        job = await svc.submit({"notebook_path": nb, "backend": "slurm", "image": "env-image"})
        job = await slurm.wait_for(svc, job.id, slurm.ended, within=90)
        log = (slurm.root / job.log_path).read_text()
        assert "image mounted: yes" in log and "pyvenv.cfg" in log, log
        mount = log.split("image at ", 1)[1].split(":", 1)[0]

        # The record ends when the runner writes its result; the batch script's exit trap (the unmount)
        # runs after that, and SLURM lists the job until the script has exited.
        async def script_exited() -> bool:
            argv = ["squeue", "-h", "-j", str(job.backend_job_id), "-o", "%T"]
            listed = await proc.run(argv, env=slurm.env(), timeout=30, check=False)
            return not listed.stdout.strip()  # a job already purged is an error with nothing listed

        leaving = f"SLURM job {job.backend_job_id} leaving the queue"
        await wait_until(script_exited, within=30, every=0.2, what=leaving)
        assert not os.path.exists(mount)  # unmounted and removed when the job ended
        if job.state == "succeeded":
            assert f"prefix {mount}" in outputs(slurm.root, job)
        else:
            assert job.reason == "images_unsupported", job.message
    finally:
        await svc.stop()


async def test_where_pending_jobs_stand_with_the_node_full(slurm):
    """With the node taken, two submitted jobs wait: the first is next in its partition, the second after
    it; both positions come from one squeue for all pending jobs."""
    blocker = slurm.root / "full.sh"
    blocker.write_text("#!/bin/bash\nsleep 120\n")
    taken = await slurm.sh("sbatch", "--parsable", "--exclusive", "--output=/dev/null", str(blocker))
    blocker_id = taken.stdout.strip()

    async def blocking() -> bool:
        return (await slurm.sh("squeue", "-h", "-j", blocker_id, "-o", "%T")).stdout.strip() == "RUNNING"

    await wait_until(blocking, within=60, every=0.2, what="the blocker running")
    nb = slurm.notebook("waits.ipynb", ["print(1)"])
    svc = slurm.service()
    try:
        first = await svc.submit({"notebook_path": nb, "backend": "slurm"})
        second = await svc.submit({"notebook_path": nb, "backend": "slurm"})
        slurm.commands.clear()
        await svc.refresh()
        first, second = await svc.get(first.id), await svc.get(second.id)
        assert (first.state, second.state) == ("queued", "queued")
        assert (first.queue_position, second.queue_position) == (1, 2)
        assert first.queue_name == second.queue_name and first.queue_name
        assert [c[0].rsplit("/", 1)[-1] for c in slurm.commands] == ["squeue", "squeue"]

        await slurm.sh("scancel", blocker_id)
        first = await slurm.wait_for(svc, first.id, lambda j: j.state != "queued", within=60)
        assert first.queue_position is None  # it left the queue
    finally:
        await slurm.sh("scancel", blocker_id)
        for job in (await svc.list()).items:
            if job.backend_job_id:
                await slurm.sh("scancel", job.backend_job_id)
        await svc.stop()


async def test_free_gpus_by_gres_for_the_submit_dialog(slurm):
    holder = slurm.root / "hold.sh"
    holder.write_text("#!/bin/bash\nsleep 120\n")
    held = (
        await slurm.sh("sbatch", "--parsable", "--gres=gpu:1", "--output=/dev/null", str(holder))
    ).stdout.strip()

    async def running() -> bool:
        return (await slurm.sh("squeue", "-h", "-j", held, "-o", "%T")).stdout.strip() == "RUNNING"

    try:
        await wait_until(running, within=60, every=0.2, what="the GPU holder running")
        seen = await slurm.backend().capacity()
        assert seen.available and [(r.resource, r.total, r.used, r.free) for r in seen.rows] == [
            ("gres/gpu", 2, 1, 1)
        ]
    finally:
        await slurm.sh("scancel", held)
