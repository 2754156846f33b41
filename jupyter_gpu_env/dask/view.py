"""Pure: how a cluster stands, from its record, what its backend says of the scheduler and what the
keeper last wrote; and the cluster as the API shows it."""

from __future__ import annotations

from dataclasses import dataclass

from ..backends.dask import SchedulerSeen
from ..contracts.dask.spec import CA_PEM, CERT_PEM, KEY_PEM
from ..contracts.dask.state import KeeperState
from ..models.automation.dask import (
    ClusterState,
    DaskAdapt,
    DaskCluster,
    DaskPendingWorker,
    DaskTls,
    DaskVersions,
    DaskWorkers,
)
from .records import ClusterRecord

MAX_PENDING_SHOWN = 100


@dataclass(frozen=True)
class Standing:
    state: ClusterState
    message: str
    final: bool = False  # the record ends now
    clean: bool = False  # it ended without shutting down: stop what may be left of it


def _ended(record: ClusterRecord, state: KeeperState | None, log_tail: str) -> Standing:
    if record.state == "stopping":
        return Standing("stopped", "Shut down.", final=True)
    if state is not None and state.state == "stopped":
        if state.ended == "idle":
            return Standing("stopped", state.message or "Shut down for being unused.", final=True)
        if state.ended == "stopped":
            return Standing("stopped", "Shut down.", final=True)
        return Standing(
            "stopped",
            "The scheduler was stopped by its batch system (its time limit, or a cancel).",
            final=True,
        )
    why = f" Its log ends: {log_tail}" if log_tail else ""
    if state is None:
        return Standing("failed", f"The scheduler ended before it started.{why}", final=True, clean=True)
    return Standing(
        "failed",
        f"The scheduler ended without shutting down (killed, out of memory, or its node failed).{why}",
        final=True,
        clean=True,
    )


def standing(
    record: ClusterRecord, seen: SchedulerSeen | None, state: KeeperState | None, log_tail: str = ""
) -> Standing:
    """Where the cluster is; ``seen`` None when its backend could not be asked (it stays as recorded)."""
    if record.final or seen is None:
        return Standing(record.state, record.message)
    stopping = record.state == "stopping"
    if seen.state == "queued":
        if stopping:
            return Standing("stopping", "Shutting down.")
        place = f" (place {seen.place})" if seen.place else ""
        why = f": {seen.reason}" if seen.reason else ""
        who = "The cluster's one job" if record.layout == "one_allocation" else "The scheduler"
        return Standing("starting", f"{who} waits in the queue{place}{why}.")
    if seen.state == "running":
        if stopping or (state is not None and state.state != "running"):
            return Standing(
                "stopping",
                (state.message if state and state.state != "running" else None) or "Shutting down.",
            )
        if state is None:
            return Standing("starting", "The scheduler is starting.")
        return Standing("running", "")
    return _ended(record, state, log_tail)


def cluster(
    record: ClusterRecord,
    at: Standing,
    seen: SchedulerSeen | None,
    state: KeeperState | None,
    base_url: str,
) -> DaskCluster:
    live = state is not None and not at.final and at.state in ("running", "stopping")
    places = {w.name: w for w in (seen.workers if seen is not None else ())}
    pending = []
    if live and state is not None:
        for p in state.pending[:MAX_PENDING_SHOWN]:
            known = places.get(p.name)
            pending.append(
                DaskPendingWorker(
                    name=p.name,
                    state=p.state,
                    place=known.place if known else None,
                    reason=(known.reason if known and known.reason else p.reason),
                )
            )
    requested = record.workers if record.workers is not None else (record.adapt or {}).get("minimum", 0)
    workers = DaskWorkers(
        requested=state.requested if live and state is not None else (0 if at.final else requested),
        running=state.running if live and state is not None else 0,
        pending=state.pending_count if live and state is not None else 0,
        pending_workers=pending,
        started_total=state.started_total if state is not None else record.started_total,
        in_allocation=state.in_allocation if live and state is not None else 0,
    )
    worker_seconds = state.worker_seconds if state is not None else record.worker_seconds
    dashboard = (
        f"{base_url}gpu-env/dask/{record.id}/status"
        if live and at.state == "running" and state is not None and state.dashboard_port
        else None
    )
    address = state.address if live and state is not None else None
    tls = tls_files(record)
    versions = (
        DaskVersions.model_validate(state.versions.model_dump()) if state is not None else DaskVersions()
    )
    return DaskCluster(
        id=record.id,
        name=record.name,
        backend=record.backend,
        state=at.state,
        message=at.message,
        environment=record.environment,
        kernel=record.kernel,
        image=record.image,
        queue=record.queue,
        scheduler_address=address,
        tls=tls,
        client_code=client_code(record, address, tls) if address else None,
        dashboard=dashboard,
        workers=workers,
        layout=record.layout,
        adapt=DaskAdapt.model_validate(record.adapt) if record.adapt else None,
        resources=record.resources,
        threads_per_worker=record.threads_per_worker,
        walltime_seconds=record.walltime_seconds,
        lifetime_seconds=record.lifetime_seconds,
        idle_timeout_seconds=record.idle_timeout_seconds,
        created_at=record.created_at,
        started_at=record.started_at or (state.started if state is not None else None),
        ended_at=record.ended_at,
        idle_since=state.idle_since if live and state is not None else None,
        worker_hours=worker_seconds / 3600,
        gpu_hours=worker_seconds / 3600 * record.resources.gpu_units(),
        versions=versions,
        problems=list(state.problems) if state is not None else [],
    )


def tls_files(record: ClusterRecord) -> DaskTls | None:
    if not record.tls:
        return None
    return DaskTls(
        ca_file=f"{record.folder}/{CA_PEM}",
        cert_file=f"{record.folder}/{CERT_PEM}",
        key_file=f"{record.folder}/{KEY_PEM}",
    )


def client_code(record: ClusterRecord, address: str, tls: DaskTls | None) -> str:
    """The code cell that connects a client: ``connect`` where the cluster's environment has this
    package, else distributed's own ``Security`` with the cluster's files (every value a Python literal)."""
    if tls is None:  # a cluster made before clusters had TLS
        return "\n".join(["from distributed import Client", "", f"client = Client({address!r})", "client"])
    if record.connect_module:
        return "\n".join(
            [
                "from jupyter_gpu_env.dask import connect",
                "",
                f"client = connect({record.id!r})  # over the cluster's mutual TLS",
                "client",
            ]
        )
    return "\n".join(
        [
            "from distributed import Client, Security",
            "",
            "# the cluster's own certificate: it accepts no connection without it",
            "security = Security(",
            f"    tls_ca_file={tls.ca_file!r},",
            f"    tls_client_cert={tls.cert_file!r},",
            f"    tls_client_key={tls.key_file!r},",
            "    require_encryption=True,",
            ")",
            f"client = Client({address!r}, security=security)",
            "client",
        ]
    )
