"""Opportunistic jobs on SLURM: the priority's settings, the script's requeue lines, requeued jobs observed
(from squeue and scontrol lines recorded on slurm-local.sh's 22.05), and a real preemption: a normal job
in `debug` takes the GPUs an opportunistic job holds in `scavenger`, which is requeued and resumes."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import printed
from traitlets import TraitError

from jupyter_gpu_env.backends.slurm import SlurmBackend, parse, script
from jupyter_gpu_env.backends.slurm.observe import FolderState, observe
from jupyter_gpu_env.errors import Conflict
from jupyter_gpu_env.models.attempts import JobAttempt
from jupyter_gpu_env.models.backends import OPPORTUNISTIC_WORDS
from jupyter_gpu_env.models.jobs import Job, JobRequest, JobResources

SCAVENGER = {"opportunistic": {"partition": "scavenger"}}
# squeue --format=SQUEUE_FORMAT of one job preempted in scavenger, then requeued (slurm-local.sh, 22.05.8)
REQUEUED_SQUEUE = "1|PENDING|scavenger|2026-11-26T23:13:52||BeginTime\n"
COMPLETING_SQUEUE = "1|COMPLETING|scavenger|N/A|localhost|None\n"
REQUEUED_SCONTROL = (
    "JobId=1 JobName=j.sh UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=4294901759 Nice=0 "
    "Account=(null) QOS=(null) JobState=PENDING Reason=BeginTime Dependency=(null) Requeue=1 Restarts=1 "
    "BatchFlag=1 Reboot=0 ExitCode=0:15 RunTime=00:00:00 TimeLimit=UNLIMITED TimeMin=N/A "
    "SubmitTime=2026-11-26T23:17:03 EligibleTime=2026-11-26T23:17:09 StartTime=2026-11-26T23:17:09 "
    "EndTime=Unknown Partition=scavenger NodeList=(null) BatchHost=localhost NumNodes=1 NumCPUs=1\n"
)


def job(priority: str = "opportunistic", state: str = "running", **kw: object) -> Job:
    return Job.model_validate(
        {
            "id": "0123456789ab",
            "name": "train",
            "notebook_path": "train.ipynb",
            "backend": "slurm",
            "job_dir": "jobs/0123456789ab",
            "output_path": "jobs/0123456789ab/output.ipynb",
            "input_path": "jobs/0123456789ab/input.ipynb",
            "log_path": "jobs/0123456789ab/log.txt",
            "state": state,
            "created_at": 1.0,
            "priority": priority,
            "resources": JobResources(gpus=1).model_dump(),
            **kw,
        }
    )


# ----- configuration and what the backend offers -----


def test_priorities_are_checked_at_start_with_their_reason():
    for bad, words in [
        ({"urgent": {"partition": "x"}}, "only 'opportunistic'"),
        ({"opportunistic": {"description": "no place"}}, "needs a 'partition' or a 'qos'"),
        ({"opportunistic": {"partition": "sc av"}}, "not a valid SLURM name"),
        ({"opportunistic": {"partition": "x", "queue": "y"}}, "unknown keys ['queue']"),
        ({"opportunistic": "scavenger"}, "must be a dict"),
    ]:
        with pytest.raises(TraitError, match=words.replace("[", r"\[").replace("(", r"\(")):
            SlurmBackend("slurm", priorities=bad)


def test_opportunistic_is_offered_only_when_configured_and_runs_in_its_partition():
    plain = SlurmBackend("slurm")
    assert [p.name for p in plain.info().priorities] == ["normal"]
    with pytest.raises(Conflict) as refused:
        plain.validate(JobRequest(notebook_path="train.ipynb", priority="opportunistic"))
    assert refused.value.reason == "priority_unavailable"

    backend = SlurmBackend("slurm", priorities={"opportunistic": {"partition": "scavenger", "qos": "low"}})
    offers = {p.name: p.description for p in backend.info().priorities}
    assert offers == {"normal": offers["normal"], "opportunistic": OPPORTUNISTIC_WORDS}
    worded = SlurmBackend(
        "slurm", priorities={"opportunistic": {"qos": "scav", "description": "Spare GPUs."}}
    )
    assert worded.info().priorities[1].description == "Spare GPUs."


def test_the_script_requeues_only_an_opportunistic_job_with_its_partition_and_qos():
    folder = Path("/shared/jobs/0123456789ab")
    options = script.SbatchOptions(
        python="/usr/bin/python3",
        partition="scavenger",
        qos="low",
        extra=("--qos=interactive", "--exclusive"),
    )
    text = script.sbatch_script(job(), folder, options)
    assert "#SBATCH --requeue\n" in text and "--no-requeue" not in text
    assert "#SBATCH --partition=scavenger" in text and "#SBATCH --open-mode=append" in text
    assert "#SBATCH --qos=low" in text and "interactive" not in text and "#SBATCH --exclusive" in text
    assert text.rstrip().endswith(f"exec /usr/bin/python3 -m jupyter_gpu_env.runner {folder}")

    normal = script.sbatch_script(job("normal"), folder, script.SbatchOptions(python="/usr/bin/python3"))
    assert "#SBATCH --no-requeue\n" in normal and "--requeue\n" not in normal.replace("--no-requeue", "")
    with pytest.raises(ValueError, match="sets '--requeue'"):
        script.check_extra_option("--requeue")

    # A sweep's array goes through the same directives: each task is requeued on its own.
    array = script.sbatch_array_script(job(), folder.parent, folder.parent / "runs.txt", [0, 1], 2, options)
    assert "#SBATCH --requeue\n" in array and "#SBATCH --open-mode=append" in array
    # The script that does not exec the runner passes SIGUSR1 on as it passes SIGTERM.
    fused = script.sbatch_script(
        job(),
        folder,
        script.SbatchOptions(python="/p/python", image=script.ImagePlan("squashfuse", "/i.sqfs")),
    )
    assert "trap 'kill -USR1 $runner 2>/dev/null' USR1" in fused


# ----- observing a requeued job -----


def test_a_requeued_opportunistic_job_is_queued_again_with_requeued_and_words():
    row = parse.parse_squeue(REQUEUED_SQUEUE)["1"]
    folder = FolderState(status=None, slurm_id="1", heartbeat=True)
    kw = {"cancel_requested": False, "grace_over": lambda: True}
    seen = observe(job(), "1", row, folder, 100.0, **kw)  # type: ignore[arg-type]
    assert seen is not None and seen.state == "queued" and seen.requeued == "preempted"
    assert seen.pending_reason and "Preempted by SLURM" in seen.pending_reason
    assert "resumes from its checkpoint" in seen.pending_reason

    # A normal job pending is only waiting; as is an opportunistic one that never ran.
    assert observe(job("normal"), "1", row, folder, 100.0, **kw).requeued is None  # type: ignore[arg-type,union-attr]
    fresh = FolderState(status=None, slurm_id="1", heartbeat=False)
    pending = parse.parse_squeue("1|PENDING|scavenger|N/A||Resources\n")["1"]
    assert observe(job(state="queued"), "1", pending, fresh, 100.0, **kw).requeued is None  # type: ignore[arg-type,union-attr]

    # scontrol's Restarts says it ran before, even when neither the record nor the folder does; its
    # ExitCode (the stopped attempt's signal) does not make it a failure.
    again = parse.parse_scontrol_job(REQUEUED_SCONTROL)
    assert again is not None and again.restarts == 1 and again.state == "PENDING"
    seen = observe(job(state="queued"), "1", again, fresh, 100.0, **kw)  # type: ignore[arg-type]
    assert seen is not None and seen.state == "queued" and seen.requeued == "preempted"

    # Completing after the preemption is still running; it is not an end.
    completing = parse.parse_squeue(COMPLETING_SQUEUE)["1"]
    assert observe(job(), "1", completing, folder, 100.0, **kw).state == "running"  # type: ignore[arg-type,union-attr]


def test_a_resumed_job_says_it_was_preempted_and_a_stopped_one_not_requeued_is_explained():
    from jupyter_gpu_env.models.attempts import with_summary

    attempts = [JobAttempt(number=1, reason="preempted", cells_done=2)]
    row = parse.parse_squeue("1|RUNNING|scavenger|2026-11-26T23:17:09|localhost|None\n")["1"]
    folder = FolderState(status=None, slurm_id="1", heartbeat=True)
    kw = {"cancel_requested": False, "grace_over": lambda: True}
    seen = observe(job(attempts=attempts), "1", row, folder, 100.0, **kw)  # type: ignore[arg-type]
    assert seen is not None and seen.message == "Running on localhost (SLURM job 1)."
    # the tracker adds how it got here to whatever message the backend gives
    assert (
        with_summary(seen.message, attempts) == "Running on localhost (SLURM job 1; preempted once, resumed)."
    )

    done = FolderState(
        status={"state": "succeeded", "message": "All cells ran."}, slurm_id="1", heartbeat=True
    )
    seen = observe(job(attempts=attempts), "1", row, done, 100.0, **kw)  # type: ignore[arg-type]
    assert seen is not None and seen.state == "succeeded"
    assert with_summary(seen.message, attempts) == "All cells ran (preempted once, resumed)."

    failed = parse.SlurmJob(job_id="1", state="FAILED", exit_code=3, nodes="localhost")
    seen = observe(job(), "1", failed, folder, 100.0, **kw)  # type: ignore[arg-type]
    assert seen is not None and seen.state == "failed" and seen.reason == "not_requeued"


# ----- a real preemption -----

STEPS = [
    "import json, os, pathlib, time\nmark = pathlib.Path(checkpoint_dir) / 'step.json'",
    "start = json.loads(mark.read_text())['step'] if resumed else 0\n"
    "print('resumed:', resumed, 'from step', start, flush=True)",
    # The first attempt saves step 1 and waits to be preempted; the resumed one goes on from its checkpoint.
    "if not resumed:\n    mark.write_text(json.dumps({'step': 1}))\n    time.sleep(300)",
    "print('finished from step', start, flush=True)",
]


async def test_an_opportunistic_job_is_preempted_requeued_and_resumes(slurm):
    shown = await slurm.sh("scontrol", "-o", "show", "partition", "scavenger")
    if shown.returncode != 0:
        pytest.skip(
            "the running local SLURM predates its 'scavenger' partition: scripts/slurm-local.sh stop, start"
        )
    nb = slurm.notebook("train.ipynb", STEPS, parameters="checkpoint_dir = None\nresumed = False")
    svc = slurm.service(slurm.backend(priorities=SCAVENGER))
    try:
        spare = await svc.submit(
            {"notebook_path": nb, "backend": "slurm", "priority": "opportunistic", "resources": {"gpus": 2}}
        )
        text = (slurm.root / spare.job_dir / script.SCRIPT).read_text()
        assert "#SBATCH --partition=scavenger" in text and "#SBATCH --requeue" in text
        await slurm.wait_for(svc, spare.id, lambda j: j.progress.cells_done >= 2, within=60)

        # A normal job that needs a GPU: only preempting the opportunistic one frees one.
        urgent_nb = slurm.notebook("urgent.ipynb", ["print('urgent ran')"])
        urgent = await svc.submit({"notebook_path": urgent_nb, "backend": "slurm", "resources": {"gpus": 1}})
        assert "#SBATCH --no-requeue" in (slurm.root / urgent.job_dir / script.SCRIPT).read_text()
        queued = await slurm.wait_for(svc, spare.id, lambda j: j.state == "queued" and j.attempts, within=60)
        assert queued.attempts[0].reason == "preempted" and "Preempted" in (queued.pending_reason or "")

        urgent = await slurm.wait_for(svc, urgent.id, slurm.ended, within=60)
        assert urgent.state == "succeeded", urgent.message
        done = await slurm.wait_for(svc, spare.id, slurm.ended, within=90)
        assert done.state == "succeeded", done.message
        assert [a.reason for a in done.attempts] == ["preempted"], done.attempts
        assert done.message.endswith("preempted once, resumed).")
        assert done.started_at == queued.started_at  # the first start is kept
        out = printed(slurm.root / done.output_path)
        assert "resumed: True from step 1" in out and "finished from step 1" in out
        first = printed(slurm.root / done.output_path.replace(".ipynb", ".attempt-1.ipynb"))
        assert "resumed: False from step 0" in first
        if done.gpu.gpu_hours_allocated is not None and done.attempts[0].gpu_hours_allocated:
            assert done.gpu.gpu_hours_allocated > done.attempts[0].gpu_hours_allocated
        log = (await svc.log(done.id)).text
        assert log.count("resumed:") >= 2  # both attempts' words: the log is appended to, not truncated
    finally:
        await svc.stop()
