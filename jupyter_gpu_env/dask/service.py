"""``DaskService``: Dask clusters started on a backend in a user's environment, found again after a
restart, scaled, shut down; the ``dask`` loop follows them and puts their workers' time in the ledger.

A cluster does not live here: its scheduler is a batch job (or, locally, a detached process) whose keeper
keeps the workers and shuts everything down when unused. The server only starts it, writes what it is
asked (``scale.json``, ``stop``) into its folder, and reads what the keeper writes there.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import logging
import re
import ssl
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..backends.dask import ClusterRef, DaskLauncher, DaskSettings, Placement, SchedulerSeen
from ..contracts.dask import folder
from ..contracts.dask.spec import LOG, ClusterSpec, ScaleFile, WorkerShape, lifetime_for, worker_args
from ..contracts.dask.state import KeeperState, log_tail, read_state_or_damage
from ..errors import Conflict, GpuEnvError, NotFound
from ..jobs.service import JobService
from ..models.automation.dask import DaskCluster, DaskClusterList, DaskClusterRequest, DaskScaleRequest
from ..models.resources import parse_time_limit
from ..system.trees import remove_tree
from . import envcheck
from .records import ClusterRecord, DaskRecords, WorkerSpan
from .view import Standing, cluster, standing


@dataclass(frozen=True)
class DashboardTarget:
    """Where a cluster's dashboard listens, and the TLS context to reach it with (None: plain HTTP)."""

    host: str
    port: int
    tls: ssl.SSLContext | None


log = logging.getLogger(__name__)

TARGET_TTL = 5.0  # seconds a dashboard's host and port are believed without asking the backend again

Observed = tuple[ClusterRecord, Standing, SchedulerSeen | None, KeeperState | None]


class DaskService:
    """Clusters under ``folder``; their records in ``jobs``' store; backends from ``jobs``' intake."""

    def __init__(
        self,
        jobs: JobService,
        root: Path,
        settings: DaskSettings,
        *,
        environments: Callable[[str], str | None],
        kernel_python: Callable[[str], str | None],
        images: Callable[[str], str | None],
        environment_at: Callable[[str], str | None] = lambda prefix: None,
        package_source: envcheck.Source | None = None,
        base_url: str = "/",
    ) -> None:
        self.jobs = jobs
        self.records = DaskRecords(jobs.store.db)  # the clusters' part of the jobs' database
        self.root = root
        self.settings = settings
        self.environments = environments
        self.kernel_python = kernel_python
        self.images = images
        self.environment_at = environment_at  # an environment's name from its prefix (for a kernel's)
        self.package_source = package_source  # conda or PyPI, for a package a refusal asks to add
        self.base_url = base_url
        self._launchers: dict[str, DaskLauncher] = {}
        self._stopping: dict[str, asyncio.Task[None]] = {}
        self._targets: dict[str, tuple[float, DashboardTarget]] = {}  # id -> (when, the dashboard's target)

    def launcher(self, backend: str) -> DaskLauncher:
        if backend not in self._launchers:
            self._launchers[backend] = self.jobs.intake.backend(backend).dask_launcher(self.settings)
        return self._launchers[backend]

    # ----- verbs -----

    async def create(self, request: DaskClusterRequest) -> DaskCluster:
        """Checked first (backend, environment, resources), then the folder built aside, the scheduler
        started, and only then recorded: a cluster that could not start leaves nothing behind."""
        launcher = self.launcher(request.backend)
        prefix, shown, image = await asyncio.to_thread(self._runtime, request)
        gpus = bool(request.resources.gpus or request.resources.mig_profile)
        try:
            ready = await asyncio.to_thread(envcheck.check, prefix, shown, gpus=gpus) if prefix else None
        except Conflict as e:
            await envcheck.place(e, self.package_source)
            raise
        res = request.resources.normalized()
        given = request.time_limit
        walltime = parse_time_limit(given) if given is not None else self.settings.worker_walltime_seconds
        self._check_counts(request.workers, request.adapt.model_dump() if request.adapt else None)
        placement = Placement(request.queue, res.cpus, res.memory_bytes, res.gpus, res.mig_profile, image)
        launcher.check(placement, walltime)

        cluster_id = uuid.uuid4().hex[:12]
        name = request.name or shown or request.kernel or (request.image or "dask")
        where = self.root / f"{_slug(name)}-{cluster_id}"
        threads = request.threads_per_worker or res.cpus or 1
        shape = WorkerShape(
            threads=threads,
            memory_bytes=res.memory_bytes,
            cpus=res.cpus,
            gpu_units=res.gpu_units(),
            cuda=bool(ready and ready.dask_cuda and gpus),
        )
        life = lifetime_for(walltime)
        spec = ClusterSpec(
            id=cluster_id,
            name=name,
            backend=request.backend,
            created_at=time.time(),
            folder=str(where),
            python=ready.python if ready else None,
            workers=(1 if request.workers is None else request.workers) if request.adapt is None else None,
            adapt=request.adapt.model_dump() if request.adapt else None,
            worker=shape,
            walltime_seconds=walltime,
            lifetime=life,
            idle_timeout_seconds=self.settings.idle_timeout_seconds,
            connect_timeout_seconds=self.settings.connect_timeout_seconds,
            worker_args=worker_args(where, shape, life, launcher.network),
            pool={},
        )

        spec.together = await launcher.together(spec, placement)  # one allocation, where it fits
        apart: Literal["processes", "separate_jobs"] = (
            "processes" if launcher.name == "local" else "separate_jobs"
        )

        def pool(tmp: Path) -> None:
            spec.pool = launcher.pool(spec, placement, tmp)

        # the certificate outlives any scheduler this server starts (a local one has no walltime)
        valid = max(self.settings.scheduler_walltime_seconds, folder.VALID_SECONDS)
        await asyncio.to_thread(folder.build, where, spec, pool, valid_seconds=valid)
        record = ClusterRecord(
            id=cluster_id,
            name=name,
            backend=request.backend,
            folder=str(where),
            created_at=spec.created_at,
            message="Starting the scheduler.",
            environment=shown,
            kernel=request.kernel,
            image=request.image,
            queue=request.queue,
            resources=res,
            threads_per_worker=threads,
            walltime_seconds=walltime,
            lifetime_seconds=life.lifetime,
            idle_timeout_seconds=self.settings.idle_timeout_seconds,
            workers=spec.workers,
            adapt=spec.adapt,
            together=spec.together,
            layout="one_allocation" if spec.together else apart,
            request=request.model_dump(mode="json", exclude_none=True),
            tls=True,
            connect_module=bool(ready and ready.connect_module),
        )
        try:
            started = await launcher.start(spec, placement, where)
        except BaseException:
            await asyncio.to_thread(_remove, where)
            raise
        record.handle = started.handle
        try:
            await self.records.insert(record)
        except BaseException:
            await launcher.stop(self._ref(record))
            raise
        return (await self._observe([record]))[0]

    async def list(self, limit: int = 50, offset: int = 0) -> DaskClusterList:
        records, total = await self.records.page(limit, offset)
        items = await self._observe(records)
        nxt = offset + len(items)
        return DaskClusterList(
            items=items, total=total, offset=offset, limit=limit, next_offset=nxt if nxt < total else None
        )

    async def get(self, cluster_id: str) -> DaskCluster:
        return (await self._observe([await self.records.get(cluster_id)]))[0]

    async def scale(self, cluster_id: str, request: DaskScaleRequest) -> DaskCluster:
        record = await self.records.get(cluster_id)
        if record.final or record.state == "stopping":
            raise Conflict(
                f"Dask cluster '{record.name}' is {record.state}; start a new one.", reason="cluster_ended"
            )
        adapt = request.adapt.model_dump() if request.adapt else None
        self._check_counts(request.workers, adapt)
        record.generation += 1
        record.workers, record.adapt = (None, adapt) if adapt else (request.workers, None)
        scale = ScaleFile(generation=record.generation, workers=record.workers, adapt=record.adapt)
        await asyncio.to_thread(folder.write_scale, Path(record.folder), scale)
        await self.records.update(record)
        return await self.get(cluster_id)

    async def stop(self, cluster_id: str) -> DaskCluster:
        """Ask the keeper to shut down, then make sure nothing is left (in the background): the cluster
        answers ``stopping``, then ``stopped``. Stopping a stopped cluster answers it as it is."""
        record = await self.records.get(cluster_id)
        self._targets.pop(cluster_id, None)
        if record.final:
            return await self.get(cluster_id)
        if record.state != "stopping":
            record.state, record.message = "stopping", "Shutting down."
            await self.records.update(record)
        with contextlib.suppress(OSError):
            await asyncio.to_thread(folder.request_stop, Path(record.folder))
        self._stop_in_background(record)
        return await self.get(cluster_id)

    async def wait_stopped(self, cluster_id: str) -> DaskCluster:
        """Until the cluster's stop has ended (the CLI's `dask stop`, tests)."""
        task = self._stopping.get(cluster_id)
        if task is not None:
            await asyncio.shield(task)
        return await self.get(cluster_id)

    async def dashboard_target(self, cluster_id: str) -> DashboardTarget:
        """Where the dashboard proxy goes: the host the backend says the scheduler runs on (never one
        read from the folder, which the user's code can write) and the port the keeper reported, with
        the cluster's certificate to present (None for a cluster made before clusters had TLS). Kept a
        few seconds: a dashboard page asks for a dozen files at once, each would cost a squeue."""
        known = self._targets.get(cluster_id)
        if known is not None and time.monotonic() - known[0] < TARGET_TTL:
            return known[1]
        record = await self.records.get(cluster_id)
        (_, at, seen, state) = (await self._observed([record]))[0]
        if (
            at.state != "running"
            or seen is None
            or not seen.host
            or state is None
            or not state.dashboard_port
        ):
            raise Conflict(
                f"Dask cluster '{record.name}' has no dashboard now: it is {at.state}.", reason="no_dashboard"
            )
        tls = None
        if record.tls:
            try:
                tls = await asyncio.to_thread(folder.client_ssl_context, Path(record.folder))
            except (OSError, ValueError) as e:  # ssl.SSLError is an OSError
                raise Conflict(
                    f"Dask cluster '{record.name}''s certificate cannot be read ({e}); its dashboard is "
                    "reached only with it.",
                    reason="no_dashboard",
                ) from None
        target = DashboardTarget(seen.host, state.dashboard_port, tls)
        self._targets[cluster_id] = (time.monotonic(), target)
        return target

    # ----- following -----

    async def tick(self) -> None:
        """The ``dask`` loop: every active cluster observed, its record and its workers' time kept."""
        await self._observed(await self.records.active(), ledger=True)

    async def close(self) -> None:
        for task in list(self._stopping.values()):
            task.cancel()
        await asyncio.gather(*self._stopping.values(), return_exceptions=True)

    async def _observe(self, records: builtins.list[ClusterRecord]) -> builtins.list[DaskCluster]:
        return [
            cluster(r, at, seen, state, self.base_url) for r, at, seen, state in await self._observed(records)
        ]

    async def _observed(
        self, records: builtins.list[ClusterRecord], *, ledger: bool = False
    ) -> builtins.list[Observed]:
        """How each cluster stands, its record kept up to it; the workers' spans written to the ledger
        by the loop (``ledger``), not by every listing."""
        seen_by_id: dict[str, SchedulerSeen] = {}
        active = [r for r in records if not r.final]
        for backend in sorted({r.backend for r in active}):
            mine = [self._ref(r) for r in active if r.backend == backend]
            try:
                seen_by_id.update(await self.launcher(backend).observe(mine))
            except (GpuEnvError, OSError) as e:
                log.warning("could not observe the Dask clusters on %s: %s", backend, e)
        out: builtins.list[Observed] = []
        for r in records:
            state, damaged = (
                (None, None) if r.final else await asyncio.to_thread(read_state_or_damage, Path(r.folder))
            )
            seen = seen_by_id.get(r.id)
            tail = ""
            if seen is not None and seen.state in ("ended", "gone") and not r.final:
                tail = await asyncio.to_thread(log_tail, Path(r.folder) / LOG)
            at = standing(r, seen, state, tail)
            if damaged:
                state = None
                at = Standing(
                    at.state, f"{at.message} Its state.json is damaged: {damaged}".strip(), at.final, at.clean
                )
            await self._keep(r, at, state, ledger=ledger or at.final)
            out.append((r, at, seen, state))
        return out

    async def _keep(self, r: ClusterRecord, at: Standing, state: KeeperState | None, *, ledger: bool) -> None:
        """The record brought up to what was observed; the ledger given the workers' spans."""
        before = r.model_dump()
        if state is not None:
            r.worker_seconds = max(r.worker_seconds, state.worker_seconds)
            r.started_total = max(r.started_total, state.started_total)
            r.started_at = r.started_at or state.started
            spans = [WorkerSpan(worker=n, started_at=s, finished_at=e) for n, s, e in state.spans]
            if spans and ledger:
                await self.records.record_spans(r, spans, r.resources.gpu_units())
        if at.final and not r.final:
            r.state, r.message, r.ended_at = at.state, at.message, time.time()
            await self.records.close_spans(r.id, r.ended_at)
        elif at.state in ("starting", "running") and r.state in ("starting", "running"):
            # "stopping" is recorded only when asked for: a keeper shutting down by itself is observed
            r.state, r.message = at.state, at.message
        if r.model_dump() != before:
            await self.records.update(r)
        if at.clean or (r.state == "stopping" and not r.final):
            self._stop_in_background(r)  # also a stop a server restart interrupted

    def _stop_in_background(self, record: ClusterRecord) -> None:
        if record.id in self._stopping:
            return
        launcher = self.launcher(record.backend)

        async def run() -> None:
            try:
                await launcher.stop(self._ref(record))
                fresh = await self.records.get(record.id)
                if not fresh.final:
                    state, _ = await asyncio.to_thread(read_state_or_damage, Path(fresh.folder))
                    await self._keep(fresh, Standing("stopped", "Shut down.", final=True), state, ledger=True)
            except (GpuEnvError, OSError) as e:
                log.warning("stopping Dask cluster %s: %s", record.id, e)
            finally:
                self._stopping.pop(record.id, None)

        self._stopping[record.id] = asyncio.get_running_loop().create_task(run())

    # ----- helpers -----

    def _ref(self, r: ClusterRecord) -> ClusterRef:
        return ClusterRef(r.id, Path(r.folder), r.handle)

    def _check_counts(self, workers: int | None, adapt: dict[str, int] | None) -> None:
        most = adapt["maximum"] if adapt else (workers or 0)
        if most > self.settings.max_workers:
            raise Conflict(
                f"{most} workers is more than this server allows a cluster "
                f"({self.settings.max_workers}, c.DaskClusters.max_workers).",
                reason="too_many_workers",
            )

    def _runtime(self, request: DaskClusterRequest) -> tuple[Path | None, str | None, dict[str, str] | None]:
        """The prefix the cluster runs in and its name, or the image it runs from."""
        if request.environment:
            prefix = self.environments(request.environment)
            if not prefix:
                raise NotFound(f"Unknown environment '{request.environment}'.", reason="env_not_found")
            return Path(prefix), request.environment, None
        if request.image:
            path = self.images(request.image)
            if not path:
                raise NotFound(f"Unknown image '{request.image}'.", reason="image_not_found")
            return None, None, {"name": request.image, "path": path}
        assert request.kernel is not None  # the model asks for one of the three
        python = self.kernel_python(request.kernel)
        if python is None:
            raise NotFound(
                f"Kernel '{request.kernel}' is not installed here, or does not run a Python of its own.",
                reason="kernel_not_found",
            )
        home = Path(python).parent.parent
        # the kernel's environment by name where it is one of ours, so a missing package can be added to it
        return home, self.environment_at(str(home)), None


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")[:40] or "dask"


def _remove(where: Path) -> None:
    remove_tree(where)
