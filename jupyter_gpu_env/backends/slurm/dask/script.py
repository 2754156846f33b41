"""Pure builders of a Dask cluster's two SLURM scripts: the scheduler's batch job and the workers' job array.

No I/O: the spec, the placement and the backend's options in, text out. Every value that reaches a
``#SBATCH`` line or the shell goes through the SLURM backend's own checks (``backends/slurm/script.py``),
so a queue name or a path can never become a second directive or a command.

What dask-jobqueue knows about SLURM job scripts and is kept here: one node and one task per worker,
``--cpus-per-task`` its threads' CPUs, ``--mem`` what SLURM enforces (at least the worker's own memory
limit, so that Dask spills before SLURM kills), ``--time`` the walltime. What is done differently: the
scheduler runs in the batch system too (not in the notebook), and the workers are ONE job array that the
scheduler's keeper submits, each task a worker named after it (``ARRAYID_TASK``), so the keeper matches
SLURM's list against the scheduler's workers by name.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from pathlib import Path

from ....contracts.dask.spec import (
    LOG,
    WORKER_LOGS,
    ClusterSpec,
    Network,
    scheduler_args,
    scheduler_env,
    together_args,
    worker_env,
)
from ....models.resources import MIG_PROFILE_RE
from ...dask import Placement
from ..script import (
    THREAD_VARS,
    SbatchOptions,
    check_export,
    check_extra_option,
    check_name,
    check_path,
    memory_option,
)
from ..words import ceil_minutes
from .pool import PREFIX as PREFIX_OF_TASK

SCHEDULER_SCRIPT = "scheduler.sbatch"
WORKER_SCRIPT = "worker.sbatch"
SCHEDULER_MEMORY = 2 << 30  # the scheduler's job: enough for a few hundred workers' state
PREFIX = "gpuenv-dask-"
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
WORKER_NAME = (
    f'"{PREFIX_OF_TASK}${{SLURM_ARRAY_JOB_ID}}_${{SLURM_ARRAY_TASK_ID}}"'  # the pool's name of a task
)
# A worker started in the scheduler's allocation: its job and its task in the srun step (pool.together_names)
STEP_NAME = f'"{PREFIX_OF_TASK}${{SLURM_JOB_ID}}-${{SLURM_PROCID}}"'


def scheduler_job_name(cluster_id: str) -> str:
    return PREFIX + check_name(cluster_id, "Cluster id")


def workers_job_name(cluster_id: str) -> str:
    return scheduler_job_name(cluster_id) + "-w"


def gres(placement: Placement, gpu_type: str | None) -> str | None:
    """``--gres`` as the backend asks it for jobs: ``gpu:PROFILE:1`` for a MIG slice, ``gpu[:TYPE]:N``."""
    if placement.mig_profile is not None:
        if not MIG_PROFILE_RE.fullmatch(placement.mig_profile):
            raise ValueError(f"MIG profile {placement.mig_profile!r} is not valid")
        return f"gpu:{placement.mig_profile}:1"
    if placement.gpus:
        n = int(placement.gpus)
        return f"gpu:{check_name(gpu_type, 'GPU type')}:{n}" if gpu_type else f"gpu:{n}"
    return None


def _site_directives(options: SbatchOptions) -> list[str]:
    out = []
    if options.partition is not None:
        out.append(f"--partition={check_name(options.partition, 'Partition')}")
    if options.account is not None:
        out.append(f"--account={check_name(options.account, 'Account')}")
    out.append(f"--export={check_export(options.export)}")
    out.extend(check_extra_option(o) for o in options.extra)
    return out


def _environment(env: dict[str, str], options: SbatchOptions) -> list[str]:
    env = {**env, **options.environment}
    for key in env:
        if not _ENV_NAME.fullmatch(key):
            raise ValueError(f"environment variable name '{key}' is not valid")
    lines = [""] + [f"export {k}={shlex.quote(v)}" for k, v in env.items()]
    if options.prologue:
        lines.append("# Set up by the administrator (c.SlurmBackend.prologue):")
        lines += [str(p) for p in options.prologue]
    return lines


def _scheduler_job(spec: ClusterSpec, folder: Path) -> list[str]:
    """The directives of the job the scheduler runs in, either shape: its name, its log, its folder."""
    log = f"{folder}/{LOG}"
    return [
        f"--job-name={scheduler_job_name(spec.id)}",
        f"--output={log}",
        f"--error={log}",
        "--open-mode=append",
        f"--chdir={folder}",
        "--nodes=1",
    ]


def _command(python: str, args: Sequence[str]) -> str:
    return " ".join(shlex.quote(a) for a in (check_path(python, "The environment's Python"), *args))


def scheduler_script(spec: ClusterSpec, options: SbatchOptions, time_seconds: int, network: Network) -> str:
    """The scheduler's batch job: one CPU, modest memory, ``time_seconds`` (the server's
    ``dask_scheduler_walltime``, within the partition's limit), the keeper preloaded. ``exec``: the
    scheduler is the job's main process, so scancel's SIGTERM reaches distributed, whose teardown runs
    the keeper's (it cancels the workers)."""
    folder = Path(check_path(spec.folder, "The cluster folder"))
    directives = [
        *_scheduler_job(spec, folder),
        "--ntasks=1",
        "--cpus-per-task=1",
        f"--mem={memory_option(SCHEDULER_MEMORY)}",
        f"--time={ceil_minutes(time_seconds)}",
        *_site_directives(options),
    ]
    env = {"PYTHONUNBUFFERED": "1", **scheduler_env(folder), "CUDA_VISIBLE_DEVICES": ""}
    lines = [
        "#!/bin/bash",
        f"# jupyter-gpu-env Dask cluster {spec.id} ({spec.name}): its scheduler, whose keeper submits and",
        f"# keeps the workers ({WORKER_SCRIPT}, a job array). Written by the server.",
        *(f"#SBATCH {d}" for d in directives),
        *_environment(env, options),
        "",
        "exec " + _command(options.python, scheduler_args(folder, spec.idle_timeout_seconds, network)),
    ]
    return "\n".join(lines) + "\n"


def worker_cpus(spec: ClusterSpec, placement: Placement) -> int:
    return int(placement.cpus or spec.worker.cpus or spec.worker.threads)


def worker_memory(spec: ClusterSpec, placement: Placement) -> int:
    """What SLURM is asked per worker: at least the worker's own limit, so that Dask spills first."""
    return max(placement.memory_bytes or 0, spec.worker.memory_bytes or 0)


def gpus_per_task(placement: Placement, gpu_type: str | None) -> str | None:
    """``--gpus-per-task`` for a worker of an allocation: ``[TYPE:]N`` whole GPUs (no MIG slice: those
    clusters have jobs of their own, :meth:`SlurmLauncher.together`)."""
    if not placement.gpus:
        return None
    n = int(placement.gpus)
    return f"{check_name(gpu_type, 'GPU type')}:{n}" if gpu_type else str(n)


def allocation_script(
    spec: ClusterSpec, placement: Placement, options: SbatchOptions, network: Network, srun: str = "srun"
) -> str:
    """One batch job for the whole cluster: the scheduler runs in its batch step and ``spec.together``
    workers as one ``srun`` step of as many tasks, so they wait in the queue once, start together and
    connect as soon as the scheduler listens (distributed reads its address file every 0.1 s).

    One node: the workers' CPUs, memory and GPUs, with the scheduler's memory, fit one node of the
    queue. ``--time`` is the cluster's walltime: scheduler and workers end together with the allocation.
    The shell waits for the scheduler; when it ends (shut down, idle, cancelled) the step is ended too,
    and a SIGTERM to the shell (scancel) is passed to the scheduler, whose keeper then retires the rest."""
    folder = Path(check_path(spec.folder, "The cluster folder"))
    n = int(spec.together)
    if n < 1:
        raise ValueError("an allocation needs at least one worker")
    memory = worker_memory(spec, placement)
    directives = [
        *_scheduler_job(spec, folder),
        f"--ntasks={n}",
        f"--cpus-per-task={worker_cpus(spec, placement)}",
    ]
    if memory:
        directives.append(f"--mem={memory_option(n * memory + SCHEDULER_MEMORY)}")
    gpus = gpus_per_task(placement, options.gpu_type)
    if gpus:
        directives.append(f"--gpus-per-task={gpus}")
    directives += [f"--time={ceil_minutes(spec.walltime_seconds)}", *_site_directives(options)]
    env = {"PYTHONUNBUFFERED": "1", **worker_env(), **{v: "1" for v in THREAD_VARS}}
    if not gpus:
        env["CUDA_VISIBLE_DEVICES"] = ""
    # the scheduler's own: the keeper importable, and never a GPU (the workers' step gets theirs)
    own = {**{k: v for k, v in scheduler_env(folder).items() if k not in env}, "CUDA_VISIBLE_DEVICES": ""}
    scheduler = " ".join(
        [
            *(f"{k}={shlex.quote(v)}" for k, v in own.items()),
            _command(options.python, scheduler_args(folder, spec.idle_timeout_seconds, network)),
        ]
    )
    step = [
        check_path(srun, "srun") if "/" in srun else check_name(srun, "srun"),
        f"--ntasks={n}",
        f"--cpus-per-task={worker_cpus(spec, placement)}",
        *([f"--gpus-per-task={gpus}"] if gpus else []),
        # a worker retired by a scale-down ends its task alone: the step goes on, whatever the site's
        # WaitTime (which would end every task that long after the first one ends) or KillOnBadExit
        "--wait=0",
        "--kill-on-bad-exit=0",
        f"--output={folder}/{WORKER_LOGS}/%j-%t.log",
        f"--error={folder}/{WORKER_LOGS}/%j-%t.log",
    ]
    worker = f'exec "$@" --name {STEP_NAME}'
    lines = [
        "#!/bin/bash",
        f"# jupyter-gpu-env Dask cluster {spec.id} ({spec.name}): its scheduler and {n} workers in one",
        "# allocation; its keeper submits any worker beyond them as a job of its own. Written by the server.",
        *(f"#SBATCH {d}" for d in directives),
        *_environment(env, options),
        "",
        f"{scheduler} &",
        "scheduler=$!",
        "trap 'kill -TERM \"$scheduler\" 2>/dev/null' TERM INT",
        " ".join(shlex.quote(a) for a in step)
        + f" bash -c {shlex.quote(worker)} worker {_command(options.python, together_args(folder, spec.worker, network))} &",
        "workers=$!",
        'wait "$scheduler"; status=$?',
        'while kill -0 "$scheduler" 2>/dev/null; do wait "$scheduler"; status=$?; done',
        'kill -TERM "$workers" 2>/dev/null  # srun passes it to each task still running',
        'wait "$workers"',
        'exit "$status"',
    ]
    return "\n".join(lines) + "\n"


def worker_script(spec: ClusterSpec, placement: Placement, options: SbatchOptions) -> str:
    """The workers' batch script, submitted by the keeper as ``sbatch --array=0-N``: one task is one
    worker, named ``ARRAYID_TASK``, for the cluster's walltime (it retires a few minutes before, at
    its ``--lifetime``, and the keeper asks for its replacement)."""
    folder = Path(check_path(spec.folder, "The cluster folder"))
    log = f"{folder}/{WORKER_LOGS}/%A_%a.log"
    memory = worker_memory(spec, placement)
    cpus = worker_cpus(spec, placement)
    directives = [
        f"--job-name={workers_job_name(spec.id)}",
        f"--output={log}",
        f"--error={log}",
        f"--chdir={folder}",
        "--nodes=1",
        "--ntasks=1",
        f"--cpus-per-task={int(cpus)}",
    ]
    if memory:
        directives.append(f"--mem={memory_option(memory)}")
    if g := gres(placement, options.gpu_type):
        directives.append(f"--gres={g}")
    directives += [f"--time={ceil_minutes(spec.walltime_seconds)}", *_site_directives(options)]
    # Dask's threads are the parallelism: nested BLAS threads would oversubscribe the worker's CPUs.
    env = {"PYTHONUNBUFFERED": "1", **worker_env(), **{v: "1" for v in THREAD_VARS}}
    if not (placement.gpus or placement.mig_profile):
        env["CUDA_VISIBLE_DEVICES"] = ""  # asked for none: never pick up a GPU by default
    lines = [
        "#!/bin/bash",
        f"# jupyter-gpu-env Dask cluster {spec.id} ({spec.name}): its workers, one per array task.",
        "# Submitted by the cluster's keeper (in the scheduler's job); written by the server.",
        *(f"#SBATCH {d}" for d in directives),
        *_environment(env, options),
        "",
        f"exec {_command(options.python, spec.worker_args)} --name {WORKER_NAME}",
    ]
    return "\n".join(lines) + "\n"
