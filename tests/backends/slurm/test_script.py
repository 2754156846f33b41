"""The batch script builder, the configuration, and the backend's reading of SLURM's state (commands faked
with output captured from a real 22.05 cluster). No cluster needed.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from pydantic import ValidationError
from traitlets import TraitError
from traitlets.config import Config

from jupyter_gpu_env import proc
from jupyter_gpu_env.backends.local import LocalBackend
from jupyter_gpu_env.backends.slurm import SlurmBackend, script
from jupyter_gpu_env.backends.slurm.observe import JOB_ID_FILE
from jupyter_gpu_env.contracts import jobfiles
from jupyter_gpu_env.errors import CommandFailed, InvalidRequest, NotFound, Unavailable
from jupyter_gpu_env.models.jobs import Job, JobRequest
from jupyter_gpu_env.models.resources import JobResources

DATA = Path(__file__).parent / "data"
FOLDER = Path("/shared/jobs/train-abc123def456")


def job(**kw) -> Job:
    res = kw.pop("resources", {})
    base = dict(
        id="abc123def456",
        name="Train model",
        backend="slurm",
        state="queued",
        notebook_path="train.ipynb",
        job_dir=str(FOLDER),
        input_path=f"{FOLDER}/input.ipynb",
        output_path=f"{FOLDER}/output.ipynb",
        log_path=f"{FOLDER}/log.txt",
        created_at=time.time(),
        resources=JobResources(**res),
    )
    base.update(kw)
    return Job(**base)


def directives(text: str) -> list[str]:
    return [line.removeprefix("#SBATCH ") for line in text.splitlines() if line.startswith("#SBATCH ")]


# ----- the script -----


def test_script_maps_every_resource():
    j = job(
        resources=dict(cpus=4, memory_bytes=6 << 30, gpus=2, time_limit_seconds=90 * 60 + 1),
        queue="gpu",
    )
    opts = script.SbatchOptions(
        python="/opt/py/bin/python", partition="gpu", account="proj1", gpu_type="a100", extra=["--qos=high"]
    )
    text = script.sbatch_script(j, FOLDER, opts)
    assert text.startswith("#!/bin/bash\n")
    assert directives(text) == [
        "--job-name=train-model-abc123def456",
        f"--output={FOLDER}/log.txt",
        f"--error={FOLDER}/log.txt",
        "--open-mode=append",
        f"--chdir={FOLDER}",
        "--nodes=1",
        "--ntasks=1",
        "--cpus-per-task=4",
        "--mem=6G",
        "--time=91",  # 90 min 1 s rounds up
        "--gres=gpu:a100:2",
        "--partition=gpu",
        "--account=proj1",
        "--export=ALL",
        "--no-requeue",  # a normal job is never requeued
        "--qos=high",
    ]
    assert "export OMP_NUM_THREADS=4" in text and "export PYTHONUNBUFFERED=1" in text
    assert "CUDA_VISIBLE_DEVICES" not in text
    assert text.rstrip().endswith(f"exec /opt/py/bin/python -m jupyter_gpu_env.runner {FOLDER}")


def test_script_defaults_mig_and_no_gpu():
    plain = script.sbatch_script(job(), FOLDER, script.SbatchOptions(python="/py"))
    ds = directives(plain)
    assert not [
        d for d in ds if d.startswith(("--cpus", "--mem", "--time", "--gres", "--partition", "--acc"))
    ]
    assert "CUDA_VISIBLE_DEVICES" not in plain
    none = script.sbatch_script(job(resources=dict(gpus=0)), FOLDER, script.SbatchOptions(python="/py"))
    assert "export CUDA_VISIBLE_DEVICES=''" in none
    mig = script.sbatch_script(
        job(resources=dict(mig_profile="1g.10gb")), FOLDER, script.SbatchOptions(python="/py")
    )
    assert "#SBATCH --gres=gpu:1g.10gb:1" in mig
    untyped = script.sbatch_script(job(resources=dict(gpus=1)), FOLDER, script.SbatchOptions(python="/py"))
    assert "#SBATCH --gres=gpu:1" in untyped


@pytest.mark.parametrize("priority", ["normal", "opportunistic"])
def test_a_kernel_job_is_never_requeued(priority):
    # An interactive kernel cannot resume in a new allocation: preemption ends the session, so even an
    # opportunistic one (which runs where SLURM preempts) is submitted with --no-requeue.
    opts = script.SbatchOptions(python="/py", partition="scavenger")
    notebook = directives(script.sbatch_script(job(priority=priority), FOLDER, opts))
    kernel = directives(script.sbatch_script(job(priority=priority, kind="kernel"), FOLDER, opts))
    assert ("--requeue" in notebook) == (priority == "opportunistic")
    assert "--no-requeue" in kernel and "--requeue" not in kernel
    # Nothing else differs: the kernel's host is the same runner command in the same partition.
    assert [d for d in kernel if "requeue" not in d] == [d for d in notebook if "requeue" not in d]


def test_memory_rounds_up_to_mebibytes():
    assert script.memory_option(1 << 30) == "1G"
    assert script.memory_option(1536 << 20) == "1536M"
    assert script.memory_option((1 << 20) + 1) == "2M"


def test_environment_and_prologue():
    opts = script.SbatchOptions(
        python="/py", environment={"HF_HOME": "/scratch/$USER hf"}, prologue=["module load cuda/12.4"]
    )
    text = script.sbatch_script(job(), FOLDER, opts)
    assert "export HF_HOME='/scratch/$USER hf'" in text
    assert text.index("module load cuda/12.4") < text.index("exec /py")


@pytest.mark.parametrize("queue", ["gpu\n#SBATCH --wrap=rm", "a b", "$(reboot)", "gpu;ls", "-p", "x'y"])
def test_hostile_queue_never_reaches_the_script(queue):
    with pytest.raises(ValueError):
        script.sbatch_script(job(queue=queue), FOLDER, script.SbatchOptions(python="/py", partition=queue))


@pytest.mark.parametrize("folder", ["/a b/job", "relative/job", "/a/%j", "/a/$HOME", "/a/x\ny"])
def test_unsafe_folder_refused(folder):
    with pytest.raises(ValueError, match="batch script"):
        script.sbatch_script(job(), Path(folder), script.SbatchOptions(python="/py"))


def test_job_name_is_a_slug():
    text = script.sbatch_script(job(name="My `rm -rf` notebook!"), FOLDER, script.SbatchOptions(python="/py"))
    (name,) = [d for d in directives(text) if d.startswith("--job-name=")]
    assert name.startswith("--job-name=my-rm--rf-notebook") and name.endswith("-abc123def456")


def test_script_is_valid_bash():
    for res in ({}, {"gpus": 0, "cpus": 2}):
        text = script.sbatch_script(
            job(resources=res), FOLDER, script.SbatchOptions(python="/py", prologue=["true"])
        )
        subprocess.run(["bash", "-n"], input=text, text=True, check=True)
    for plan in (
        script.ImagePlan(tool="squashfuse", image="/images/abc.sqfs"),
        script.ImagePlan(
            tool="apptainer", image="/images/abc.sqfs", mount="/opt/gpu-env/ml", container="/c/base.sif"
        ),
    ):
        text = script.sbatch_script(
            job(resources={"gpus": 1}), FOLDER, script.SbatchOptions(python="/py", image=plan)
        )
        subprocess.run(["bash", "-n"], input=text, text=True, check=True)
        assert f"{script.IMAGE_PREFIX_ENV}=" in text


# ----- a pipeline's dependencies -----


@pytest.mark.parametrize(
    ("ids", "when", "written"),
    [
        (["41"], "succeeded", "afterok:41"),
        (["41", "42_3", "41"], "succeeded", "afterok:41:42_3"),  # repeated ids once; one array task
        (["41", "42"], "always", "afterany:41:42"),
        (["41"], "failed", "afternotok:41"),
        (["41", "42"], "failed", "afternotok:41?afternotok:42"),  # any one failed: SLURM's '?' is OR
        ([], "succeeded", None),  # every parent already ended: nothing to wait for
    ],
)
def test_dependency_option(ids, when, written):
    assert script.dependency_option(ids, when) == written


@pytest.mark.parametrize(
    "bad",
    ["", "41a", "-1", "41,42", "41:42", "41_", "_3", "41_3_4", "41\n#SBATCH --x", "4 2", "41?x", "1" * 13],
)
def test_only_slurm_ids_reach_the_dependency(bad):
    with pytest.raises(ValueError, match="is not a SLURM job id"):
        script.dependency_option(["7", bad], "succeeded")
    with pytest.raises(ValueError, match="not a way to wait"):
        script.dependency_option(["7"], "eventually")


def test_a_dependency_is_two_sbatch_lines_in_job_and_array_scripts():
    opts = script.SbatchOptions(python="/py", dependency=script.dependency_option(["41", "42"], "succeeded"))
    text = script.sbatch_script(job(), FOLDER, opts)
    said = directives(text)
    assert said[-2:] == ["--dependency=afterok:41:42", "--kill-on-invalid-dep=yes"]
    subprocess.run(["bash", "-n"], input=text, text=True, check=True)
    array = script.sbatch_array_script(
        job(group_id="0123456789ab"), Path("/s"), Path("/s/runs.txt"), [0, 1], 2, opts
    )
    assert "#SBATCH --dependency=afterok:41:42\n#SBATCH --kill-on-invalid-dep=yes" in array
    plain = script.sbatch_script(job(), FOLDER, script.SbatchOptions(python="/py"))
    assert "dependency" not in plain and "kill-on-invalid-dep" not in plain
    # A value that dependency_option did not write never reaches the script.
    for forged in ("afterok:41 --wrap=x", "singleton", "afterok:41?afterany:42", "afternotok:41,afterok:2"):
        with pytest.raises(ValueError, match="is not one dependency_option writes"):
            script.sbatch_script(job(), FOLDER, script.SbatchOptions(python="/py", dependency=forged))


@pytest.mark.parametrize("option", ["--dependency=afterok:1", "--kill-on-invalid-dep=no"])
def test_dependency_options_are_the_backends_own(option):
    with pytest.raises(ValueError, match="sets itself"):
        script.check_extra_option(option)


def test_apptainer_binds_the_image_at_its_mount_path():
    plan = script.ImagePlan(
        tool="apptainer", image="/images/abc.sqfs", mount="/opt/gpu-env/ml", container="/c/b.sif"
    )
    text = script.sbatch_script(
        job(resources={"gpus": 1}), FOLDER, script.SbatchOptions(python="/py", image=plan)
    )
    assert (
        "exec apptainer exec --nv --bind /images/abc.sqfs:/opt/gpu-env/ml:image-src=/ /c/b.sif "
        f"/py -m jupyter_gpu_env.runner {FOLDER}"
    ) in text


@pytest.mark.parametrize(
    "option",
    ["--qos=high", "--constraint=a100", "--exclusive", "--reservation=maint_1"],
)
def test_extra_options_accepted(option):
    assert script.check_extra_option(option) == option


@pytest.mark.parametrize(
    "option",
    ["--output=/tmp/x", "--partition=gpu", "--mem=1G", "-p gpu", "--qos=a b", "--comment=$(id)", "qos=high"],
)
def test_extra_options_refused(option):
    with pytest.raises(ValueError):
        script.check_extra_option(option)


def test_sbatch_argv():
    assert script.sbatch_argv("/usr/bin/sbatch", FOLDER / script.SCRIPT) == [
        "/usr/bin/sbatch",
        "--parsable",
        f"{FOLDER}/job.sbatch",
    ]


# ----- configuration -----


def test_config_makes_the_backend():
    cfg = Config()
    cfg.SlurmBackend.partitions = ["gpu", "cpu"]
    cfg.SlurmBackend.account = "proj1"
    cfg.SlurmBackend.extra_sbatch_options = ["--qos=high"]
    cfg.SlurmBackend.squeue_command = "/opt/slurm/bin/squeue"
    cfg.SlurmBackend.python = "/shared/py/bin/python"
    backend = SlurmBackend("hpc", config=cfg)
    assert backend.name == "hpc" and backend.kind == "slurm"
    assert backend.commands["squeue"] == "/opt/slurm/bin/squeue" and backend.commands["sbatch"] == "sbatch"
    assert backend.python == "/shared/py/bin/python" and backend.account == "proj1"
    info = backend.info()  # no sinfo asked yet: the configured partitions
    assert info.queues == ["gpu", "cpu"] and info.default_queue == "gpu"
    assert LocalBackend(config=cfg).kind == "local"  # untouched beside it


@pytest.mark.parametrize(
    ("trait", "value"),
    [
        ("extra_sbatch_options", ["--output=/x"]),
        ("extra_sbatch_options", ["--qos=a b"]),
        ("export", "ALL,$(x)"),
        ("partitions", ["gpu\nx"]),
        ("account", "a b"),
        ("image_runtime", "docker"),
    ],
)
def test_config_refuses(trait, value):
    with pytest.raises(TraitError):
        SlurmBackend(**{trait: value})


def test_validate_only_what_slurm_cannot():
    backend = SlurmBackend(partitions=["gpu"])
    backend.validate(JobRequest(notebook_path="a.ipynb", queue="gpu", resources={"gpus": 64}))
    with pytest.raises(NotFound, match="not offered"):
        backend.validate(JobRequest(notebook_path="a.ipynb", queue="cpu"))
    # The request model refuses a queue that could break a line; the backend checks again all the same.
    with pytest.raises(ValidationError, match="queue"):
        JobRequest(notebook_path="a.ipynb", queue="x\n#SBATCH --wrap=y")
    sneaked = JobRequest.model_construct(notebook_path="a.ipynb", queue="x\n#SBATCH --wrap=y")
    with pytest.raises(InvalidRequest, match="not a valid SLURM name"):
        SlurmBackend().validate(sneaked)


def test_command_env_drops_the_servers_own_slurm_job(monkeypatch):
    monkeypatch.setenv("SLURM_JOB_ID", "77")
    monkeypatch.setenv("SLURM_MEM_PER_NODE", "1000")
    monkeypatch.setenv("SBATCH_PARTITION", "other")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")
    monkeypatch.setenv("SLURM_TIME_FORMAT", "relative")
    monkeypatch.setenv("HOME_MARKER", "kept")
    env = SlurmBackend(slurm_conf="/etc/x/slurm.conf").controller.command_env()
    assert env["SLURM_CONF"] == "/etc/x/slurm.conf" and env["HOME_MARKER"] == "kept"
    assert env["SLURM_TIME_FORMAT"] == "standard"
    assert not {"SLURM_JOB_ID", "SLURM_MEM_PER_NODE", "SBATCH_PARTITION", "CUDA_VISIBLE_DEVICES"} & set(env)


# ----- reading SLURM's state (commands faked with captured output) -----


class Faked:
    """A backend whose SLURM commands answer from captured text; records what it was asked."""

    def __init__(self, tmp_path: Path, **kwargs) -> None:
        self.backend = SlurmBackend(status_grace=kwargs.pop("status_grace", 0.0), **kwargs)
        self.root = tmp_path
        self.backend.job_folder = lambda j: Path(j.job_dir)
        self.calls: list[list[str]] = []
        self.squeue = ""
        self.scontrol: dict[str, str] = {}
        self.sinfo: str | None = (DATA / "sinfo.txt").read_text()
        self.backend.controller.run = self._run  # type: ignore[method-assign]

    async def _run(self, argv: list[str], *, check: bool = True) -> proc.Result:
        self.calls.append(argv)
        res = self._answer(argv)
        if check and res.returncode != 0:
            raise CommandFailed(argv, res.returncode, res.output)
        return res

    def _answer(self, argv: list[str]) -> proc.Result:
        if argv[0] == "sinfo":
            if self.sinfo is None:
                return proc.Result(argv, 1, "", "sinfo: error: Unable to contact slurm controller")
            return proc.Result(argv, 0, self.sinfo, "")
        if argv[0] == "squeue":
            return proc.Result(argv, 0, self.squeue, "")
        if argv[0] == "scontrol":
            text = self.scontrol.get(argv[-1])
            if text is None:
                return proc.Result(argv, 1, "", (DATA / "scontrol-unknown.stderr.txt").read_text())
            return proc.Result(argv, 0, text, "")
        raise AssertionError(argv)

    def job(self, slurm_id: str | None, *, status: dict | None = None, heartbeat: bool = False, **kw) -> Job:
        folder = self.root / f"job-{slurm_id or 'none'}"
        folder.mkdir(exist_ok=True)
        if status is not None:
            jobfiles.write_json_atomic(folder / jobfiles.STATUS, status)
        if heartbeat:
            (folder / jobfiles.HEARTBEAT).write_text("node 1\n")
        return job(id=f"j{slurm_id}", job_dir=str(folder), backend_job_id=slurm_id, **kw)


def status(state: str, reason: str | None = None, message: str = "") -> dict:
    return {
        "state": state,
        "reason": reason,
        "message": message,
        "exit_code": 0,
        "started_at": 1_790_000_001.0,
        "finished_at": 1_790_000_002.0,
    }


async def test_one_squeue_for_all_active_jobs(tmp_path):
    f = Faked(tmp_path)
    f.squeue = (DATA / "squeue-active.txt").read_text()
    jobs = [f.job("15"), f.job("16", resources={"gpus": 1}), f.job("17"), f.job("18")]
    seen = await f.backend.poll(jobs)
    # One squeue for the states of all; one more, for all pending jobs, for where they stand.
    assert [c[0] for c in f.calls] == ["squeue", "squeue"]
    assert "--jobs=15,16,17,18" in f.calls[0] and "--states=all" in f.calls[0] and "--array" in f.calls[0]
    assert "--states=PENDING" in f.calls[1] and "--sort=-p,i" in f.calls[1]
    assert seen["j15"].state == "running" and seen["j15"].message == "Running on localhost (SLURM job 15)."
    assert seen["j15"].started_at
    assert seen["j16"].state == "queued" and seen["j16"].pending_reason.startswith(
        "Resources: waiting for free GPUs"
    )
    assert seen["j17"].pending_reason.startswith("Priority:")
    assert seen["j18"].pending_reason.startswith("JobHeldUser:")


async def test_the_node_a_job_runs_or_ran_on_is_observed(tmp_path):
    """squeue's %N is where a job runs (Observation.host, the record's node): for one running, one that
    ended, by SLURM's word or its runner's; none for one waiting or cancelled before it started."""
    f = Faked(tmp_path)
    f.squeue = (DATA / "squeue-active.txt").read_text() + (DATA / "squeue-ended.txt").read_text()
    jobs = [f.job("15"), f.job("16"), f.job("10"), f.job("4"), f.job("11", status=status("succeeded"))]
    seen = await f.backend.poll(jobs)
    assert {jid: (o.state, o.host) for jid, o in seen.items()} == {
        "j15": ("running", "localhost"),
        "j16": ("queued", None),
        "j10": ("failed", "localhost"),
        "j4": ("cancelled", None),
        "j11": ("succeeded", "localhost"),
    }


async def test_ended_jobs_without_a_status(tmp_path):
    f = Faked(tmp_path)
    f.squeue = (DATA / "squeue-ended.txt").read_text()
    jobs = [f.job(i) for i in ("4", "11", "10", "9")]
    seen = await f.backend.poll(jobs)
    assert seen["j4"].state == "cancelled" and "Cancelled in SLURM" in seen["j4"].message
    assert seen["j4"].started_at is None  # cancelled while pending: it never ran
    assert seen["j11"].state == "failed" and seen["j11"].reason == "lost"
    assert seen["j10"].state == "failed" and "NonZeroExitCode" in seen["j10"].message
    assert seen["j9"].state == "failed" and seen["j9"].reason == "time_limit"


async def test_status_file_is_the_final_truth(tmp_path):
    f = Faked(tmp_path)
    f.squeue = (DATA / "squeue-active.txt").read_text()  # SLURM still says RUNNING for 15
    j = f.job("15", status=status("succeeded", message="All cells ran."))
    seen = await f.backend.poll([j])
    assert seen["j15"].state == "succeeded" and seen["j15"].message == "All cells ran."


async def test_a_time_limit_sigterm_is_not_a_cancel(tmp_path):
    """SLURM's time limit SIGTERMs the runner, which records `cancelled`; SLURM's TIMEOUT wins."""
    f = Faked(tmp_path)
    f.squeue = (DATA / "squeue-ended.txt").read_text()
    j = f.job(
        "9",
        status=status("cancelled", "cancelled", "Cancelled by the user."),
        resources={"time_limit_seconds": 60},
    )
    seen = await f.backend.poll([j])
    assert seen["j9"].state == "failed" and seen["j9"].reason == "time_limit"
    assert "time limit of 0:01:00" in seen["j9"].message and seen["j9"].started_at == 1_790_000_001.0


async def test_a_cancel_from_here_stays_a_cancel(tmp_path):
    f = Faked(tmp_path)
    f.squeue = (DATA / "squeue-ended.txt").read_text()
    j = f.job("9", status=status("cancelled", "cancelled", "Cancelled by the user."))
    f.backend.observer.cancel_requested.add(j.id)
    assert (await f.backend.poll([j]))["j9"].state == "cancelled"


async def test_jobs_gone_from_squeue_ask_scontrol_then_give_up(tmp_path):
    f = Faked(tmp_path)
    f.scontrol = {"10": (DATA / "scontrol-failed-exit7.txt").read_text()}
    gone = f.job("10")
    forgotten = f.job("999999")
    settled = f.job("5", status=status("succeeded"))
    seen = await f.backend.poll([gone, forgotten, settled])
    assert [c[0] for c in f.calls] == ["squeue", "scontrol", "scontrol"]  # none for the settled job
    assert seen["j10"].state == "failed" and seen["j10"].exit_code == 7
    assert seen["j999999"].state == "failed" and "no longer knows" in seen["j999999"].message
    assert seen["j5"].state == "succeeded"


async def test_status_gets_a_grace_period_after_slurm_says_done(tmp_path):
    f = Faked(tmp_path, status_grace=30.0)
    f.squeue = (DATA / "squeue-ended.txt").read_text()
    ran = f.job("11", heartbeat=True)  # the runner started: its status may be on its way (NFS)
    seen = await f.backend.poll([ran])
    assert "j11" not in seen
    f.backend.observer._ended_at["j11"] -= 31
    seen = await f.backend.poll([ran])
    assert seen["j11"].state == "failed" and seen["j11"].reason == "lost"


async def test_record_without_id_finds_it_in_the_folder(tmp_path):
    f = Faked(tmp_path)
    f.squeue = (DATA / "squeue-active.txt").read_text()
    j = f.job(None)
    (Path(j.job_dir) / JOB_ID_FILE).write_text("15\n")
    seen = await f.backend.poll([j])
    assert seen[j.id].state == "running" and seen[j.id].backend_job_id == "15"
    old = f.job(None, created_at=time.time() - 3600)
    (Path(old.job_dir) / JOB_ID_FILE).unlink()
    seen = await f.backend.poll([old])
    assert seen[old.id].state == "failed" and seen[old.id].reason == "lost"


async def test_squeue_failure_is_unavailable(tmp_path):
    f = Faked(tmp_path)

    async def down(argv, *, check=True):
        return proc.Result(
            argv, 1, "", "slurm_load_jobs error: Unable to contact slurm controller (connect failure)"
        )

    f.backend.controller.run = down  # type: ignore[method-assign]
    with pytest.raises(Unavailable, match="Unable to contact"):
        await f.backend.poll([f.job("15")])


async def test_missing_commands_say_which_setting(tmp_path):
    backend = SlurmBackend(squeue_command=str(tmp_path / "no-squeue"))
    backend.job_folder = lambda j: tmp_path
    with pytest.raises(Unavailable, match="squeue_command"):
        await backend.controller.squeue(["1"])


async def test_info_refreshes_in_the_background_and_backs_off(tmp_path):
    f = Faked(tmp_path, info_ttl=60.0)
    f.sinfo = None  # the controller is down
    first = f.backend.info()  # schedules sinfo; answers at once from what it knows
    assert first.queues == [] and first.supports_gpus
    await f.backend._info_refresher.task
    down = f.backend.info()
    assert "could not be asked" in " ".join(down.notes)
    assert [c[0] for c in f.calls] == ["sinfo"]  # not asked again within info_ttl
    f.sinfo = (DATA / "sinfo.txt").read_text()
    await f.backend.refresh_info()
    info = f.backend.info()
    assert info.queues == ["debug", "short"] and info.default_queue == "debug" and info.limits.max_gpus == 2
    assert not [n for n in info.notes if "could not be asked" in n]
    await f.backend.close()


async def test_a_job_waiting_for_its_parents_says_so(tmp_path):
    f = Faked(tmp_path)
    f.squeue = (DATA / "squeue-dependency-pending.txt").read_text()
    seen = await f.backend.poll([f.job("27")])
    assert seen["j27"].state == "queued"
    assert seen["j27"].pending_reason == (
        "Dependency: waiting for the jobs it depends on to end (SLURM dependency)."
    )


async def test_a_job_slurm_killed_for_its_failed_parent_is_cancelled_saying_why(tmp_path):
    """--kill-on-invalid-dep: CANCELLED with the reason DependencyNeverSatisfied, in squeue and, once squeue
    no longer lists it, in scontrol (output of the real 22.05 controller)."""
    f = Faked(tmp_path)
    f.squeue = (DATA / "squeue-dependency-never.txt").read_text()
    seen = (await f.backend.poll([f.job("27")]))["j27"]
    assert (seen.state, seen.reason) == ("cancelled", "dependency_never_satisfied")
    assert seen.message.startswith("SLURM cancelled the job before it started: the jobs it depended on")
    assert seen.started_at is None and seen.finished_at  # it never ran
    assert "Cancelled in SLURM (scancel" not in seen.message

    f.squeue = ""
    f.scontrol = {"27": (DATA / "scontrol-dependency-never.txt").read_text()}
    again = (await f.backend.poll([f.job("27")]))["j27"]
    assert (again.state, again.reason, again.message) == (seen.state, seen.reason, seen.message)
