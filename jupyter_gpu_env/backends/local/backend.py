"""The embedded default backend: the runner as a detached process on this machine.

Detached (its own session, output to the job's log file, no pipe to the server) so a server restart
leaves running jobs running; everything the backend needs to find them again is in the job folder
(``runner.pid``, ``status.json``). Jobs beyond the concurrency limit stay queued; :meth:`poll`, which
the service's refresh loop calls, starts them as slots free up, oldest first.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import psutil
from traitlets import Float, Int, List, Unicode

from ... import proc
from ...contracts import jobfiles
from ...errors import Conflict
from ...gpu.sources.smi import parse_smi_list
from ...models.backends import NORMAL_WORDS, BackendInfo, PriorityOffer, ResourceLimits
from ...models.cluster import ClusterCapacity
from ...models.jobs import TERMINAL_STATES, Job, JobRequest
from ..base import Backend, Observation, SweepSubmission, check_against_info
from ..dask import DaskLauncher, DaskSettings
from . import gpus as gpu_inventory
from .dask import LocalLauncher
from .observe import devices_of, live_pid, observe
from .processes import clear_ended, launch_runner, recorded_pid, signal_group, stop_within

OPPORTUNISTIC_LOCAL = (
    "Runs while GPUs are free and is stopped when a normal job needs its GPU; it is then requeued and "
    "resumes (save your state in checkpoint_dir, and load it when resumed is true)."
)
_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS")


class LocalBackend(Backend):
    """Runs jobs on the machine of the Jupyter server, detached from it: no cluster needed."""

    kind = "local"

    max_concurrent = Int(
        2,
        min=1,
        config=True,
        help="Jobs that run at once; later submissions wait in the queue and start when one ends.",
    )
    kill_grace = Float(
        10.0,
        min=0,
        config=True,
        help="Seconds between SIGTERM and SIGKILL when a job is cancelled (keep above the runner's own 5 s).",
    )
    python = Unicode(
        "",
        config=True,
        help="The Python that runs the job runner (it needs jupyter-gpu-env and papermill installed). "
        "Empty: the Python of this server.",
    )
    gpu_count = Int(
        -1,
        config=True,
        help="GPUs a job may ask for on this machine; 0 refuses GPU jobs; -1: 0 where the machine has no "
        "NVIDIA driver, else no check.",
    )
    gpus = List(
        Unicode(),
        default_value=[],
        config=True,
        help="The GPUs handed out to jobs that ask for their own (gpus: k, or a MIG profile), each "
        "as CUDA_VISIBLE_DEVICES names it: an index or a GPU-… UUID for a whole GPU, a MIG-… UUID "
        "followed by its profile for a slice ('MIG-1a2b…:1g.10gb'). Empty: every GPU nvidia-smi -L "
        "lists (a GPU with MIG as its slices).",
    )
    max_time_limit = Int(
        0,
        min=0,
        config=True,
        help="Longest time limit a job may ask for, in seconds (0: no ceiling).",
    )
    nice = Int(
        10,
        min=0,
        max=19,
        config=True,
        help="Niceness of the job runners and their kernels: batch work yields the CPU to this server and "
        "to the user's interactive kernels (0: the same priority as the server).",
    )

    def __init__(
        self, name: str | None = None, *, env: dict[str, str] | None = None, **kwargs: object
    ) -> None:
        super().__init__(name, **kwargs)
        self._base_env = env  # the runners' environment; default: this process's
        self._lock = asyncio.Lock()  # one start decision at a time, so the limit holds
        self._running: dict[str, Path] = {}  # job id -> folder of each live runner we know of
        self._waiting = 0  # queued jobs seen by the last poll that could not start
        self._cancelled: set[str] = set()
        self._killers: set[asyncio.Task[None]] = set()
        self._sweep_limits: dict[
            str, int
        ] = {}  # sweep id -> runs at once (read from job.json after a restart)
        self._sweep_running: dict[str, str] = {}  # job id -> sweep id, of the live runners of sweeps
        # The GPUs handed out (None until nvidia-smi has been asked), and which each running job holds.
        self._inventory = gpu_inventory.parse_inventory(self.gpus) if self.gpus else None
        self._held: dict[str, list[str]] = {}
        self._preempting: dict[str, int] = {}  # job id -> pid of an opportunistic runner being stopped

    def _gpus(self) -> int | None:
        if self.gpu_count >= 0:
            return self.gpu_count
        if self._inventory:
            return sum(1 for g in self._inventory if g.profile is None)
        return None if os.path.exists("/proc/driver/nvidia/version") else 0

    async def _gpu_inventory(self) -> list[gpu_inventory.LocalGpu]:
        """The GPUs to hand out: configured, or what nvidia-smi -L lists (asked once)."""
        if self._inventory is None:
            found: list[gpu_inventory.LocalGpu] = []
            if await asyncio.to_thread(os.path.exists, "/proc/driver/nvidia/version"):
                result = await proc.run(["nvidia-smi", "-L"], timeout=20, check=False)
                if result.returncode == 0:
                    found = gpu_inventory.from_listing(parse_smi_list(result.stdout))
            self._inventory = found
        return self._inventory

    def validate(self, request: JobRequest) -> None:
        check_against_info(self.info(), request)
        res = request.resources.normalized()
        if self._inventory and gpu_inventory.wants_gpus(res):
            why = gpu_inventory.can_ever_fit(self._inventory, res)
            if why:
                raise Conflict(
                    f"The '{self.name}' backend cannot run it: {why}.", reason="resources_unavailable"
                )

    def info(self) -> BackendInfo:
        gpus = self._gpus()
        inventory = self._inventory or []
        priorities = [PriorityOffer(name="normal", description=NORMAL_WORDS)]
        if inventory:
            priorities.append(PriorityOffer(name="opportunistic", description=OPPORTUNISTIC_LOCAL))
        return BackendInfo(
            name=self.name,
            kind=self.kind,
            limits=ResourceLimits(
                max_cpus=len(os.sched_getaffinity(0)),
                max_memory_bytes=psutil.virtual_memory().total,
                max_gpus=gpus,
                max_time_limit_seconds=self.max_time_limit or None,
            ),
            supports_gpus=bool(gpus or inventory) if gpus is not None else True,
            mig_profiles=sorted({g.profile for g in inventory if g.profile}),
            priorities=priorities,
            supports_images=False,
            enforced=["time_limit"],
            notes=[
                f"Runs at most {self.max_concurrent} jobs at a time on this machine; more wait in the queue.",
                "CPUs set the thread count of numerical libraries (OMP_NUM_THREADS and kin); cores are not pinned.",
                "Memory is recorded, not enforced: an address-space limit breaks CUDA and many Python libraries.",
                "A job that asks for GPUs (a number, or a MIG profile) gets its own and waits while none "
                "are free; one that asks nothing of GPUs shares this server's; gpus=0 hides them.",
            ],
        )

    # ----- contract -----

    async def submit(self, job: Job) -> Observation:
        devices = await self._devices_for(job)
        async with self._lock:
            if (
                len(self._running) >= self.max_concurrent
                or self._waiting
                or not self._sweep_allows(job)
                or devices is None
            ):
                self._waiting += 1
                return self._queued_observation(job, self._waiting)
            return await self._start(job, devices)

    async def _devices_for(self, job: Job) -> list[str] | None:
        """The GPUs to give ``job`` now ([] when it asks for none of its own), None while none are free;
        Conflict when this machine can never give what it asks."""
        res = job.resources
        if not gpu_inventory.wants_gpus(res):
            return []
        inventory = await self._gpu_inventory()
        if not inventory:
            return []  # no GPU to hand out: the job sees what the machine has, as before
        why = gpu_inventory.can_ever_fit(inventory, res)
        if why:
            raise Conflict(f"The '{self.name}' backend cannot run it: {why}.", reason="resources_unavailable")
        return gpu_inventory.allocate(inventory, self._taken(), res)

    def _taken(self) -> set[str]:
        return gpu_inventory.taken_by(self._held, self._inventory or [])

    async def capacity(self) -> ClusterCapacity:
        inventory = await self._gpu_inventory()
        if not inventory:
            return ClusterCapacity(available=False, message="This machine has no GPU to hand out.")
        return ClusterCapacity(
            available=True, rows=gpu_inventory.capacity_rows(inventory, self._taken()), read_at=time.time()
        )

    async def submit_sweep(self, jobs: Sequence[Job], max_concurrent: int) -> SweepSubmission:
        """The runs go through the same queue as single jobs, at most ``max_concurrent`` of them at once."""
        for job in jobs[:1]:
            if job.group_id:
                self._sweep_limits[job.group_id] = max_concurrent
        return await super().submit_sweep(jobs, max_concurrent)

    def _sweep_allows(self, job: Job) -> bool:
        if job.group_id is None:
            return True
        limit = self._sweep_limits.get(job.group_id)
        if limit is None:
            # After a restart, from the job.json the server wrote; the job may have changed it, so
            # it is believed only within this backend's own limit.
            spec = jobfiles.read_json(self.job_folder(job) / jobfiles.JOB_JSON) or {}
            group = spec.get("group")
            value = group.get("max_concurrent") if isinstance(group, dict) else None
            limit = (
                value if isinstance(value, int) and 1 <= value <= self.max_concurrent else self.max_concurrent
            )
            self._sweep_limits[job.group_id] = limit
        return sum(1 for g in self._sweep_running.values() if g == job.group_id) < limit

    async def poll(self, jobs: Sequence[Job]) -> dict[str, Observation]:
        if any(gpu_inventory.wants_gpus(j.resources) for j in jobs):
            await self._gpu_inventory()
        async with self._lock:
            seen, others = await asyncio.to_thread(self._observe_all, jobs)
            self._running = {j.id: self.job_folder(j) for j in jobs if seen[j.id].state == "running"} | others
            self._sweep_running = {
                j.id: j.group_id for j in jobs if j.group_id and seen[j.id].state == "running"
            }
            self._held = {jid: d for jid, d in self._held.items() if jid in self._running}
            for job in jobs:  # after a restart: what the running ones were given, as their runners were
                if job.id in self._running and job.id not in self._held:
                    self._held[job.id] = (
                        await asyncio.to_thread(devices_of, self.job_folder(job), recorded_pid(job))
                        if gpu_inventory.wants_gpus(job.resources)
                        else []  # it sees the machine's GPUs, shared, or none: it holds none of them
                    )
            self._preempting = {j: p for j, p in self._preempting.items() if j in self._running}
            # Normal jobs first, then opportunistic ones, each oldest first: opportunistic work yields.
            waiting = sorted(
                (j for j in jobs if seen[j.id].state == "queued" and j.id not in self._cancelled),
                key=lambda j: j.priority == "opportunistic",
            )
            # A GPU job that must wait keeps later jobs wanting the same kind (whole GPUs, a profile) from
            # passing it: a 2-GPU job is not starved by 1-GPU jobs taking each GPU that frees.
            blocked: set[str] = set()
            for job in waiting:
                if len(self._running) >= self.max_concurrent:
                    break
                if not self._sweep_allows(job):
                    continue
                kind = job.resources.mig_profile or "whole"
                wants = gpu_inventory.wants_gpus(job.resources) and bool(self._inventory)
                devices = None if wants and kind in blocked else self._allocate(job)
                if devices is None:
                    blocked.add(kind)
                    if job.priority == "normal":
                        self._preempt_for(job, [j for j in jobs if j.id in self._running])
                    continue
                seen[job.id] = await self._start(job, devices)
            self._waiting = sum(1 for o in seen.values() if o.state == "queued")
            self._cancelled.intersection_update(seen)  # a cancel is remembered until its record says so
            place = 0
            for job in waiting:
                if seen[job.id].state == "queued":
                    place += 1
                    seen[job.id] = self._queued_observation(job, place, seen[job.id].requeued)
            return seen

    def _allocate(self, job: Job) -> list[str] | None:
        if not gpu_inventory.wants_gpus(job.resources) or not self._inventory:
            return []
        return gpu_inventory.allocate(self._inventory, self._taken(), job.resources)

    def _preempt_for(self, job: Job, running: Sequence[Job]) -> None:
        """Stop the opportunistic jobs whose GPUs ``job`` waits for (newest first, no more than it needs).
        Their runners take the signal for a preemption (no cancel was asked): each records its attempt
        and ends, and its job is queued again behind the normal ones."""
        candidates = [
            j.id
            for j in sorted(running, key=lambda j: j.created_at, reverse=True)
            if j.priority == "opportunistic" and j.id not in self._preempting
        ]
        stopping = set(self._preempting_devices())
        victims = gpu_inventory.to_preempt(
            self._inventory or [], self._held, self._taken() - stopping, candidates, job.resources
        )
        for victim in (j for j in running if j.id in victims):
            pid = live_pid(self.job_folder(victim), recorded_pid(victim))
            if pid is not None:
                signal_group(pid, signal.SIGTERM)
                self._preempting[victim.id] = pid
                self._kill_after_grace(pid)

    def _preempting_devices(self) -> list[str]:
        return [d for jid in self._preempting for d in self._held.get(jid, ())]

    async def cancel(self, job: Job) -> None:
        async with self._lock:
            self._cancelled.add(job.id)  # a queued job must never be started after this
            pid = await asyncio.to_thread(live_pid, self.job_folder(job), recorded_pid(job))
            self._running.pop(job.id, None)
        if pid is None:
            return
        signal_group(pid, signal.SIGTERM)
        self._kill_after_grace(pid, self.job_folder(job))

    async def look(self, jobs: Sequence[Job]) -> dict[str, Observation]:
        """How the jobs stand, starting none: a cancel looks first, and must not start what it stops."""
        async with self._lock:
            seen, _ = await asyncio.to_thread(self._observe_all, jobs)
        return seen

    def _kill_after_grace(self, pid: int, folder: Path | None = None) -> None:
        task = asyncio.get_running_loop().create_task(stop_within(pid, self.kill_grace, folder))
        self._killers.add(task)
        task.add_done_callback(self._killers.discard)

    def dask_launcher(self, settings: DaskSettings) -> DaskLauncher:
        return LocalLauncher(self, settings)

    async def close(self) -> None:
        # Pending SIGKILLs are dropped: a cancelled runner exits on its own within its stop grace.
        for task in list(self._killers):
            task.cancel()
        await asyncio.gather(*self._killers, return_exceptions=True)

    # ----- starting -----

    async def _start(self, job: Job, devices: list[str]) -> Observation:
        folder = self.job_folder(job)
        env = self._env(job, devices)
        argv = [self.python or sys.executable, "-m", "jupyter_gpu_env.runner", str(folder)]

        obs = await asyncio.to_thread(launch_runner, folder, argv, env, self.nice, devices)
        self._running[job.id] = folder
        self._held[job.id] = devices
        if job.group_id:
            self._sweep_running[job.id] = job.group_id
        return obs

    def _env(self, job: Job, devices: list[str]) -> dict[str, str]:
        env = dict(os.environ if self._base_env is None else self._base_env)
        env["PYTHONUNBUFFERED"] = "1"
        res = job.resources
        if devices:
            env["CUDA_VISIBLE_DEVICES"] = ",".join(devices)
        elif res.gpus == 0:
            # The job asked for no GPU: on a shared machine it must not grab one by default.
            env["CUDA_VISIBLE_DEVICES"] = ""
        # The record's limit (0: none), which the runner takes over its job.json's.
        env[jobfiles.TIME_LIMIT_ENV] = str(int(res.time_limit_seconds or 0))
        if res.cpus:
            for var in _THREAD_VARS:
                env[var] = str(res.cpus)
        return env

    def _queued_observation(self, job: Job, position: int, requeued: str | None = None) -> Observation:
        res = job.resources
        limit = self._sweep_limits.get(job.group_id or "")
        if len(self._running) < self.max_concurrent and not self._sweep_allows(job):  # the sweep's own limit
            reason = f"Waiting for another run of its sweep to end: the sweep runs at most {limit} at once."
        elif len(self._running) < self.max_concurrent and self._inventory and gpu_inventory.wants_gpus(res):
            reason = gpu_inventory.waiting_words(self._inventory, self._taken(), res)
        else:
            reason = f"Waiting for a free slot: {len(self._running)} of {self.max_concurrent} running."
        if job.priority == "opportunistic":
            reason += " Opportunistic: it starts after the normal jobs waiting."
        return Observation(
            state="queued",
            pending_reason=reason,
            queue_position=position,
            queue_name="local",
            requeued=requeued,
        )

    # ----- observing -----

    def _observe_all(self, jobs: Sequence[Job]) -> tuple[dict[str, Observation], dict[str, Path]]:
        """Observe ``jobs``; also keep the runners started since the caller's snapshot that still live."""
        seen = {j.id: observe(j, self.job_folder(j)) for j in jobs}
        for job in jobs:  # its end recorded with the pid of its runner: no runner.pid says it lives
            if seen[job.id].state in TERMINAL_STATES and recorded_pid(job) is not None:
                clear_ended(self.job_folder(job))
        others = {jid: f for jid, f in self._running.items() if jid not in seen and live_pid(f, None)}
        return seen, others
