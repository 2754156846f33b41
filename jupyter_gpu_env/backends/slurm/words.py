"""What SLURM's job states and pending reasons mean, in our states and in words users read; and the
minutes SLURM counts a time limit in. Pure tables and functions, tested without SLURM."""

from __future__ import annotations

import math
import re

QUEUED_STATES = frozenset(
    {"PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD"}
)
RUNNING_STATES = frozenset(
    {"RUNNING", "COMPLETING", "SUSPENDED", "STOPPED", "SIGNALING", "STAGE_OUT", "RESIZING", "UPDATE_DB"}
)
ENDED_STATES = frozenset(
    {
        "COMPLETED",
        "FAILED",
        "CANCELLED",
        "TIMEOUT",
        "NODE_FAIL",
        "OUT_OF_MEMORY",
        "PREEMPTED",
        "BOOT_FAIL",
        "DEADLINE",
        "SPECIAL_EXIT",
        "REVOKED",
    }
)

# How a job that SLURM ended reads when the runner could not say so itself: (reason, words).
ENDED_WORDS: dict[str, tuple[str, str]] = {
    "COMPLETED": ("lost", "SLURM says the job completed, but the runner left no status."),
    "FAILED": ("slurm_failed", "SLURM says the job failed."),
    "CANCELLED": ("cancelled", "Cancelled in SLURM (scancel or an administrator), not from here."),
    "TIMEOUT": ("time_limit", "SLURM stopped the job at its time limit."),
    "NODE_FAIL": ("node_fail", "The node running the job failed."),
    "OUT_OF_MEMORY": ("out_of_memory", "The job ran out of memory: it used more than it asked for."),
    "PREEMPTED": ("preempted", "SLURM preempted the job for a job of higher priority."),
    "BOOT_FAIL": ("boot_fail", "The node allocated to the job failed to boot."),
    "DEADLINE": ("deadline", "The job could not finish before its deadline."),
    "SPECIAL_EXIT": ("slurm_failed", "The job ended with a special exit state."),
    "REVOKED": ("revoked", "The job was revoked (it runs on another cluster of a federation)."),
}

# A job SLURM cancelled before it started because the jobs it depended on cannot end as it needs (with
# --kill-on-invalid-dep=yes): CANCELLED with this reason, in squeue and scontrol until MinJobAge.
NEVER_SATISFIED = "DependencyNeverSatisfied"
NEVER_SATISFIED_WORDS = (
    "dependency_never_satisfied",
    "SLURM cancelled the job before it started: the jobs it depended on did not end as it needed (one "
    "failed or was cancelled; or, for a job that runs on a failure, they succeeded), so it could never run.",
)

# SLURM's pending reasons (slurm.h, job_reason_string) in plain words. The code stays in front so that
# people can look it up; unknown codes are shown as SLURM wrote them.
REASON_WORDS: dict[str, str] = {
    "None": "waiting for the scheduler's next pass",
    "Priority": "jobs of higher priority are ahead in the queue",
    "Dependency": "waiting for the jobs it depends on to end (SLURM dependency)",
    "DependencyNeverSatisfied": "the jobs it depends on did not end as it needs, so it can never start; "
    "cancel it",
    "BeginTime": "waiting for its start time",
    "JobHeldUser": "held by its owner; release it (scontrol release) to let it start",
    "JobHeldAdmin": "held by an administrator",
    "PartitionDown": "its partition is down",
    "PartitionInactive": "its partition is inactive",
    "PartitionNodeLimit": "it asks for more nodes than its partition allows",
    "PartitionTimeLimit": "its time limit is longer than its partition allows; it will not start",
    "PartitionConfig": "it asks for more than its partition is configured with",
    "ReqNodeNotAvail": "the nodes it needs are down, drained or reserved",
    "NodeDown": "a node it needs is down",
    "BadConstraints": "no node can satisfy what it asks for",
    "Reservation": "waiting for its reservation to begin",
    "Licenses": "waiting for licenses",
    "InvalidAccount": "its account is not valid; it will not start",
    "InvalidQOS": "its QOS is not valid; it will not start",
    "AccountNotAllowed": "its account may not use this partition",
    "QOSNotAllowed": "its QOS may not use this partition",
    "Cleaning": "the node is cleaning up after a previous job",
    "Prolog": "the node's prolog is running",
    "launch failed requeued held": "it failed to launch and was held; ask an administrator",
    "JobLaunchFailure": "it could not be launched on its node",
    "NonZeroExitCode": "it exited with a non-zero code",
    "FrontEndDown": "no front end node is available",
    "SchedDefer": "the scheduler deferred it",
    "BurstBufferResources": "waiting for burst buffer space",
    "BurstBufferStageIn": "its burst buffer is staging in",
    "Resources": "waiting for free resources (CPUs or memory)",
}


def pending_words(reason: str | None, *, gpus: bool = False) -> str:
    """Why a queued job waits, in words: ``Resources: waiting for free GPUs``, ``Priority: ...``."""
    if not reason:
        return "Waiting for the scheduler."
    code = reason.strip().strip("()")
    key = re.split(r"[,\s]", code, maxsplit=1)[0]
    if key == "Resources" and gpus:
        words = "waiting for free GPUs (and the CPUs and memory it asks for)"
    elif key in REASON_WORDS:
        words = REASON_WORDS[key]
    elif code in REASON_WORDS:
        key, words = code, REASON_WORDS[code]
    elif key.startswith(("QOS", "Assoc", "MaxGRES", "MaxCpu", "MaxMem", "MaxNode", "MaxJob")):
        scope = "its QOS" if key.startswith("QOS") else "its account's association"
        words = f"a limit of {scope} is reached; it starts when your other jobs free their share"
    else:
        return f"{code}."
    detail = code[len(key) :].strip(" ,")
    return f"{key}: {words}" + (f" ({detail})" if detail else "") + "."


def requeued_words(reason: str | None) -> str:
    """Why an opportunistic job SLURM requeued waits, in words: it holds a requeued job back for a while
    (BeginTime, the cluster's cred_expire) before it may run again, then it waits as any job does."""
    code = (reason or "").strip().strip("()")
    if code.startswith("BeginTime"):
        why = "SLURM holds a requeued job back a little while before it may start again"
    else:
        why = pending_words(reason).rstrip(".")
    return f"Preempted by SLURM for other work and requeued; it resumes from its checkpoint ({why})."


def ceil_minutes(seconds: int) -> int:
    """SLURM's ``--time`` is whole minutes: round up, never down to nothing."""
    return max(1, math.ceil(seconds / 60))
