"""Pure builders of what the SLURM backend hands to SLURM: the batch script and the sbatch command line.

No I/O: a job and options in, text and argv out, so every line SLURM will see is tested without a
cluster. The script runs the same runner as every backend (``python -m jupyter_gpu_env.runner FOLDER``)
in the job folder on the shared filesystem; its output goes to the folder's log.

Everything that reaches a ``#SBATCH`` line or the script is checked here, whatever checked it before:
a user's queue name with a newline must never become a second directive or a shell command.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ...contracts import jobfiles
from ...contracts.jobfiles import slug
from ...models.jobs import Job
from ...models.resources import MIG_PROFILE_RE
from .words import ceil_minutes

SCRIPT = "job.sbatch"  # the script, kept in the job folder: what ran, and resubmittable by hand
IMAGE_PREFIX_ENV = "JUPYTER_GPU_ENV_IMAGE_PREFIX"  # where the job's image is mounted, for the runner
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS")

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,127}$")  # partition, account, gres type
_EXTRA = re.compile(r"^--[a-z][a-z0-9-]*(=[^\s'\"\\`$;|&<>]+)?$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# A path that goes into a #SBATCH line as it is: sbatch splits those lines on blanks and reads quotes.
_SAFE_PATH = re.compile(r"^/[^\s'\"\\`$;|&<>%\x00-\x1f]*$")

# Options the backend sets from the job itself or from its own settings: refused in extra options.
RESERVED_OPTIONS = frozenset(
    {
        "job-name",
        "output",
        "error",
        "input",
        "open-mode",
        "chdir",
        "wrap",
        "array",
        "parsable",
        "export",
        "partition",
        "account",
        "nodes",
        "ntasks",
        "cpus-per-task",
        "mem",
        "time",
        "gres",
        "gpus",
        "test-only",
        "wait",
        "dependency",  # a pipeline's parents (dependency_option)
        "kill-on-invalid-dep",  # set with it: a job whose parents failed leaves the queue
        "requeue",  # from the job's priority and kind: only an opportunistic notebook job is requeued
        "no-requeue",
    }
)

# How a pipeline node waits for its parents (its ``when``) in SLURM's dependency types.
DEPENDENCY_TYPES = {"succeeded": "afterok", "always": "afterany", "failed": "afternotok"}
_SLURM_ID = re.compile(r"^[0-9]{1,12}(?:_[0-9]{1,9})?$")  # a job, a job array, or one task of an array
_DEPENDENCY = re.compile(
    r"^(?:after(?:ok|any):[0-9_]+(?::[0-9_]+)*|afternotok:[0-9_]+(?:\?afternotok:[0-9_]+)*)$"
)


@dataclass(frozen=True)
class ImagePlan:
    """How the script opens the job's packed image on the node.

    ``tool`` is ``apptainer`` (the runner runs inside ``container`` with the image bound at ``mount``, the
    path it was packed for) or ``squashfuse`` (the image is mounted under the node's temporary folder for
    the job's lifetime).
    """

    tool: str
    image: str
    mount: str = ""
    container: str = ""
    program: str = ""  # the apptainer / squashfuse command; empty: its name


@dataclass(frozen=True)
class SbatchOptions:
    python: str  # the Python on the nodes that has jupyter-gpu-env
    partition: str | None = None  # already resolved: the job's queue, else the default
    account: str | None = None
    gpu_type: str | None = None  # gres type for whole GPUs (gpu:TYPE:N)
    export: str = "ALL"
    extra: Sequence[str] = ()
    environment: Mapping[str, str] = field(default_factory=dict)
    prologue: Sequence[str] = ()  # shell lines from the administrator, run before the runner
    image: ImagePlan | None = None
    dependency: str | None = None  # --dependency's value (dependency_option); None: start when it can
    qos: str | None = None  # an opportunistic job's QOS (c.SlurmBackend.priorities), over extra's --qos


def check_name(value: str, what: str) -> str:
    if not _NAME.fullmatch(value):
        raise ValueError(f"{what} '{value}' is not a valid SLURM name (letters, digits, '_', '.', '-')")
    return value


def check_extra_option(option: str) -> str:
    """One extra sbatch option from the configuration: ``--opt`` or ``--opt=value``, nothing we set."""
    if not _EXTRA.fullmatch(option):
        raise ValueError(
            f"extra sbatch option {option!r} must be one long option, '--name' or '--name=value', with no "
            "blanks, quotes or shell characters"
        )
    name = option[2:].split("=", 1)[0]
    if name in RESERVED_OPTIONS:
        raise ValueError(
            f"extra sbatch option {option!r} sets '--{name}', which the SLURM backend sets itself "
            "(from the job's resources, or from its partition/account settings)"
        )
    return option


def check_export(value: str) -> str:
    """``ALL``, ``NONE`` or ``[ALL,]VAR[,VAR...]`` (names only: values belong in ``environment``)."""
    items = value.split(",")
    if not value or not all(i in ("ALL", "NONE") or _ENV_NAME.fullmatch(i) for i in items):
        raise ValueError(f"export '{value}' must be ALL, NONE or a comma-separated list of variable names")
    return value


def check_path(path: str | Path, what: str) -> str:
    text = str(path)
    if not _SAFE_PATH.fullmatch(text):
        raise ValueError(
            f"{what} '{text}' cannot go into a batch script: use an absolute path without blanks, quotes, "
            "'%' or shell characters"
        )
    return text


def dependency_option(slurm_ids: Sequence[str], when: str) -> str | None:
    """``--dependency``'s value: start once the SLURM jobs ``slurm_ids`` ended as ``when`` asks.

    ``succeeded``: ``afterok:A:B`` (every one succeeded; a job array's id means every task of it);
    ``always``: ``afterany:A:B`` (every one ended, however); ``failed``: ``afternotok:A?afternotok:B``.
    SLURM cannot say "every one ended and one of them failed": with several parents, the job may start
    as soon as ONE of them failed (the others may still run). None when there is nothing to wait for.
    Each id is checked: digits, or ``ARRAY_TASK`` digits; nothing else reaches the script.
    """
    if when not in DEPENDENCY_TYPES:
        raise ValueError(f"'{when}' is not a way to wait for other jobs (succeeded, failed or always)")
    ids = list(dict.fromkeys(slurm_ids))
    for slurm_id in ids:
        if not _SLURM_ID.fullmatch(slurm_id):
            raise ValueError(f"{slurm_id!r} is not a SLURM job id (digits, or ARRAY_TASK for one task)")
    if not ids:
        return None
    kind = DEPENDENCY_TYPES[when]
    if kind == "afternotok":
        return "?".join(f"afternotok:{i}" for i in ids)
    return f"{kind}:" + ":".join(ids)


def memory_option(nbytes: int) -> str:
    """``--mem`` in SLURM's binary units, rounded up: whole GiB when exact, else MiB."""
    if nbytes % (1 << 30) == 0:
        return f"{nbytes >> 30}G"
    return f"{-(-nbytes // (1 << 20))}M"


def gres_option(job: Job, gpu_type: str | None) -> str | None:
    res = job.resources
    if res.mig_profile is not None:
        if not MIG_PROFILE_RE.fullmatch(res.mig_profile):
            raise ValueError(f"MIG profile {res.mig_profile!r} is not valid")
        return f"gpu:{res.mig_profile}:1"
    if res.gpus:
        return f"gpu:{check_name(gpu_type, 'GPU type')}:{res.gpus}" if gpu_type else f"gpu:{res.gpus}"
    return None


def sbatch_directives(job: Job, folder: Path, options: SbatchOptions) -> list[str]:
    """The ``--option=value`` list of the script's ``#SBATCH`` lines."""
    where = check_path(folder, "The job folder")
    log = where + "/" + jobfiles.LOG
    res = job.resources
    out = [
        f"--job-name={slug(job.name, 40)}-{job.id}",
        f"--output={log}",
        f"--error={log}",
        "--open-mode=append",
        f"--chdir={where}",
        "--nodes=1",
        "--ntasks=1",
    ]
    if res.cpus:
        out.append(f"--cpus-per-task={int(res.cpus)}")
    if res.memory_bytes:
        out.append(f"--mem={memory_option(int(res.memory_bytes))}")
    if res.time_limit_seconds:
        out.append(f"--time={ceil_minutes(int(res.time_limit_seconds))}")
    gres = gres_option(job, options.gpu_type)
    if gres:
        out.append(f"--gres={gres}")
    if options.partition is not None:
        out.append(f"--partition={check_name(options.partition, 'Partition')}")
    if options.account is not None:
        out.append(f"--account={check_name(options.account, 'Account')}")
    out.append(f"--export={check_export(options.export)}")
    # An opportunistic job goes back to the queue when SLURM preempts it (or its node fails) and resumes
    # from its checkpoint; a normal job is never started again behind its user's back (whatever the
    # cluster's JobRequeue says), nor is a kernel session, which cannot resume in a new allocation:
    # preemption ends it.
    requeue = job.priority == "opportunistic" and job.kind != "kernel"
    out.append("--requeue" if requeue else "--no-requeue")
    if options.dependency is not None:
        if not _DEPENDENCY.fullmatch(options.dependency):
            raise ValueError(f"dependency {options.dependency!r} is not one dependency_option writes")
        # A dependency that can never be satisfied (a parent failed) cancels the job, rather than leaving
        # it pending forever with the reason DependencyNeverSatisfied.
        out += [f"--dependency={options.dependency}", "--kill-on-invalid-dep=yes"]
    extra = [check_extra_option(o) for o in options.extra]
    if options.qos is not None:
        extra = [o for o in extra if not o.startswith(("--qos=", "--qos "))]
        extra.append(f"--qos={check_name(options.qos, 'QOS')}")
    return out + extra


def sbatch_script(job: Job, folder: Path, options: SbatchOptions) -> str:
    """The batch script for ``job`` whose folder is ``folder`` (absolute, on the shared filesystem)."""
    where = check_path(folder, "The job folder")
    python = check_path(options.python, "The nodes' Python")
    res = job.resources
    lines = [
        "#!/bin/bash",
        f"# jupyter-gpu-env batch job {job.id}. Written by the server; SLURM runs the notebook's runner.",
    ]
    lines += [f"#SBATCH {d}" for d in sbatch_directives(job, folder, options)]
    lines += _environment_lines(job, options)
    runner = " ".join(shlex.quote(a) for a in (python, "-m", "jupyter_gpu_env.runner", where))
    lines.append("")
    lines += _run_lines(runner, options.image, gpus=bool(res.gpus or res.mig_profile))
    return "\n".join(lines) + "\n"


def _environment_lines(job: Job, options: SbatchOptions, *, job_id: bool = True) -> list[str]:
    res = job.resources
    env: dict[str, str] = {"PYTHONUNBUFFERED": "1"}
    if job_id:
        env["JUPYTER_GPU_ENV_JOB_ID"] = job.id
    if res.cpus:
        env.update({var: str(res.cpus) for var in THREAD_VARS})
    if res.gpus == 0 and not res.mig_profile:
        env["CUDA_VISIBLE_DEVICES"] = ""  # asked for none: never pick up a GPU by default
    for key, value in options.environment.items():
        if not _ENV_NAME.fullmatch(key):
            raise ValueError(f"environment variable name '{key}' is not valid")
        env[key] = value
    lines = [""] + [f"export {k}={shlex.quote(v)}" for k, v in env.items()]
    if options.prologue:
        lines.append("# Set up by the administrator (c.SlurmBackend.prologue):")
        lines += [str(p) for p in options.prologue]
    return lines


def array_spec(indexes: Sequence[int], max_concurrent: int) -> str:
    """``--array``'s value: the indexes as ranges (``0-9,12,15-17``), at most ``max_concurrent`` at once."""
    ordered = sorted(set(indexes))
    if not ordered or ordered[0] < 0:
        raise ValueError("a job array needs indexes from 0")
    parts, start, prev = [], ordered[0], ordered[0]
    for i in [*ordered[1:], None]:
        if i is not None and i == prev + 1:
            prev = i
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if i is not None:
            start = prev = i
    limit = f"%{int(max_concurrent)}" if max_concurrent < len(ordered) else ""
    return ",".join(parts) + limit


def runs_file(runs: Sequence[tuple[int, str, Path]]) -> str:
    """What an array task reads to find its run: ``INDEX JOB_ID FOLDER`` per line."""
    for _, job_id, _ in runs:
        if not re.fullmatch(r"[0-9a-f]{12}", job_id):
            raise ValueError(f"job id {job_id!r} is not one of ours")
    return "".join(f"{i} {job_id} {check_path(folder, 'A run folder')}\n" for i, job_id, folder in runs)


def sbatch_array_script(
    job: Job, sweep: Path, runs: Path, indexes: Sequence[int], max_concurrent: int, options: SbatchOptions
) -> str:
    """One batch script for a sweep's runs (``job`` is one of them: they share resources and runtime):
    a job array whose task ``SLURM_ARRAY_TASK_ID`` finds its run's folder in ``runs`` (see
    :func:`runs_file`) and runs the same runner there, its output appended to that run's log."""
    where = check_path(sweep, "The sweep folder")
    table = check_path(runs, "The runs file")
    python = check_path(options.python, "The nodes' Python")
    directives = [
        d
        for d in sbatch_directives(job, sweep, options)
        if not d.startswith(("--job-name=", "--output=", "--error="))
    ]
    name = slug(job.name.split(" [", 1)[0], 40)
    lines = [
        "#!/bin/bash",
        f"# jupyter-gpu-env sweep {job.group_id}: one task per run. Written by the server.",
        f"#SBATCH --job-name={name}-{job.group_id}",
        f"#SBATCH --array={array_spec(indexes, max_concurrent)}",
        # SLURM's own words about a task (before it finds its run) go here; the run's go to its log
        f"#SBATCH --output={where}/slurm-%A_%a.out",
        f"#SBATCH --error={where}/slurm-%A_%a.out",
    ]
    lines += [f"#SBATCH {d}" for d in directives]
    lines += [
        "",
        f"read -r _ JUPYTER_GPU_ENV_JOB_ID run < <(awk -v i=\"$SLURM_ARRAY_TASK_ID\" '$1 == i' {table})",
        f'[ -n "$run" ] || {{ echo "no run for array task $SLURM_ARRAY_TASK_ID in {table}" >&2; exit 1; }}',
        'cd "$run" || exit 1',
        f'exec >>"$run/{jobfiles.LOG}" 2>&1',
        "export JUPYTER_GPU_ENV_JOB_ID",
    ]
    lines += _environment_lines(job, options, job_id=False)
    runner = f'{shlex.quote(python)} -m jupyter_gpu_env.runner "$run"'
    lines.append("")
    lines += _run_lines(runner, options.image, gpus=bool(job.resources.gpus or job.resources.mig_profile))
    return "\n".join(lines) + "\n"


def _run_lines(cmd: str, image: ImagePlan | None, *, gpus: bool) -> list[str]:
    if image is None:
        # exec: the runner is the job's main process, so scancel's SIGTERM reaches it first-hand, and so
        # does a preemption's (SLURM signals a requeued job's batch script, not its other processes).
        return [f"exec {cmd}"]
    src = shlex.quote(check_path(image.image, "The image"))
    if image.tool == "apptainer":
        mount = shlex.quote(check_path(image.mount, "The image's mount path"))
        container = shlex.quote(check_path(image.container, "The apptainer container"))
        program = shlex.quote(image.program or "apptainer")
        nv = " --nv" if gpus else ""
        return [
            f"export {IMAGE_PREFIX_ENV}={mount}",
            f"exec {program} exec{nv} --bind {src}:{mount}:image-src=/ {container} {cmd}",
        ]
    if image.tool == "squashfuse":
        program = shlex.quote(image.program or "squashfuse")
        return [
            'mnt=$(mktemp -d "${TMPDIR:-/tmp}/gpu-env-image.XXXXXX") || exit 1',
            f'{program} {src} "$mnt" || {{ echo "squashfuse could not mount {image.image}" >&2; exit 1; }}',
            # fusermount3 (fuse3) or fusermount unmount as the user; umount where the job runs as root.
            'trap \'{ fusermount3 -u "$mnt" || fusermount -u "$mnt" || umount "$mnt"; } 2>/dev/null; '
            'rmdir "$mnt"\' EXIT',
            f'export {IMAGE_PREFIX_ENV}="$mnt"',
            f"{cmd} &",
            "runner=$!",
            # scancel signals every process of the job; forward anyway, for `scancel --batch` and for a
            # preemption's requeue, which signals the batch script alone (SIGTERM; SIGUSR1 by hand).
            "trap 'kill -TERM $runner 2>/dev/null' TERM INT",
            "trap 'kill -USR1 $runner 2>/dev/null' USR1",
            "wait $runner; code=$?",
            "# wait returns early when a signal arrives: wait again for the runner's own end.",
            "while kill -0 $runner 2>/dev/null; do wait $runner; code=$?; done",
            "exit $code",
        ]
    raise ValueError(f"unknown image tool '{image.tool}'")


def sbatch_argv(sbatch: str, script: Path) -> list[str]:
    """The command that submits ``script``: it prints only the job id (``ID`` or ``ID;CLUSTER``)."""
    return [sbatch, "--parsable", str(script)]
