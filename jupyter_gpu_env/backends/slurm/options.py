"""The options of the SLURM backend (``c.SlurmBackend.*``), declared once and checked, at start, by the
pure script builder's own checks (a bad partition name or sbatch option stops the server with its reason).
"""

from __future__ import annotations

from typing import Any

from traitlets import Dict, Float, List, TraitError, Unicode, validate

from ..base import RemoteBackend
from . import script

COMMANDS = ("sbatch", "squeue", "scontrol", "scancel", "sinfo")


class SlurmOptions(RemoteBackend):
    """The options of :class:`.backend.SlurmBackend` (``c.SlurmBackend.*``), declared once."""

    kind = "slurm"

    partitions = List(
        Unicode(),
        config=True,
        help="Partitions offered to users (the queue of a job). Empty: every partition sinfo lists.",
    )
    default_partition = Unicode(
        "",
        config=True,
        help="The partition of a job that names no queue. Empty: SLURM's default partition (sinfo's '*'), "
        "else the first offered.",
    )
    account = Unicode("", config=True, help="The SLURM account jobs are charged to (--account); empty: none.")
    gpu_type = Unicode(
        "",
        config=True,
        help="The gres type whole GPUs are requested as (--gres=gpu:TYPE:N, e.g. 'a100'); empty: any "
        "(--gres=gpu:N). MIG slices are requested as gpu:PROFILE:1.",
    )
    extra_sbatch_options = List(
        Unicode(),
        config=True,
        help="More sbatch options for every job, each one '--name' or '--name=value' (e.g. '--qos=interactive', "
        "'--constraint=a100'), written as #SBATCH lines. Options the backend sets itself (resources, output, "
        "partition, account, export) are refused.",
    )
    export = Unicode(
        "ALL",
        config=True,
        help="sbatch --export: ALL passes the server's environment to the job (less SLURM's own and "
        "CUDA_VISIBLE_DEVICES), NONE passes none, or a comma-separated list of names.",
    )
    environment = Dict(
        value_trait=Unicode(),
        config=True,
        help="Environment variables set for every job (in the script, before the runner starts).",
    )
    prologue = List(
        Unicode(),
        config=True,
        help="Shell lines run in every job's script before the runner, e.g. 'module load cuda/12.4'.",
    )
    python = Unicode(
        "",
        config=True,
        help="The Python on the compute nodes that has jupyter-gpu-env and papermill installed (an absolute "
        "path the nodes see). Empty: the Python of this server, right when it lives on the shared filesystem.",
    )
    sbatch_command = Unicode("sbatch", config=True, help="The sbatch command (a name on PATH or a path).")
    squeue_command = Unicode("squeue", config=True, help="The squeue command (a name on PATH or a path).")
    scontrol_command = Unicode("scontrol", config=True, help="The scontrol command (a name or a path).")
    scancel_command = Unicode("scancel", config=True, help="The scancel command (a name on PATH or a path).")
    sinfo_command = Unicode("sinfo", config=True, help="The sinfo command (a name on PATH or a path).")
    slurm_conf = Unicode(
        "",
        config=True,
        help="slurm.conf for the commands (exported to them as SLURM_CONF). Empty: their default "
        "(SLURM_CONF of the server's environment, /etc/slurm/slurm.conf, or configless).",
    )
    command_timeout = Float(
        30.0,
        min=1,
        config=True,
        help="Seconds one SLURM command (a poll's squeue, an sbatch) may take before the controller is "
        "treated as unavailable for this round.",
    )
    info_ttl = Float(
        60.0, min=0, config=True, help="Seconds the partitions and limits read from sinfo are cached."
    )
    image_runtime = Unicode(
        "",
        config=True,
        help="How nodes open packed images: 'apptainer' (needs image_container), 'squashfuse' (mounted in the "
        "node's temporary folder for the job), or '' (jobs in images are refused).",
    )
    priorities = Dict(
        config=True,
        help="Priorities offered besides 'normal', each with where SLURM runs it. Only 'opportunistic' for "
        "now: jobs that run on spare resources, are requeued when SLURM preempts them, and resume from "
        "their checkpoint. Its keys: 'partition' (a preemptible partition, PreemptMode=REQUEUE) and/or "
        "'qos' (a preemptible QOS), and 'description' (what users read; default: the standard words). "
        "Example: {'opportunistic': {'partition': 'scavenger'}}. The partition wins over the queue a "
        "job names; the qos replaces a --qos of extra_sbatch_options. Empty: only 'normal'.",
    )
    image_container = Unicode(
        "",
        config=True,
        help="With image_runtime 'apptainer': the container (.sif) the runner runs in; it must see the "
        "nodes' Python (python) and the job folders.",
    )

    @validate("extra_sbatch_options")
    def _check_extra(self, proposal: dict[str, Any]) -> list[str]:
        return [_trait_checked(script.check_extra_option, o) for o in proposal["value"]]

    @validate("export")
    def _check_export(self, proposal: dict[str, Any]) -> str:
        return str(_trait_checked(script.check_export, proposal["value"]))

    @validate("partitions", "default_partition", "account", "gpu_type")
    def _check_names(self, proposal: dict[str, Any]) -> object:
        value = proposal["value"]
        what = proposal["trait"].name
        for v in [value] if isinstance(value, str) else value:
            if v:
                _trait_checked(script.check_name, v, what)
        return value

    @validate("priorities")
    def _check_priorities(self, proposal: dict[str, Any]) -> dict[str, dict[str, str]]:
        return dict(_trait_checked(check_priorities, proposal["value"]))

    @validate("image_runtime")
    def _check_image_runtime(self, proposal: dict[str, Any]) -> str:
        if proposal["value"] not in ("", "apptainer", "squashfuse"):
            raise TraitError("image_runtime must be 'apptainer', 'squashfuse' or ''")
        return str(proposal["value"])

    @property
    def commands(self) -> dict[str, str]:
        """Each SLURM command by name, as configured (``*_command``)."""
        return {c: getattr(self, f"{c}_command") for c in COMMANDS}


PRIORITY_KEYS = ("partition", "qos", "description")


def check_priorities(value: Any) -> dict[str, dict[str, str]]:
    """``c.SlurmBackend.priorities``, checked whole: ValueError naming what is wrong and how to write it."""
    example = "e.g. {'opportunistic': {'partition': 'scavenger'}}"
    if not isinstance(value, dict):
        raise ValueError(f"priorities must be a dict of priority name to its settings, {example}")
    out: dict[str, dict[str, str]] = {}
    for name, entry in value.items():
        if name != "opportunistic":
            raise ValueError(
                f"priorities: '{name}' is not a priority that can be configured (only 'opportunistic'; "
                "'normal' is always offered), {example}"
            )
        if not isinstance(entry, dict):
            raise ValueError(f"priorities['{name}'] must be a dict with 'partition' and/or 'qos', {example}")
        unknown = sorted(str(k) for k in entry if k not in PRIORITY_KEYS)
        if unknown:
            raise ValueError(
                f"priorities['{name}'] has unknown keys {unknown}; its keys are partition, qos and description"
            )
        if not any(entry.get(k) for k in ("partition", "qos")):
            raise ValueError(
                f"priorities['{name}'] needs a 'partition' or a 'qos' (where SLURM may preempt and requeue "
                f"its jobs), {example}"
            )
        checked: dict[str, str] = {}
        for key in PRIORITY_KEYS:
            v = entry.get(key)
            if v in (None, ""):
                continue
            if not isinstance(v, str):
                raise ValueError(f"priorities['{name}']['{key}'] must be a string, not {type(v).__name__}")
            checked[key] = v if key == "description" else script.check_name(v, f"priorities['{name}'] {key}")
        out[name] = checked
    return out


def _trait_checked(check: Any, *args: Any) -> Any:
    """A check of the pure script builder, as a traitlets validation error."""
    try:
        return check(*args)
    except ValueError as e:
        raise TraitError(str(e)) from None
