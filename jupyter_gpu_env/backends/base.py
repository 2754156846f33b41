"""The backend contract, how backends are found, and the one job state machine every backend and the
store obey.

A backend only translates: it starts the runner somewhere (a detached process, an sbatch script, a
Kubernetes Job), reports what it observes, and stops it. Records, validation and the job folder are
the service's; the runner inside the job folder is the same everywhere.

A backend is a traitlets ``Configurable``: its options are its own traits (``c.SlurmBackend.partitions``),
declared once, with their help. Backends are found by name in the entry-point group
:data:`ENTRY_POINTS`, so a site adds one (say, HTCondor) by installing a package that declares it::

    [project.entry-points."jupyter_gpu_env.backends"]
    htcondor = "site_htcondor:HTCondorBackend"

and naming it in ``c.GpuEnvApp.backends``; nothing in this package changes.
"""

from __future__ import annotations

from abc import ABCMeta, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any

from traitlets import Float
from traitlets.config import Configurable, LoggingConfigurable
from traitlets.traitlets import MetaHasTraits

from ..contracts.schedules.plan import Armed, SchedulePlan
from ..errors import Conflict, NotFound
from ..models.backends import BackendInfo
from ..models.cluster import ClusterCapacity
from ..models.jobs import TERMINAL_STATES, Job, JobRequest, JobState, LogChunk

if TYPE_CHECKING:  # the Dask contract imports the cluster spec; a backend without Dask needs neither
    from .dask import DaskLauncher, DaskSettings

ENTRY_POINTS = "jupyter_gpu_env.backends"

# queued -> running -> succeeded | failed | cancelled; queued -> failed | cancelled; running -> queued
# only when the backend requeued an opportunistic job it stopped for other work (the tracker checks).
# Nothing leaves a terminal state: a late observation (a runner's status arriving after a cancel) must
# not rewrite history.
TRANSITIONS: Mapping[str, frozenset[str]] = {
    "queued": frozenset({"running", "failed", "cancelled"}),
    "running": frozenset({"queued", "succeeded", "failed", "cancelled"}),
    "succeeded": frozenset(),
    "failed": frozenset(),
    "cancelled": frozenset(),
}


# A record the backend never acknowledged (no backend job id) this many seconds after it was made: the
# server stopped between saving it and the batch system accepting the job, so it never ran.
UNSUBMITTED_LOST = 600.0


class IllegalTransition(Conflict):
    reason = "illegal_transition"


def check_transition(current: str, new: str) -> None:
    """Raise :class:`IllegalTransition` unless ``current -> new`` is allowed."""
    if new not in TRANSITIONS:
        raise IllegalTransition(f"'{new}' is not a job state")
    if new not in TRANSITIONS.get(current, frozenset()):
        if current in TERMINAL_STATES:
            raise IllegalTransition(f"The job has already {current}; its state is final.")
        raise IllegalTransition(f"A job cannot go from {current} to {new}.")


def is_terminal(state: str) -> bool:
    return state in TERMINAL_STATES


@dataclass(frozen=True)
class Observation:
    """What a backend saw of one job. Fields left None are unknown and leave the record alone."""

    state: JobState
    reason: str | None = None
    message: str | None = None
    pending_reason: str | None = None
    backend_job_id: str | None = None
    started_at: float | None = None
    finished_at: float | None = None
    exit_code: int | None = None
    # Where a queued job stands: 1 = next in ``queue_name``; when the scheduler estimates its start.
    queue_position: int | None = None
    queue_name: str | None = None
    estimated_start: float | None = None
    # With state ``queued`` for a job that was running: the backend stopped it and queued it again
    # (``preempted``, ``evicted``, ``node_lost``). Only believed of an opportunistic job.
    requeued: str | None = None
    # Where it runs or ran, as the backend saw it: SLURM's node name, a pod's IP, 127.0.0.1 here.
    host: str | None = None

    @classmethod
    def from_status(cls, status: Mapping[str, Any], backend_job_id: str | None = None) -> Observation:
        """What the runner's ``status.json`` says (the final word on how the notebook ended)."""
        return cls(
            state=status["state"],
            reason=status.get("reason"),
            message=status.get("message"),
            exit_code=status.get("exit_code"),
            started_at=status.get("started_at"),
            finished_at=status.get("finished_at"),
            backend_job_id=backend_job_id,
        )


@dataclass(frozen=True)
class SweepSubmission:
    """What a backend made of a sweep: its one scheduler object (None: runs submitted one by one) and
    each run's first observation."""

    backend_job_id: str | None
    runs: dict[str, Observation]


@dataclass(frozen=True)
class Dependency:
    """What a held job waits for: the backend's own ids of other jobs (a job, a whole job array), to
    end as ``when`` asks: ``succeeded`` (all of them), ``failed`` (any of them), ``always``."""

    backend_job_ids: tuple[str, ...]
    when: str = "succeeded"


class _ConfigurableABC(ABCMeta, MetaHasTraits):
    """Abstract methods and traitlets together."""


class Backend(LoggingConfigurable, metaclass=_ConfigurableABC):
    """A place jobs run. Subclasses set ``kind``, declare their options as traits and implement the four
    abstract methods; construct with ``Backend(name, parent=app)`` (or trait values as keywords)."""

    kind: str = "abstract"
    # True: the backend keeps schedules itself (a SLURM chain, a CronJob), so they run with no server.
    keeps_schedules: bool = False
    # True: the backend holds a job until others end (submit_after), so a pipeline goes on with no server.
    holds_dependencies: bool = False

    def __init__(self, name: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.name = name or self.kind
        # Where a job's folder is; the service sets this when it takes the backend.
        self.job_folder: Callable[[Job], Path] = _unbound

    @abstractmethod
    def info(self) -> BackendInfo:
        """What this backend offers (queues, limits, MIG profiles, images); cheap, may be cached."""

    def validate(self, request: JobRequest) -> None:
        """Refuse what this backend cannot run (NotFound for an unknown queue, Conflict beyond its limits).

        Default: check ``info()``."""
        check_against_info(self.info(), request)

    @abstractmethod
    async def submit(self, job: Job) -> Observation:
        """Hand the job (its folder is complete) to the backend; return its first observed state.

        ``queued`` with no ``backend_job_id`` means accepted but held (a full local slot); the next
        :meth:`poll` may start it. Raise a :class:`GpuEnvError` when the backend refuses the job.
        """

    @abstractmethod
    async def poll(self, jobs: Sequence[Job]) -> dict[str, Observation]:
        """Observe every given active job with ONE query (one squeue, one list call), not one per job.

        Jobs missing from the result are left as they are.
        """

    async def look(self, jobs: Sequence[Job]) -> dict[str, Observation]:
        """:meth:`poll`, doing nothing else: what a cancel acts on, looked at first. Default: poll;
        a backend whose poll also starts queued jobs (the local queue) starts none here."""
        return await self.poll(jobs)

    @abstractmethod
    async def cancel(self, job: Job) -> None:
        """Ask the backend to stop the job; return without waiting for it to be gone."""

    async def forget(self, job: Job) -> None:
        """The ended job's record is being deleted: remove what the backend still keeps of it (a
        finished Kubernetes Job and its pods). Nothing, by default: a SLURM or local job leaves nothing."""

    async def submit_after(self, job: Job, after: Dependency) -> Observation:
        """Hand the job over to start only once the backend's jobs ``after`` names have ended as it asks,
        as the scheduler's own dependency (SLURM's ``--dependency=afterok:…``), so that it starts with no
        Jupyter server. Only for backends that set ``holds_dependencies``; the others are handed a job
        once its parents have ended (by the server, or by a parent's runner: :meth:`stage`)."""
        raise Conflict(
            f"The '{self.name}' backend cannot hold a job until others have ended.",
            reason="dependencies_unsupported",
        )

    async def submit_sweep_after(
        self, jobs: Sequence[Job], max_concurrent: int, after: Dependency
    ) -> SweepSubmission:
        """:meth:`submit_sweep`, every run held as :meth:`submit_after` holds one job."""
        raise Conflict(
            f"The '{self.name}' backend cannot hold a sweep until other jobs have ended.",
            reason="dependencies_unsupported",
        )

    async def stage(self, jobs: Sequence[Job]) -> None:
        """Write beside each held job's job.json what lets it be started later with no Jupyter server
        (a Kubernetes manifest, which a parent's runner creates when it ends). Default: nothing; the
        server hands the job over when its parents have ended."""

    async def submit_sweep(self, jobs: Sequence[Job], max_concurrent: int) -> SweepSubmission:
        """Hand a sweep's runs over (their folders are complete), at most ``max_concurrent`` running at
        once: as one object of the scheduler where it has one (a SLURM array, an Indexed Job), whose id
        is returned with each run's first observed state. Default: each run submitted on its own, so
        only the backend's own limits apply. Raise to refuse all of them: the caller removes them."""
        return SweepSubmission(None, {job.id: await self.submit(job) for job in jobs})

    async def cancel_sweep(self, jobs: Sequence[Job]) -> None:
        """Stop these runs of one sweep. Default: one by one."""
        for job in jobs:
            await self.cancel(job)

    async def capacity(self) -> ClusterCapacity:
        """Free and total GPUs and MIG slices by profile and model, so a user picks what can start now.
        Default: not known here."""
        return ClusterCapacity(
            available=False, message=f"The '{self.name}' backend does not report free GPUs."
        )

    async def logs(self, job: Job, offset: int, limit: int) -> LogChunk | None:
        """The log from elsewhere (pod logs); None means read ``log.txt`` in the job folder."""
        return None

    async def arm_schedule(self, plan: SchedulePlan) -> Armed:
        """Hold ``plan`` so that its runs start with no Jupyter server: in place of whatever this
        backend held for it before (never two waiting jobs for one schedule). An inactive plan, or one
        with no run due, starts nothing (a backend may keep it suspended, as a CronJob is). Only for
        backends that set ``keeps_schedules``."""
        raise Conflict(
            f"The '{self.name}' backend keeps no schedules; the server runs them.",
            reason="schedules_unsupported",
        )

    async def disarm_schedule(self, plan: SchedulePlan) -> None:
        """Stop holding ``plan`` (a pause, a delete); runs already started go on."""

    async def schedules_armed(self, plans: Sequence[SchedulePlan]) -> dict[str, Armed]:
        """How this backend holds each of ``plans`` now, with ONE query; a plan left out is unknown."""
        return {}

    def dask_launcher(self, settings: DaskSettings) -> DaskLauncher:
        """How this backend runs Dask clusters (:mod:`.dask`): a backend that can returns its launcher,
        so one installed by entry point offers clusters as the built-in ones do."""
        raise Conflict(
            f"The '{self.name}' backend cannot run Dask clusters; the local, SLURM and Kubernetes ones can.",
            reason="dask_unsupported",
        )

    async def close(self) -> None:
        """Release what the backend holds; running jobs keep running."""


class RemoteBackend(Backend):
    """A backend whose jobs run elsewhere and write their folders on storage this server shares (SLURM,
    Kubernetes): the options such a backend has, declared once for all of them."""

    status_grace = Float(
        60.0,
        min=0.0,
        config=True,
        help="Seconds to wait, after the batch system says a job ended, for the runner's status.json to "
        "appear in the shared job folder (NFS caches attributes) before the job is recorded from the batch "
        "system's own verdict alone.",
    )


def _unbound(job: Job) -> Path:
    raise RuntimeError("this backend has not been given to a JobService yet")


def backend_classes() -> dict[str, type[Backend]]:
    """Every installed backend that can be loaded, by name, from the entry-point group (ours and any
    site's). One whose dependencies are missing (the Kubernetes client) is left out."""
    found = {}
    for ep in entry_points(group=ENTRY_POINTS):
        try:
            cls = _load(ep)
        except ValueError:
            continue
        found[ep.name] = cls
    return found


def _load(ep: Any) -> type[Backend]:
    try:
        cls = ep.load()
    except ImportError as e:
        extra = (
            f" (pip install 'jupyter-gpu-env[{ep.name}]')" if ep.value.startswith("jupyter_gpu_env.") else ""
        )
        raise ValueError(f"The '{ep.name}' backend cannot be loaded: {e}{extra}.") from e
    if not (isinstance(cls, type) and issubclass(cls, Backend)):
        raise ValueError(f"The '{ep.name}' entry point ({ep.value}) is not a jupyter_gpu_env Backend.")
    return cls


class InstalledBackends:
    """``GpuEnvApp.classes``: every installed backend class, looked up when asked, not at import (that
    would import the Kubernetes client into every server), so that their options appear in
    ``--help-all``, the CLI and docs/configuration.md."""

    def __init__(self, *others: type[Configurable]) -> None:
        self.others = list(others)  # the app's other configurable parts, shown with the backends

    def __get__(self, obj: object, owner: type | None = None) -> list[type[Configurable]]:
        if obj is not None and "classes" in vars(obj):
            classes: list[type[Configurable]] = vars(obj)["classes"]
            return classes
        return [*self.others, *backend_classes().values()]

    def __set__(self, obj: object, value: list[type[Configurable]]) -> None:
        vars(obj)["classes"] = value  # traitlets' Application adds itself in front


def create_backends(names: Sequence[str], parent: Any) -> dict[str, Backend]:
    """The named backends, configured from ``parent``'s config; ValueError naming what is unknown or
    cannot be loaded, or what a backend refuses in its options."""
    eps = {ep.name: ep for ep in entry_points(group=ENTRY_POINTS)}
    unknown = [n for n in names if n not in eps]
    if unknown:
        raise ValueError(f"c.GpuEnvApp.backends names unknown backends {unknown}; installed: {sorted(eps)}.")
    return {name: _load(eps[name])(name, parent=parent) for name in names}


def check_against_info(info: BackendInfo, request: JobRequest) -> None:
    """Compare a request with what a backend says it offers, naming the limit that was passed.

    An unknown queue is a 404; resources beyond the backend's limits a 409 (the request is well formed,
    the backend cannot take it).
    """
    res = request.resources.normalized()
    lim = info.limits
    where = f"the '{info.name}' backend"
    priorities = [p.name for p in info.priorities]
    if request.priority not in priorities:
        raise Conflict(
            f"Priority '{request.priority}' is not offered by {where} (priorities: {', '.join(priorities)}); "
            "send it as 'normal', or ask your administrator to configure opportunistic jobs.",
            reason="priority_unavailable",
        )
    if request.queue is not None and request.queue not in info.queues:
        offered = ", ".join(info.queues) if info.queues else "none"
        raise NotFound(
            f"Queue '{request.queue}' is not offered by {where} (queues: {offered}).", reason="unknown_queue"
        )
    problems: list[str] = []
    if _beyond(res.cpus, lim.max_cpus):
        problems.append(f"{where} offers at most {lim.max_cpus} CPUs, not {res.cpus}")
    if _beyond(res.memory_bytes, lim.max_memory_bytes):
        problems.append(f"{where} offers at most {(lim.max_memory_bytes or 0) / (1 << 30):.1f} GiB of memory")
    if res.gpus:
        if not info.supports_gpus:
            problems.append(f"{where} offers no GPUs")
        elif _beyond(res.gpus, lim.max_gpus):
            problems.append(f"{where} offers at most {lim.max_gpus} GPUs, not {res.gpus}")
    if res.mig_profile is not None and res.mig_profile not in info.mig_profiles:
        offered = ", ".join(info.mig_profiles) if info.mig_profiles else "none"
        problems.append(f"MIG profile '{res.mig_profile}' is not offered by {where} (profiles: {offered})")
    if _beyond(res.time_limit_seconds, lim.max_time_limit_seconds):
        problems.append(f"{where} allows at most {(lim.max_time_limit_seconds or 0) // 60} minutes per job")
    if problems:
        text = "; ".join(problems)
        raise Conflict(text[0].upper() + text[1:] + ".", reason="resources_unavailable")


def _beyond(asked: float | None, most: float | None) -> bool:
    """Is what was asked for more than the limit? Either unknown (None) is within it."""
    return asked is not None and most is not None and asked > most
