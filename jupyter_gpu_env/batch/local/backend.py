"""The embedded default backend: the runner as a detached process on this machine.

Detached (its own session, output to the job's log file, no pipe to the server) so a server restart
leaves running jobs running; everything the backend needs to find them again is in the job folder
(``runner.pid``, ``status.json``). Jobs beyond the concurrency limit stay queued; :meth:`poll`, which
the service's refresh loop calls, starts them as slots free up, oldest first.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import psutil
from traitlets import Float, Int, Unicode

from ... import proc
from ...models.backends import BackendInfo, ResourceLimits
from ...models.jobs import Job
from .. import jobfiles
from ..backend import Backend, Observation, SweepSubmission

# A pid file that still says "launching" this long after the launch began means the server died
# between writing it and starting the runner.
_LAUNCH_TIMEOUT = 30.0
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

    def _gpus(self) -> int | None:
        if self.gpu_count >= 0:
            return self.gpu_count
        return None if os.path.exists("/proc/driver/nvidia/version") else 0

    def info(self) -> BackendInfo:
        gpus = self._gpus()
        return BackendInfo(
            name=self.name,
            kind=self.kind,
            limits=ResourceLimits(
                max_cpus=len(os.sched_getaffinity(0)),
                max_memory_bytes=psutil.virtual_memory().total,
                max_gpus=gpus,
                max_time_limit_seconds=self.max_time_limit or None,
            ),
            supports_gpus=bool(gpus) if gpus is not None else True,
            supports_images=False,
            enforced=["time_limit"],
            notes=[
                f"Runs at most {self.max_concurrent} jobs at a time on this machine; more wait in the queue.",
                "CPUs set the thread count of numerical libraries (OMP_NUM_THREADS and kin); cores are not pinned.",
                "Memory is recorded, not enforced: an address-space limit breaks CUDA and many Python libraries.",
                "GPUs are shared with this server: gpus=0 hides them from the job, "
                "any other number leaves the server's GPUs visible.",
            ],
        )

    # ----- contract -----

    async def submit(self, job: Job) -> Observation:
        async with self._lock:
            if len(self._running) >= self.max_concurrent or self._waiting or not self._sweep_allows(job):
                self._waiting += 1
                return self._queued_observation(self._waiting)
            return await self._start(job)

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
        async with self._lock:
            seen, others = await asyncio.to_thread(self._observe_all, jobs)
            self._running = {j.id: self.job_folder(j) for j in jobs if seen[j.id].state == "running"} | others
            self._sweep_running = {
                j.id: j.group_id for j in jobs if j.group_id and seen[j.id].state == "running"
            }
            waiting = [j for j in jobs if seen[j.id].state == "queued" and j.id not in self._cancelled]
            for job in waiting:
                if len(self._running) >= self.max_concurrent:
                    break
                if not self._sweep_allows(job):
                    continue
                seen[job.id] = await self._start(job)
            self._waiting = sum(1 for o in seen.values() if o.state == "queued")
            self._cancelled.intersection_update(seen)  # a cancel is remembered until its record says so
            # jobs arrive oldest first, the order slots are given in: that is each one's place
            place = 0
            for job in jobs:
                if seen[job.id].state == "queued":
                    place += 1
                    seen[job.id] = self._queued_observation(place)
            return seen

    async def cancel(self, job: Job) -> None:
        async with self._lock:
            self._cancelled.add(job.id)  # a queued job must never be started after this
            pid = await asyncio.to_thread(self._live_pid, self.job_folder(job), _recorded_pid(job))
            self._running.pop(job.id, None)
        if pid is None:
            return
        _signal_group(pid, signal.SIGTERM)
        task = asyncio.get_running_loop().create_task(self._kill_later(pid))
        self._killers.add(task)
        task.add_done_callback(self._killers.discard)

    async def close(self) -> None:
        # Pending SIGKILLs are dropped: a cancelled runner exits on its own within its stop grace.
        for task in list(self._killers):
            task.cancel()
        await asyncio.gather(*self._killers, return_exceptions=True)

    # ----- starting -----

    async def _start(self, job: Job) -> Observation:
        folder = self.job_folder(job)
        env = self._env(job)
        argv = [self.python or sys.executable, "-m", "jupyter_gpu_env.runner", str(folder)]

        def launch() -> Observation:
            # Claim the job first, exclusively: of two processes polling the same store (the server
            # and a CLI), only one starts it; and a server that dies before the pid is written
            # leaves a trace, not a job that a restart would start a second time.
            try:
                fd = os.open(folder / jobfiles.PID, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                return Observation(state="running")
            with os.fdopen(fd, "w") as f:
                json.dump({"pid": None, "launching_at": time.time()}, f)
            pid = proc.spawn_detached(
                argv, cwd=folder, env=env, stdout_path=folder / jobfiles.LOG, nice=self.nice
            )
            started = time.time()
            try:
                create_time = psutil.Process(pid).create_time()
            except psutil.Error:
                create_time = None  # already gone: its status.json (or its absence) tells the rest
            jobfiles.write_json_atomic(
                folder / jobfiles.PID, {"pid": pid, "create_time": create_time, "started_at": started}
            )
            return Observation(state="running", backend_job_id=str(pid), started_at=started)

        obs = await asyncio.to_thread(launch)
        self._running[job.id] = folder
        if job.group_id:
            self._sweep_running[job.id] = job.group_id
        return obs

    def _env(self, job: Job) -> dict[str, str]:
        env = dict(os.environ if self._base_env is None else self._base_env)
        env["PYTHONUNBUFFERED"] = "1"
        res = job.resources
        if res.gpus == 0:
            # The job asked for no GPU: on a shared machine it must not grab one by default.
            env["CUDA_VISIBLE_DEVICES"] = ""
        if res.cpus:
            for var in _THREAD_VARS:
                env[var] = str(res.cpus)
        return env

    def _queued_observation(self, position: int) -> Observation:
        return Observation(
            state="queued",
            pending_reason=f"Waiting for a free slot: {len(self._running)} of {self.max_concurrent} running.",
            queue_position=position,
            queue_name="local",
        )

    # ----- observing -----

    def _observe(self, job: Job) -> Observation:
        """The runner's process first, then its status: the process is what the server can check.

        The pid comes from the job's record (the server saw the launch) or, for a launch not yet
        recorded, from ``runner.pid``; either way it counts only while that pid is the runner of this
        job's folder, so a pid file the job rewrote can neither keep it "running" nor aim a cancel at
        another process.
        """
        folder = self.job_folder(job)
        if not folder.is_dir():
            return Observation(
                state="failed", reason="lost", message=f"The job folder {folder} no longer exists."
            )
        damaged: str | None = None
        try:
            info = jobfiles.read_pid(folder)
        except jobfiles.Damaged as e:
            info, damaged = None, str(e)
        pid = _recorded_pid(job) or (info.pid if info is not None else None)
        if pid is not None:
            started = _runner_started(pid, folder)
            if started is not None:
                return Observation(state="running", backend_job_id=str(pid), started_at=started)
            status = jobfiles.read_status(folder)
            if status is not None:
                return Observation.from_status(status, str(pid))
            return Observation(
                state="failed",
                reason="lost",
                message="The runner process ended without a status (killed, out of memory, or the machine restarted).",
            )
        if damaged is not None:
            return Observation(
                state="failed", reason="files_damaged", message=f"The runner cannot be found: {damaged}."
            )
        if info is None:
            return Observation(state="queued")
        since = time.time() - (info.launching_at or 0)
        if 0 <= since < _LAUNCH_TIMEOUT:
            return Observation(state="running", started_at=info.launching_at)
        return Observation(
            state="failed", reason="lost", message="The server stopped while starting the runner."
        )

    def _observe_all(self, jobs: Sequence[Job]) -> tuple[dict[str, Observation], dict[str, Path]]:
        """Observe ``jobs``; also keep the runners started since the caller's snapshot that still live."""
        seen = {j.id: self._observe(j) for j in jobs}
        others = {jid: f for jid, f in self._running.items() if jid not in seen and self._live_pid(f, None)}
        return seen, others

    def _live_pid(self, folder: Path, recorded: int | None) -> int | None:
        """The pid of this folder's runner while it runs (the record's, else runner.pid's), verified."""
        pid = recorded
        if pid is None:
            try:
                info = jobfiles.read_pid(folder)
            except jobfiles.Damaged:
                return None
            pid = info.pid if info is not None else None
        if pid is None:
            return None
        return pid if _runner_of(pid, folder) is not None else None

    async def _kill_later(self, pid: int) -> None:
        deadline = time.monotonic() + self.kill_grace
        while time.monotonic() < deadline:
            await asyncio.sleep(0.2)
            if not _pid_alive(pid):
                return
        _signal_group(pid, signal.SIGKILL)


def _recorded_pid(job: Job) -> int | None:
    """The runner's pid as the server recorded it at the launch."""
    bid = job.backend_job_id
    return int(bid) if bid is not None and bid.isdigit() else None


def _runner_started(pid: int, folder: Path) -> float | None:
    """When the runner of ``folder`` started, while ``pid`` is that runner."""
    p = _runner_of(pid, folder)
    try:
        return None if p is None else float(p.create_time())
    except psutil.Error:
        return None


def _runner_of(pid: int, folder: Path) -> psutil.Process | None:
    """The live process ``pid`` when it is the runner of ``folder``: it leads its own session and its
    command line is ``... -m jupyter_gpu_env.runner FOLDER`` (or ``nice`` about to become that).

    Or a child this server started moments ago: between its fork and its exec a child still bears the
    server's command line (and, before its ``setsid``, its session). A job's own code cannot make one:
    what it starts are the runner's descendants, not the server's children."""
    try:
        p = psutil.Process(pid)
        if p.status() == psutil.STATUS_ZOMBIE:
            return None
        if p.ppid() == os.getpid() and time.time() - p.create_time() < _LAUNCH_TIMEOUT:
            return p
        argv = p.cmdline()
        if os.getsid(pid) == pid and "jupyter_gpu_env.runner" in argv and argv[-1:] == [str(folder)]:
            return p
    except (psutil.Error, OSError):
        pass
    return None


def _pid_alive(pid: int) -> bool:
    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)  # the runner leads its own session: its group is everything it started
