"""The parsers on output captured from a real slurmctld 22.05.8 (tests/backends/slurm/data, see capture.sh). No cluster."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from jupyter_gpu_env.backends.slurm import parse, words

DATA = Path(__file__).parent / "data"


def data(name: str) -> str:
    return (DATA / name).read_text()


def local(text: str) -> float:
    return time.mktime(time.strptime(text, "%Y-%m-%dT%H:%M:%S"))


def test_captured_from_22_05():
    assert data("version.txt").strip().startswith("slurm-wlm 22.05")


def test_squeue_active_jobs():
    jobs = parse.parse_squeue(data("squeue-active.txt"))
    assert set(jobs) == {"15", "16", "17", "18"}
    running = jobs["15"]
    assert running.state == "RUNNING" and running.nodes == "localhost" and running.reason is None
    assert running.partition == "debug"
    assert running.start_time == local("2026-11-22T08:57:45")
    assert (
        jobs["16"].state == "PENDING" and jobs["16"].reason == "Resources" and jobs["16"].start_time is None
    )
    assert jobs["16"].nodes is None
    assert jobs["17"].reason == "Priority"
    assert jobs["18"].reason == "JobHeldUser"


def test_squeue_ended_jobs():
    jobs = parse.parse_squeue(data("squeue-ended.txt"))
    assert {k: v.state for k, v in jobs.items()} == {
        "4": "CANCELLED",
        "11": "COMPLETED",
        "5": "FAILED",
        "10": "FAILED",
        "9": "TIMEOUT",
    }
    assert jobs["9"].reason == "TimeLimit" and jobs["10"].reason == "NonZeroExitCode"
    assert jobs["4"].nodes is None and jobs["11"].nodes == "localhost"
    assert all(j.state in words.ENDED_STATES for j in jobs.values())


def test_squeue_reason_with_separator_and_spaces_stays_whole():
    line = "42|PENDING|gpu|N/A||ReqNodeNotAvail, UnavailableNodes:n[1-2]|x"
    job = parse.parse_squeue(line)["42"]
    assert job.reason == "ReqNodeNotAvail, UnavailableNodes:n[1-2]|x"


def test_scontrol_jobs():
    running = parse.parse_scontrol_job(data("scontrol-running.txt"))
    assert running and running.state == "RUNNING" and running.nodes == "localhost"
    assert running.exit_code == 0 and running.end_time is None
    pending = parse.parse_scontrol_job(data("scontrol-pending.txt"))
    assert pending and pending.state == "PENDING" and pending.reason == "Resources" and pending.nodes is None
    timeout = parse.parse_scontrol_job(data("scontrol-timeout.txt"))
    assert timeout and timeout.state == "TIMEOUT" and timeout.reason == "TimeLimit"
    assert timeout.exit_code == 0 and timeout.exit_signal == 15
    assert timeout.end_time and timeout.start_time and timeout.end_time - timeout.start_time == 71
    failed = parse.parse_scontrol_job(data("scontrol-failed-exit7.txt"))
    assert (
        failed and failed.state == "FAILED" and failed.exit_code == 7 and failed.reason == "NonZeroExitCode"
    )
    cancelled = parse.parse_scontrol_job(data("scontrol-cancelled-held.txt"))
    assert cancelled and cancelled.state == "CANCELLED" and cancelled.nodes is None
    done = parse.parse_scontrol_job(data("scontrol-completed-gpu.txt"))
    assert done and done.state == "COMPLETED" and done.job_id == "11"
    fields = parse.parse_scontrol_record(data("scontrol-completed-gpu.txt").strip())
    assert fields["TresPerNode"] == "gres:gpu:1" and fields["JobName"] == "p-4b065ebcbbf9"


def test_scontrol_values_with_spaces():
    f = parse.parse_scontrol_record("JobId=7 JobName=x Comment=two words here JobState=PENDING Reason=None")
    assert f["Comment"] == "two words here" and f["JobState"] == "PENDING"


def test_unknown_job_errors():
    assert parse.is_unknown_job(data("scontrol-unknown.stderr.txt"))
    assert parse.is_unknown_job(data("squeue-unknown.stderr.txt"))
    assert parse.parse_scontrol_job("") is None


def test_sinfo():
    parts = {p.name: p for p in parse.parse_sinfo(data("sinfo.txt"))}
    assert list(parts) == ["debug", "short"]
    debug, short = parts["debug"], parts["short"]
    assert debug.default and not short.default and debug.up
    assert debug.max_time_seconds is None and short.max_time_seconds == 600
    assert debug.max_cpus == 2 and debug.max_memory_mb == 22899 and debug.max_gpus == 2


def test_sinfo_merges_node_groups_and_gpu_types():
    text = "gpu*|up|2-00:00:00|64|512000|gpu:a100:4(S:0-1)\ngpu*|up|2-00:00:00|32+|256000+|gpu:1g.10gb:7,gpu:a100:1\n"
    (p,) = parse.parse_sinfo(text)
    assert p.max_time_seconds == 2 * 86400 and p.max_cpus == 64 and p.max_memory_mb == 512000
    assert p.max_gpus == 8 and p.gpu_types == {"a100", "1g.10gb"}


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("gpu:2", [("gpu", None, 2)]),
        ("gpu:a100:4(S:0-1)", [("gpu", "a100", 4)]),
        ("gpu:tesla:2(S:0,1),mps:100", [("gpu", "tesla", 2), ("mps", None, 100)]),
        ("(null)", []),
        ("gpu", [("gpu", None, 1)]),
    ],
)
def test_gres(text, parsed):
    assert parse.parse_gres(text) == parsed


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("infinite", None),
        ("UNLIMITED", None),
        ("10:00", 600),
        ("1:00:00", 3600),
        ("2-00:00:00", 172800),
        ("1-12", 129600),
        ("30", 1800),
        ("n/a", None),
    ],
)
def test_durations(text, seconds):
    assert parse.parse_duration(text) == seconds


def test_sbatch_output_and_errors():
    assert parse.parse_sbatch_parsable("123\n") == "123"
    assert parse.parse_sbatch_parsable("123;cluster\n") == "123"
    with pytest.raises(ValueError):
        parse.parse_sbatch_parsable("")
    assert parse.sbatch_error(data("sbatch-mem.stderr.txt")) == (
        "Memory specification can not be satisfied; "
        "Batch job submission failed: Requested node configuration is not available"
    )
    assert "Invalid partition name specified" in parse.sbatch_error(data("sbatch-partition.stderr.txt"))
    for name in ("sbatch-gpus64", "sbatch-mem", "sbatch-time", "sbatch-partition"):
        assert not parse.is_transient(parse.sbatch_error(data(f"{name}.stderr.txt")))
    assert parse.is_transient(
        "Batch job submission failed: Unable to contact slurm controller (connect failure)"
    )


@pytest.mark.parametrize(
    ("reason", "gpus", "said"),
    [
        ("Resources", True, "Resources: waiting for free GPUs"),
        ("Resources", False, "Resources: waiting for free resources (CPUs or memory)"),
        ("Priority", False, "Priority: jobs of higher priority are ahead in the queue"),
        (
            "PartitionTimeLimit",
            False,
            "PartitionTimeLimit: its time limit is longer than its partition allows",
        ),
        ("JobHeldUser", False, "JobHeldUser: held by its owner"),
        ("ReqNodeNotAvail, UnavailableNodes:n1", False, "ReqNodeNotAvail: the nodes it needs are down"),
        ("QOSMaxGRESPerUser", True, "QOSMaxGRESPerUser: a limit of its QOS is reached"),
        ("AssocGrpGRES", True, "AssocGrpGRES: a limit of its account's association is reached"),
        ("SomethingNew", False, "SomethingNew."),
        (None, False, "Waiting for the scheduler."),
    ],
)
def test_pending_words(reason, gpus, said):
    assert words.pending_words(reason, gpus=gpus).startswith(said)


def test_pending_words_keep_the_detail():
    text = words.pending_words("ReqNodeNotAvail, UnavailableNodes:n1", gpus=False)
    assert text.endswith("(UnavailableNodes:n1).")


def test_minutes_round_up():
    assert [words.ceil_minutes(s) for s in (1, 59, 60, 61, 3600, 3601)] == [1, 1, 1, 2, 60, 61]


def test_queue_standings_count_within_each_partition_in_priority_order():
    text = (
        "901|gpu|2000|2026-11-24T14:20:00\n"
        "777_3|gpu|1500|N/A\n"
        "905|debug|1400|N/A\n"
        "777_4|gpu|1500|N/A\n"
        "910|debug,gpu|900|2026-11-24T15:00:00\n"
    )
    got = parse.queue_standings(text, {"777_4", "905", "910", "999"})
    assert got["777_4"] == parse.Standing(3, "gpu", None)
    assert got["905"] == parse.Standing(1, "debug", None)
    assert got["910"].position == 2 and got["910"].partition == "debug"
    assert got["910"].estimated_start == parse.parse_timestamp("2026-11-24T15:00:00")
    assert "999" not in got  # not pending (any more): no place


def test_node_gpus_from_scontrol_sum_what_can_take_jobs():
    captured = (DATA / "scontrol-nodes-gpu-used.txt").read_text()  # one node, two GPUs, one in use
    assert parse.node_gpus(captured) == [("", 2, 1, 1)]
    typed = (
        "NodeName=a Gres=gpu:1g.10gb:7(S:0),gpu:3g.40gb:2(S:0) GresUsed=gpu:1g.10gb:3(IDX:0-2),gpu:3g.40gb:0(IDX:N/A) State=MIXED\n"
        "NodeName=b Gres=gpu:1g.10gb:7 GresUsed=gpu:1g.10gb:0 State=IDLE+DRAIN\n"
        "NodeName=c Gres=gpu:h100:8(S:0-1) GresUsed=gpu:h100:8(IDX:0-7) State=ALLOCATED\n"
    )
    assert parse.node_gpus(typed) == [("1g.10gb", 7, 3, 1), ("3g.40gb", 2, 0, 1), ("h100", 8, 8, 1)]
