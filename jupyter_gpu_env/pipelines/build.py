"""A pipeline's checks and the making of its parts: every node checked as its own submission would be
(before anything is written), then its jobs' records, sweeps and folders, each node's job.json saying
where its pipeline is and where its parents' folders are (``upstream``), and ``pipeline.json``.
"""

from __future__ import annotations

import shutil
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..contracts import jobfiles
from ..contracts.pipelines import folder as files
from ..contracts.pipelines.graph import Edge, GraphError, order
from ..errors import GpuEnvError, InvalidRequest
from ..inputs import check_tree
from ..jobs import submission
from ..jobs.intake import Intake, Prepared
from ..jobs.parameters import inspect_notebook
from ..jobs.service import JobService
from ..jobs.sweeps import plan
from ..jobs.sweeps.folders import build_sweep_folder
from ..models.automation.pipelines import UPSTREAM, PipelineNodeRequest, PipelineRequest
from ..models.common import describe_validation_error
from ..models.jobs import Job
from ..models.sweeps import JobGroup
from ..system.offloop import python_work
from .records import NodeRecord, PipelineRecord
from .view import node_jobs


def parse_request(data: PipelineRequest | Mapping[str, Any]) -> PipelineRequest:
    """A validated request; what does not validate is an InvalidRequest naming each field (strict, as
    every REST body is read)."""
    if isinstance(data, PipelineRequest):
        return data
    check_tree(data)
    try:
        return PipelineRequest.model_validate(data, strict=True)
    except ValidationError as e:
        raise InvalidRequest(describe_validation_error(e, "Invalid pipeline")) from e


@dataclass
class NodePlan:
    """A node checked: what it runs (``ready``, and ``sweep`` for a sweep node), or the job it is."""

    id: str
    request: PipelineNodeRequest | None = None
    ready: Prepared | None = None
    sweep: plan.Sweep | None = None
    external: Job | None = None


@dataclass
class Made:
    """A node's new parts: its jobs with their job.json, and its sweep."""

    jobs: list[tuple[Job, dict[str, Any]]] = field(default_factory=list)
    group: JobGroup | None = None
    folder: Path | None = None  # the job's folder, or the sweep's


def graph_order(nodes: Sequence[PipelineNodeRequest], external: Iterable[str]) -> list[str]:
    """The nodes in an order where parents come first; a 400 naming what is wrong with the graph."""
    try:
        return order({n.id: Edge(tuple(n.after), n.when) for n in nodes}, external)
    except GraphError as e:
        raise InvalidRequest(str(e), reason="invalid_pipeline") from None


async def check_node(jobs: JobService, node: PipelineNodeRequest, snapshot: bytes | None = None) -> NodePlan:
    """One node checked as ``POST jobs`` checks a submission; what is refused names the node."""
    try:
        given = set(node.parameters) | set(node.sweep or {}) | {k for r in node.sweep_runs or [] for k in r}
        if node.after and UPSTREAM in given:
            raise InvalidRequest(
                f"'{UPSTREAM}' is what the node receives from its parents; it cannot be given as a parameter.",
                reason="invalid_parameter",
            )
        if plan.is_sweep(node):
            planned = plan.expand(node, jobs.sweeps.max_runs)
            ready = await jobs.intake.prepare(node, snapshot)
            declared = await python_work(inspect_notebook, ready.nb)
            await python_work(plan.check, declared, planned, jobs.max_parameters_bytes)
            return NodePlan(node.id, node, ready, planned)
        jobs.check_size(node.parameters)
        ready = await jobs.intake.prepare(node, snapshot)
        await python_work(submission.check_parameters, ready.nb, node.parameters)
        return NodePlan(node.id, node, ready)
    except GpuEnvError as e:
        # Part of the pipeline is wrong: the request is, whatever a single job's check would answer (a
        # missing notebook's 404, a backend's 409); what is too large stays a 413.
        kind = type(e) if e.status in (413,) or e.status >= 500 else InvalidRequest
        raise kind(f"Node '{node.id}': {e.message}", reason=e.reason, details=e.details) from None


def upstream_of(
    node: PipelineNodeRequest, parts: Mapping[str, Made], folder_of: Any, varied: Mapping[str, list[str]]
) -> dict[str, Any]:
    """job.json's ``upstream`` of ``node``: each parent's folder and runs (what the runner reads)."""
    out: dict[str, Any] = {}
    for parent in node.after:
        made = parts[parent]
        runs = [
            {
                "folder": str(folder_of(job)),
                "output": Path(job.output_path).name,
                "parameters": {k: job.parameters.get(k) for k in varied.get(parent, [])},
            }
            for job, _ in made.jobs
        ]
        out[parent] = {"folder": str(made.folder), "sweep": made.group is not None, "runs": runs}
    return out


class Maker:
    """Makes the parts of a pipeline's nodes under its folder ``base`` (built aside at first)."""

    def __init__(
        self, intake: Intake, pipeline_id: str, base: Path, notify: Any = None, schedule_id: str | None = None
    ) -> None:
        self.intake = intake
        self.schedule_id = schedule_id
        self.pipeline_id = pipeline_id
        self.base = base
        self.notify = notify
        self.varied: dict[str, list[str]] = {}

    def external(self, job: Job) -> Made:
        return Made(jobs=[(job, {})], folder=self.intake.folder_of(job))

    def node(self, p: NodePlan, parts: Mapping[str, Made], *, held: bool) -> Made:
        """The records and job.json of ``p``'s jobs, held (waiting for its parents) or not."""
        node, ready = p.request, p.ready
        assert node is not None and ready is not None
        request = (
            node if node.notify or self.notify is None else node.model_copy(update={"notify": self.notify})
        )
        name = node.name or node.id
        extra: dict[str, Any] = {
            "pipeline_id": self.pipeline_id,
            "pipeline_node": node.id,
            "waiting_for": list(node.after) if held else [],
            "schedule_id": self.schedule_id,
        }
        common = {"id": self.pipeline_id, "node": node.id, "folder": str(self.base)}
        upstream = upstream_of(node, parts, self.intake.folder_of, self.varied) if node.after else None
        made = Made()
        if p.sweep is None:
            job, spec = self.intake.new_job(
                request, ready, name, node.parameters, self.base / jobfiles.slug(node.id), **extra
            )
            made.jobs.append((job, spec))
            made.folder = self.intake.folder_of(job)
        else:
            group_id = uuid.uuid4().hex[:12]
            sweep_base = self.base / f"{jobfiles.slug(node.id)}-sweep-{group_id}"
            for i, params in enumerate(p.sweep.runs):
                label = plan.label(params, p.sweep.varied)
                job, spec = self.intake.new_job(
                    request,
                    ready,
                    plan.run_name(name, params, p.sweep.varied),
                    params,
                    sweep_base / f"{i:04d}-{jobfiles.slug(label, 30)}",
                    group_id=group_id,
                    group_index=i,
                    **extra,
                )
                spec["group"] = {"id": group_id, "index": i, "max_concurrent": p.sweep.max_concurrent}
                made.jobs.append((job, spec))
            made.folder = sweep_base
            made.group = JobGroup(
                id=group_id,
                name=name,
                backend=ready.backend.name,
                notebook_path=self.intake.shown(ready.nb_file),
                size=len(p.sweep.runs),
                max_concurrent=p.sweep.max_concurrent,
                varied=p.sweep.varied,
                parameters=node.parameters,
                counts={"queued": len(p.sweep.runs)},
                state="queued",
                created_at=time.time(),
                pipeline_id=self.pipeline_id,
                pipeline_node=node.id,
            )
            self.varied[node.id] = p.sweep.varied
        for _, spec in made.jobs:
            spec["pipeline"] = common
            if upstream is not None:
                spec["upstream"] = upstream
        return made

    def write(self, p: NodePlan, made: Made, into: Path) -> None:
        """Blocking: the node's folders, under ``into`` (the pipeline's folder, or its hidden sibling)."""
        assert p.ready is not None and made.folder is not None
        where = into / made.folder.relative_to(self.base)
        if made.group is None:
            job, spec = made.jobs[0]
            submission.build_folder(where, p.ready.raw, spec)
        else:
            build_sweep_folder(
                where, p.ready.raw, [(where / self.intake.folder_of(j).name, s) for j, s in made.jobs]
            )


def node_record(p: NodePlan, made: Made) -> NodeRecord:
    if p.external is not None:
        return NodeRecord(id=p.id, kind="external", job_id=p.external.id)
    assert p.request is not None
    return NodeRecord(
        id=p.id,
        kind="sweep" if made.group is not None else "job",
        after=list(p.request.after),
        when=p.request.when,
        request=p.request.model_dump(mode="json", exclude_none=True),
        job_id=None if made.group is not None else made.jobs[0][0].id,
        group_id=made.group.id if made.group is not None else None,
    )


def doc_of(record: PipelineRecord, jobs: Mapping[str, Job], folder_of: Any) -> files.PipelineDoc:
    """``pipeline.json`` as the records say: every node's current jobs and their folders."""
    nodes = []
    for node in record.nodes:
        runs = node_jobs(node, jobs)
        folders = [folder_of(j) for j in runs]
        where = folders[0].parent if node.kind == "sweep" and folders else folders[0] if folders else None
        nodes.append(
            files.NodeDoc(
                id=node.id,
                kind=node.kind,
                after=node.after,
                when=node.when,
                backend=runs[0].backend if runs else "",
                folder=str(where or ""),
                folders=[str(f) for f in folders],
                job_ids=[j.id for j in runs],
                group_id=node.group_id,
            )
        )
    return files.PipelineDoc(
        id=record.id, name=record.name, cancelled=record.cancelled_at is not None, nodes=nodes
    )


def build_all(base: Path, write: Any, doc: files.PipelineDoc) -> None:
    """Blocking: every node's folders and pipeline.json in a hidden sibling of ``base``, renamed into
    place whole: a refused pipeline leaves no folder, a listing never shows half of one."""
    tmp = base.with_name(f".tmp-{base.name}")
    tmp.mkdir(parents=True)
    try:
        write(tmp)
        files.write_doc(tmp, doc)
        tmp.rename(base)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
