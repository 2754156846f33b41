"""Asking SLURM's controller: every command the backend runs, with the environment and timeout they run
under, and what each answer says (a job's id, rows of squeue, capacity, queue standings). Held by
:class:`~.backend.SlurmBackend`, which keeps the job's life cycle, and its observer.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from ... import proc
from ...errors import CommandTimeout, Conflict, Unavailable
from ...models.cluster import CapacityRow, ClusterCapacity
from ...models.resources import MIG_PROFILE_RE
from . import parse, script

log = logging.getLogger(__name__)

# Variables of the server's environment that must not reach sbatch (and, through --export=ALL, the job):
# a server running inside a SLURM allocation would pass its own job's settings on as the new job's.
_DROP_PREFIXES = ("SLURM_", "SBATCH_", "SALLOC_", "SRUN_", "SQUEUE_", "SINFO_", "SCONTROL_", "SCANCEL_")
_DROP_VARS = frozenset({"CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "ROCR_VISIBLE_DEVICES"})


class SlurmController:
    """SLURM's ``commands`` (by name: sbatch, squeue, ...), run through the subprocess seam within
    ``timeout`` seconds and a clean environment, with ``slurm_conf`` (empty: their default)."""

    def __init__(self, commands: Mapping[str, str], timeout: float, slurm_conf: str = "") -> None:
        self.commands = dict(commands)
        self.timeout = timeout
        self.slurm_conf = slurm_conf
        self._capacity: ClusterCapacity | None = None  # the last answer of capacity(), kept 30 s

    async def capacity(self) -> ClusterCapacity:
        """GPUs and MIG slices per gres type from ``scontrol -d -o show node`` (one call, 30 s cache)."""
        if self._capacity is not None and time.time() - (self._capacity.read_at or 0) < 30:
            return self._capacity
        res = await self.run([self.commands["scontrol"], "-d", "-o", "show", "node"], check=False)
        if res.returncode != 0:
            return ClusterCapacity(
                available=False, message=f"scontrol could not list the nodes: {res.output.strip()[-300:]}"
            )
        rows = []
        for kind, total, used, nodes in parse.node_gpus(res.stdout):
            profile = kind if MIG_PROFILE_RE.fullmatch(kind) else None
            rows.append(
                CapacityRow(
                    resource=f"gres/gpu:{kind}" if kind else "gres/gpu",
                    profile=profile,
                    gpu_model="" if profile else kind,
                    total=total,
                    used=used,
                    free=max(0, total - used),
                    nodes=nodes,
                )
            )
        self._capacity = ClusterCapacity(
            available=True,
            message="" if rows else "No node of this cluster offers GPUs (gres).",
            rows=rows,
            read_at=time.time(),
        )
        return self._capacity

    async def standings(self, slurm_ids: set[str], partitions: set[str]) -> dict[str, parse.Standing]:
        """Where these pending jobs stand among every user's, with one ``squeue`` for all of them; an
        answer that fails leaves the positions unknown (the state is already known)."""
        argv = [self.commands["squeue"], "--noheader", "--states=PENDING", "--array", "--sort=-p,i"]
        argv += [f"--partition={','.join(sorted(partitions))}"] if partitions else []
        res = await self.run([*argv, f"--format={parse.QUEUE_FORMAT}"], check=False)
        if res.returncode != 0:
            log.info("squeue for queue positions failed: %s", res.output.strip()[-300:])
            return {}
        return parse.queue_standings(res.stdout, slurm_ids)

    async def squeue(self, slurm_ids: Sequence[str]) -> dict[str, parse.SlurmJob]:
        """One ``squeue`` for the given jobs, in every state (finished ones until MinJobAge)."""
        argv = [
            self.commands["squeue"],
            "--noheader",
            "--states=all",
            "--array",  # a job array's pending tasks one per line, as `ID_TASK`, not `ID_[1-9]`
            f"--jobs={','.join(slurm_ids)}",
            f"--format={parse.SQUEUE_FORMAT}",
        ]
        res = await self.run(argv, check=False)
        if res.returncode != 0:
            if parse.is_unknown_job(res.stderr):
                return {}  # 22.05 says so when every id asked for is unknown
            raise Unavailable(f"squeue failed: {res.output or res.returncode}", reason="slurm_unavailable")
        return parse.parse_squeue(res.stdout)

    async def scontrol(self, slurm_id: str) -> parse.SlurmJob | None:
        """``scontrol -o show job ID``; None when the controller does not know the job."""
        res = await self.run([self.commands["scontrol"], "-o", "show", "job", slurm_id], check=False)
        if res.returncode != 0:
            if parse.is_unknown_job(res.stderr):
                return None
            raise Unavailable(f"scontrol failed: {res.output or res.returncode}", reason="slurm_unavailable")
        return parse.parse_scontrol_job(res.stdout)

    async def sbatch(self, path: Path, what: str) -> str:
        """Submit the script at ``path`` (the ``what`` of messages); SLURM's id for it."""
        res = await self.run(script.sbatch_argv(self.commands["sbatch"], path), check=False)
        if res.returncode != 0:
            said = parse.sbatch_error(res.stderr or res.stdout)
            if parse.is_transient(said):
                raise Unavailable(
                    f"SLURM could not be reached to submit the {what}: {said}", reason="slurm_unavailable"
                )
            raise Conflict(f"SLURM refused the {what}: {said}", reason="slurm_refused")
        try:
            return parse.parse_sbatch_parsable(res.stdout)
        except ValueError as e:
            raise Unavailable(str(e), reason="slurm_unavailable") from None

    async def sinfo(self) -> list[parse.Partition]:
        """The partitions and their per-node limits."""
        res = await self.run([self.commands["sinfo"], "--noheader", f"--format={parse.SINFO_FORMAT}"])
        return parse.parse_sinfo(res.stdout)

    async def scancel(self, *slurm_ids: str) -> None:
        slurm_id = " ".join(slurm_ids)
        res = await self.run([self.commands["scancel"], *slurm_ids], check=False)
        said = (res.stderr or res.stdout).strip()
        if res.returncode != 0 or "error" in said.lower():
            low = said.lower()
            if "already completing or completed" in low or "invalid job id" in low:
                return  # it ended on its own first
            if parse.is_transient(said):
                raise Unavailable(f"SLURM could not be reached to cancel job {slurm_id}: {said}")
            raise Conflict(
                f"scancel {slurm_id} failed: {said or res.returncode}", reason="slurm_cancel_failed"
            )

    def command_env(self) -> dict[str, str]:
        """The server's environment without SLURM's own job and input variables, plus SLURM_CONF."""
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in _DROP_VARS and (k == "SLURM_CONF" or not k.startswith(_DROP_PREFIXES))
        }
        env["SLURM_TIME_FORMAT"] = "standard"  # the timestamps parse_timestamp reads
        if self.slurm_conf:
            env["SLURM_CONF"] = self.slurm_conf
        return env

    async def run(self, argv: list[str], *, check: bool = True) -> proc.Result:
        which = next((k for k, v in self.commands.items() if v == argv[0]), Path(argv[0]).name)
        try:
            return await proc.run(argv, timeout=self.timeout, env=self.command_env(), check=check)
        except CommandTimeout as e:
            raise Unavailable(
                f"{which} did not answer within {self.timeout:g} s: is slurmctld up?",
                reason="slurm_unavailable",
            ) from e
        except Conflict as e:  # the command is not installed
            raise Unavailable(
                f"{e} (set c.SlurmBackend.{which}_command to its path)",
                reason="slurm_unavailable",
            ) from e
