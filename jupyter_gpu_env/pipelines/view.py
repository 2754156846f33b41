"""How a pipeline and its nodes stand, from its record and its jobs' records: pure, so the listing, the
graph view and the advancing of the pipeline read the same states."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..contracts.pipelines.folder import combined
from ..contracts.pipelines.graph import ACTIVE, ENDED, WAITING, refusal
from ..models.automation.pipelines import NodeState, Pipeline, PipelineNode
from ..models.jobs import TERMINAL_STATES, Job, JobState
from ..models.sweeps import JobGroup
from .records import NodeRecord, PipelineRecord

# A job that never ran because of its parents: skipped by the pipeline, or by SLURM's dependency.
SKIP_REASONS = frozenset({"skipped", "dependency_never_satisfied"})


def end_of(job: Job) -> str:
    """A job's state, ``skipped`` for one that never ran because of its parents."""
    return "skipped" if job.state == "cancelled" and job.reason in SKIP_REASONS else job.state


def node_jobs(node: NodeRecord, jobs: Mapping[str, Job]) -> list[Job]:
    """The node's current jobs: its job, or its sweep's runs in their order."""
    if node.group_id is not None:
        runs = [j for j in jobs.values() if j.group_id == node.group_id]
        return sorted(runs, key=lambda j: j.group_index or 0)
    job = jobs.get(node.job_id or "")
    return [job] if job is not None else []


def standing(runs: Sequence[Job]) -> str:
    """How a node stands for :func:`.graph.decide`: waiting (held), active, or its end."""
    if not runs:
        return "failed"  # its records are gone: nothing below it can use what it made
    if any(j.waiting_for for j in runs):
        return WAITING
    if any(j.state not in TERMINAL_STATES for j in runs):
        return ACTIVE
    return combined([end_of(j) for j in runs])


def node_view(
    node: NodeRecord, runs: Sequence[Job], ends: Mapping[str, str], group: JobGroup | None
) -> PipelineNode:
    """A node as the API shows it; ``ends`` gives its parents' standing (for the words of a skip)."""
    first = runs[0] if runs else None
    state: NodeState
    now = standing(runs)
    counts = _counts(runs)
    message = first.message if first is not None and len(runs) == 1 else ""
    if now == WAITING:
        state = "waiting"
        pending = [p for p in node.after if ends.get(p) not in ENDED]
        message = f"Waits for {', '.join(repr(p) for p in pending or node.after)}."
    elif now == ACTIVE:
        state = "running" if any(j.state != "queued" for j in runs) else "queued"
        if len(runs) > 1:
            message = f"{sum(j.state in TERMINAL_STATES for j in runs)} of {len(runs)} runs ended."
    else:
        state = now  # type: ignore[assignment]  # an end: succeeded, failed, cancelled or skipped
        if state == "skipped":
            why = refusal(node.when, [(p, ends.get(p, "failed")) for p in node.after])
            given = first.message if first is not None and first.reason == "skipped" else ""
            message = given or (f"Skipped: {why}." if why else "Skipped.")
        elif len(runs) > 1:
            message = ", ".join(f"{n} {s}" for s, n in counts.items())
    started = [j.started_at for j in runs if j.started_at is not None]
    finished = [j.finished_at for j in runs if j.finished_at is not None]
    ended = state in ENDED
    return PipelineNode(
        id=node.id,
        kind=node.kind,
        name=(group.name if group is not None else first.name if first is not None else node.id),
        notebook_path=first.notebook_path if first is not None else "",
        backend=first.backend if first is not None else "",
        after=node.after,
        when=node.when,
        state=state,
        message=message,
        job_id=node.job_id,
        group_id=node.group_id,
        job_dir=_folder_of(runs, group),
        counts=counts,
        cells_done=sum(j.progress.cells_done for j in runs),
        cells_total=sum(j.progress.cells_total for j in runs),
        started_at=min(started) if started else None,
        finished_at=max(finished) if ended and finished else None,
        attempts=node.attempts,
    )


def _counts(runs: Sequence[Job]) -> dict[str, int]:
    out: dict[str, int] = {}
    for job in runs:
        key = "waiting" if job.waiting_for else end_of(job)
        out[key] = out.get(key, 0) + 1
    return out


def _folder_of(runs: Sequence[Job], group: JobGroup | None) -> str | None:
    if not runs:
        return None
    if group is None:
        return runs[0].job_dir
    return runs[0].job_dir.rsplit("/", 1)[0]


def pipeline_view(
    record: PipelineRecord,
    jobs: Mapping[str, Job],
    groups: Mapping[str, JobGroup],
    order: Sequence[str],
) -> Pipeline:
    """The pipeline as the API shows it: its nodes in ``order`` (parents first), its state and counts."""
    by_id = {n.id: n for n in record.nodes}
    ends = {n.id: standing(node_jobs(n, jobs)) for n in record.nodes}
    nodes = [
        node_view(by_id[i], node_jobs(by_id[i], jobs), ends, groups.get(by_id[i].group_id or ""))
        for i in order
    ]
    counts: dict[str, int] = {}
    for node in nodes:
        counts[node.state] = counts.get(node.state, 0) + 1
    state: JobState
    ended = all(n.state in ENDED for n in nodes)
    if not ended:
        started = any(n.state not in ("waiting", "queued") for n in nodes if n.kind != "external")
        state = "running" if started else "queued"
    elif record.cancelled_at is not None:
        state = "cancelled"
    elif any(n.state == "failed" for n in nodes if n.kind != "external"):
        state = "failed"
    elif all(n.state in ("cancelled", "skipped") for n in nodes if n.kind != "external"):
        state = "cancelled"
    else:
        state = "succeeded"
    finished = [n.finished_at for n in nodes if n.finished_at is not None]
    return Pipeline(
        id=record.id,
        name=record.name,
        state=state,
        created_at=record.created_at,
        finished_at=max(finished) if ended and finished else None,
        cancelled_at=record.cancelled_at,
        file_path=record.file_path,
        counts=counts,
        nodes=nodes,
        schedule_id=record.schedule_id,
    )
