"""A schedule kept by SLURM itself: a chain of waiting jobs.

At any time one small job, named ``gpuenv-schedule-<id>``, waits in SLURM for the next due time
(``sbatch --begin``: squeue shows it PENDING for BeginTime). When it starts, its first act
(:mod:`.tick`) is to submit its successor for the due time after; then it starts the run
as an ordinary batch job. So the schedule goes on while no Jupyter server exists; Debian's SLURM has
no ``scrontab``, and this works on every SLURM.

Arming (a new schedule, a change, a resume) and the tick's successor both cancel whatever of the
schedule still waits before submitting, under the schedule folder's lock: never two waiting jobs for
one schedule. The tick script and the SbatchOptions' round trip through ``schedule.json`` are pure.
"""

from __future__ import annotations

import dataclasses
import math
import shlex
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...contracts.schedules.plan import Armed
from ...errors import Conflict, Unavailable
from . import script
from .controller import SlurmController

TICK_MODULE = "jupyter_gpu_env.backends.slurm.tick"  # what the waiting job runs (:mod:`.tick`)

TICK_SCRIPT = "tick.sbatch"
TICK_LOG = "tick.log"
PREFIX = "gpuenv-schedule-"
_SQUEUE_FORMAT = "%i|%j|%T|%r|%S"


def waiting_name(schedule_id: str) -> str:
    return PREFIX + schedule_id


def tick_script(
    folder: Path, schedule_id: str, generation: int, due: float, options: script.SbatchOptions
) -> str:
    """The waiting job's script: small (one core, 256 MB, five minutes), in the schedule's partition,
    running the tick for the run due at ``due``."""
    where = script.check_path(folder, "The schedule folder")
    python = script.check_path(options.python, "The nodes' Python")
    directives = [
        f"--job-name={waiting_name(schedule_id)}",
        f"--output={where}/{TICK_LOG}",
        f"--error={where}/{TICK_LOG}",
        "--open-mode=append",
        f"--chdir={where}",
        "--nodes=1",
        "--ntasks=1",
        "--cpus-per-task=1",
        "--mem=256M",
        "--time=5",
    ]
    if options.partition is not None:
        directives.append(f"--partition={script.check_name(options.partition, 'Partition')}")
    if options.account is not None:
        directives.append(f"--account={script.check_name(options.account, 'Account')}")
    directives.append(f"--export={script.check_export(options.export)}")
    lines = [
        "#!/bin/bash",
        f"# jupyter-gpu-env schedule {schedule_id}: starts the run due, after arming the next.",
    ]
    lines += [f"#SBATCH {d}" for d in directives]
    lines += ["", "export PYTHONUNBUFFERED=1"]
    if options.prologue:
        lines.append("# Set up by the administrator (c.SlurmBackend.prologue):")
        lines += [str(p) for p in options.prologue]
    argv = [python, "-m", TICK_MODULE, "--due", repr(float(due)), "--generation", str(int(generation)), where]
    lines += ["", "exec " + " ".join(shlex.quote(a) for a in argv)]
    return "\n".join(lines) + "\n"


def begin_option(due: float, now: float) -> str:
    """``--begin`` for ``due``, relative to now: no time zone to agree on with the controller."""
    return f"--begin=now+{max(0, math.ceil(due - now))}"


def options_to_json(options: script.SbatchOptions) -> dict[str, Any]:
    return dataclasses.asdict(options)


def options_from_json(data: Mapping[str, Any]) -> script.SbatchOptions:
    fields = {f.name for f in dataclasses.fields(script.SbatchOptions)}
    values = {k: v for k, v in data.items() if k in fields}
    image = values.get("image")
    values["image"] = script.ImagePlan(**image) if isinstance(image, dict) else None
    values["extra"] = tuple(values.get("extra") or ())
    values["prologue"] = tuple(values.get("prologue") or ())
    values["environment"] = dict(values.get("environment") or {})
    return script.SbatchOptions(**values)


class SlurmChain:
    """The waiting jobs of schedules, through one controller (the server's, or one a tick builds from
    ``schedule.json``)."""

    def __init__(self, controller: SlurmController) -> None:
        self.controller = controller

    async def waiting(self, schedule_ids: Sequence[str]) -> dict[str, list[tuple[str, str, str]]]:
        """These schedules' jobs SLURM holds, by schedule id: ``(slurm id, state, reason)``, with one
        squeue asking for their names only (not every user's queue)."""
        if not schedule_ids:
            return {}
        sq = self.controller.commands["squeue"]
        names = ",".join(waiting_name(sid) for sid in schedule_ids)
        argv = [sq, "--noheader", f"--name={names}", f"--format={_SQUEUE_FORMAT}"]
        res = await self.controller.run(argv, check=False)
        found: dict[str, list[tuple[str, str, str]]] = {}
        if res.returncode != 0:
            raise Unavailable(
                f"squeue failed: {res.output.strip() or res.returncode}", reason="slurm_unavailable"
            )
        for line in res.stdout.splitlines():
            parts = [p.strip() for p in line.split("|")]
            if len(parts) < 4 or not parts[1].startswith(PREFIX):
                continue
            sid = parts[1].removeprefix(PREFIX)
            if sid in schedule_ids:
                found.setdefault(sid, []).append((parts[0], parts[2], parts[3]))
        return found

    async def clear(self, schedule_id: str) -> None:
        """Cancel what of the schedule waits (a running tick is left to finish its run's start)."""
        held = (await self.waiting([schedule_id])).get(schedule_id, [])
        pending = [slurm_id for slurm_id, state, _ in held if state == "PENDING"]
        if pending:
            await self.controller.scancel(*pending)

    async def arm(
        self, folder: Path, schedule_id: str, generation: int, due: float, options: script.SbatchOptions
    ) -> Armed:
        """The one waiting job for ``due``, in place of any before it. Call with the schedule's lock held."""
        await self.clear(schedule_id)
        text = tick_script(folder, schedule_id, generation, due, options)
        path = folder / TICK_SCRIPT
        path.write_text(text)  # sbatch copies it: the next arm may replace it at once
        sb = self.controller.commands["sbatch"]
        res = await self.controller.run(
            [sb, "--parsable", begin_option(due, time.time()), str(path)], check=False
        )
        if res.returncode != 0:
            said = (res.stderr or res.stdout).strip()
            raise Conflict(f"SLURM refused the schedule's waiting job: {said}", reason="slurm_refused")
        slurm_id = res.stdout.strip().split(";")[0]
        when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(due))
        return Armed(slurm_id, True, f"Waits in SLURM as job {slurm_id} for its next run, {when}.")

    async def armed(self, schedule_ids: Sequence[str]) -> dict[str, Armed]:
        held = await self.waiting(schedule_ids)
        out: dict[str, Armed] = {}
        for sid in schedule_ids:
            jobs = held.get(sid, [])
            if not jobs:
                out[sid] = Armed(
                    None,
                    False,
                    "No job of this schedule waits in SLURM (cancelled, or lost in a restart): re-arm it.",
                )
                continue
            slurm_id, state, reason = jobs[-1]
            if state == "PENDING":
                why = "" if reason in ("BeginTime", "None", "") else f" ({reason})"
                out[sid] = Armed(slurm_id, True, f"Waits in SLURM as job {slurm_id} for its next run{why}.")
            else:
                out[sid] = Armed(slurm_id, True, f"SLURM job {slurm_id} is starting a run ({state.lower()}).")
        return out
