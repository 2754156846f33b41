"""PipelineService: pipelines submitted whole, followed, moved on, cancelled and run again from a node.

A pipeline is checked whole and first (its graph, then every node as its own submission would be);
then its folder is built aside and renamed into place, and its record and all its jobs' records are
inserted at once. Its nodes are handed to their backends as far as each allows:

- a backend that holds dependencies (SLURM) is given every node at once, in the graph's order, each
  after its parents (``--dependency``), so the pipeline goes on with no Jupyter server;
- elsewhere a node's jobs stay held (``waiting_for``) until its parents have ended; then the server's
  ``pipelines`` loop (:meth:`PipelineService.advance`) hands them over or skips them. On Kubernetes a
  node's runner does the same from the manifests :meth:`.backend.Backend.stage` stored, and the loop
  completes what a crash left undone (a second creation is a harmless conflict).

The decisions are :func:`.graph.decide`'s, the states :mod:`.view`'s, for every backend alike.
"""

from __future__ import annotations

import asyncio
import builtins
import logging
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..backends.base import IllegalTransition
from ..contracts import jobfiles
from ..contracts.pipelines import folder as files
from ..contracts.pipelines.graph import ACTIVE, below, order
from ..errors import Conflict, GpuEnvError, InvalidRequest, NotFound
from ..jobs.service import JobService
from ..models.automation.pipelines import (
    Pipeline,
    PipelineList,
    PipelineNodeRequest,
    PipelineRequest,
)
from ..models.jobs import TERMINAL_STATES, Job
from ..system.offloop import python_work
from ..system.trees import remove_tree
from . import build
from .handover import Handover, edges
from .pipelinefile import read_pipeline_file
from .records import PipelineRecord, PipelineRecords
from .view import node_jobs, pipeline_view, standing

log = logging.getLogger(__name__)


class PipelineService:
    """Pipelines over a :class:`JobService` (its store, intake, backends and tracker)."""

    def __init__(self, jobs: JobService, *, max_nodes: int = 200) -> None:
        self.jobs = jobs
        self.store = jobs.store
        self.records = PipelineRecords(jobs.store.db)  # the pipelines' part of the jobs' database
        self.max_nodes = max_nodes
        self.handover = Handover(jobs, self.records)
        self._lock = asyncio.Lock()  # one change of any pipeline at a time: advance, cancel, rerun

    # ----- submitting -----

    async def submit(
        self, request: PipelineRequest | Mapping[str, Any], *, schedule_id: str | None = None
    ) -> Pipeline:
        """Check the whole pipeline, record it and hand its nodes over as far as their backends allow."""
        request = build.parse_request(request)
        ids, externals, plans = await self._check(request)
        by_id = {n.id: n for n in request.nodes}
        pipeline_id = uuid.uuid4().hex[:12]
        base = self.jobs.job_dir / f"{jobfiles.slug(request.name)}-pipeline-{pipeline_id}"
        notify = request.notify
        maker = build.Maker(self.jobs.intake, pipeline_id, base, notify, schedule_id)
        parts = {key: maker.external(job) for key, job in externals.items()}
        for nid in ids:
            parts[nid] = maker.node(plans[nid], parts, held=bool(by_id[nid].after))
        record = PipelineRecord(
            id=pipeline_id,
            name=request.name,
            folder=str(base),
            created_at=time.time(),
            file_path=request.file_path,
            schedule_id=schedule_id,
            notify=notify.model_dump(exclude_none=True) if notify else None,
            nodes=[build.node_record(plans[k], parts[k]) for k in [*externals, *ids]],
        )
        made = [j for nid in ids for j, _ in parts[nid].jobs]
        groups = [g for nid in ids if (g := parts[nid].group) is not None]
        doc = build.doc_of(record, {j.id: j for k in parts for j, _ in parts[k].jobs}, self.jobs.folder_of)

        def write(into: Path) -> None:
            for nid in ids:
                maker.write(plans[nid], parts[nid], into)

        await python_work(build.build_all, base, write, doc)
        try:
            await self.records.insert(record, made, groups)
        except BaseException:
            await asyncio.to_thread(remove_tree, base)
            raise
        try:
            async with self._lock:
                await self.handover.start(record, set(ids), strict=True)
        except BaseException:
            await asyncio.shield(self._undo(record, made, base))
            raise
        return await self.get(pipeline_id)

    async def submit_file(self, path: str, *, schedule_id: str | None = None) -> Pipeline:
        """Submit the pipeline a ``*.pipeline.yaml`` under the server's root describes."""
        request = await python_work(read_pipeline_file, self.jobs.root, path)
        return await self.submit(request, schedule_id=schedule_id)

    async def check_file(self, path: str) -> PipelineRequest:
        """The pipeline a file describes, checked whole as :meth:`submit` checks it; nothing is made."""
        request = await python_work(read_pipeline_file, self.jobs.root, path)
        await self._check(request)
        return request

    async def _check(
        self, request: PipelineRequest
    ) -> tuple[builtins.list[str], dict[str, Job], dict[str, build.NodePlan]]:
        """The graph's order, the jobs of ``after_jobs`` and every node checked: all or an error naming
        what is wrong (the node, where it is one node's)."""
        if len(request.nodes) > self.max_nodes:
            raise Conflict(
                f"The pipeline has {len(request.nodes)} nodes; at most {self.max_nodes} are accepted "
                "(c.GpuEnvApp.max_pipeline_nodes).",
                reason="pipeline_too_large",
            )
        ids = build.graph_order(request.nodes, request.after_jobs)
        externals: dict[str, Job] = {}
        for key, job_id in request.after_jobs.items():
            try:
                externals[key] = await self.store.get(job_id)
            except NotFound:
                raise InvalidRequest(
                    f"'{key}' in after_jobs names job '{job_id}', which does not exist.",
                    reason="job_not_found",
                ) from None
        by_id = {n.id: n for n in request.nodes}
        plans = {key: build.NodePlan(key, external=job) for key, job in externals.items()}
        for nid in ids:
            plans[nid] = await build.check_node(self.jobs, by_id[nid])
        return ids, externals, plans

    async def _undo(self, record: PipelineRecord, made: Sequence[Job], base: Path) -> None:
        """A refused submission: what was handed over is cancelled, the records and the folder go."""
        for job in await self.handover.current(record):
            backend = self.jobs.backends.get(job.backend)
            if backend is not None and not job.waiting_for and job.state not in TERMINAL_STATES:
                try:
                    await backend.cancel(job)
                except GpuEnvError as e:
                    log.warning("pipeline %s: job %s could not be cancelled: %s", record.id, job.id, e)
        await self.records.delete(record.id)
        await asyncio.to_thread(remove_tree, base)

    # ----- moving on -----

    async def advance(self) -> None:
        """Every pipeline with a job not ended: hand over, or skip, each held node whose parents have
        ended (the server's ``pipelines`` loop; for backends that hold dependencies there is nothing to
        do but words)."""
        async with self._lock:
            for pipeline_id in await self.records.open_ids():
                try:
                    await self.handover.advance_one(await self.records.get(pipeline_id))
                except NotFound:
                    continue
                except Exception:  # one pipeline's trouble must not stop the others
                    log.exception("pipeline %s could not be moved on", pipeline_id)

    # ----- reading -----

    async def get(self, pipeline_id: str) -> Pipeline:
        """The pipeline and its nodes as they stand (its jobs settled first, at most a few times a second)."""
        record = await self.records.get(pipeline_id)
        await self.jobs.tracker.settle_watched()
        return await self._view(record)

    async def list(self, *, limit: int = 50, offset: int = 0) -> PipelineList:
        """Pipelines, newest first."""
        if not 1 <= limit <= 500:
            raise InvalidRequest("limit must be from 1 to 500.")
        if offset < 0:
            raise InvalidRequest("offset must not be negative.")
        records, total = await self.records.page(limit, offset)
        items = [await self._view(r) for r in records]
        if any(p.state in ("queued", "running") for p in items):
            self.jobs.tracker.settle_soon()
        nxt = offset + len(items)
        return PipelineList(
            items=items, total=total, offset=offset, limit=limit, next_offset=nxt if nxt < total else None
        )

    async def _view(self, record: PipelineRecord) -> Pipeline:
        jobs = await self.handover.jobs_of(record)
        groups = {}
        for node in record.nodes:
            if node.group_id is not None:
                try:
                    groups[node.group_id] = await self.store.sweeps.get(node.group_id)
                except NotFound:
                    continue
        externals = [n.id for n in record.nodes if n.kind == "external"]
        return pipeline_view(record, jobs, groups, [*externals, *order(edges(record), externals)])

    # ----- cancelling, running again -----

    async def cancel(self, pipeline_id: str) -> Pipeline:
        """Stop the running nodes and skip the rest; Conflict when every node has ended."""
        async with self._lock:
            record = await self.records.get(pipeline_id)
            current = await self.handover.current(record)
            active = [j for j in current if j.state not in TERMINAL_STATES]
            if not active:
                raise Conflict(
                    f"Every node of pipeline '{pipeline_id}' has already ended.", reason="job_finished"
                )
            record = record.model_copy(update={"cancelled_at": time.time()})
            await self.records.update(record)
            jobs = await self.handover.jobs_of(record)
            # first: a node's runner on the cluster must create nothing more
            await asyncio.to_thread(
                files.write_doc, Path(record.folder), build.doc_of(record, jobs, self.jobs.folder_of)
            )
            held = [j for j in active if j.waiting_for]
            await self.handover.skip(held, "the pipeline was cancelled")
            for name in {j.backend for j in held}:
                backend = self.jobs.backends.get(name)
                if backend is not None and not backend.holds_dependencies:
                    # a node's runner may have created one just before it read "cancelled" (Kubernetes)
                    await backend.cancel_sweep([j for j in held if j.backend == name])
            handed = await self.jobs.tracker.settle_ended([j for j in active if not j.waiting_for])
            handed = [j for j in handed if j.state not in TERMINAL_STATES]
            await self.jobs.tracker.mark_cancelling(handed)
            for name in {j.backend for j in handed}:
                backend = self.jobs.backends.get(name)
                if backend is not None:
                    await backend.cancel_sweep([j for j in handed if j.backend == name])
            for job in handed:
                try:
                    job = await self.store.update(
                        job.id,
                        state="cancelled",
                        reason="cancelled",
                        message="Cancelled with its pipeline.",
                        pending_reason=None,
                    )
                except IllegalTransition:
                    continue
                self.jobs.tracker.ended(job)
        return await self.get(pipeline_id)

    async def rerun(self, pipeline_id: str, from_node: str) -> Pipeline:
        """Run ``from_node`` and every node below it again, from their snapshots; the other nodes' folders
        and results are reused. Conflict while one of those nodes is queued or running."""
        async with self._lock:
            record = await self.records.get(pipeline_id)
            by_id = {n.id: n for n in record.nodes}
            if from_node not in by_id:
                raise NotFound(
                    f"Pipeline '{pipeline_id}' has no node '{from_node}'.", reason="node_not_found"
                )
            if by_id[from_node].kind == "external":
                raise Conflict(
                    f"'{from_node}' is a job the pipeline waits for, not one of its nodes; send it again on its own.",
                    reason="external_node",
                )
            again = below(edges(record), from_node)
            jobs = await self.handover.jobs_of(record)
            now = {n.id: standing(node_jobs(n, jobs)) for n in record.nodes}
            busy = [n for n in again if now[n] == ACTIVE]
            if busy:
                raise Conflict(
                    f"Node '{busy[0]}' is still queued or running; wait for it, or cancel the pipeline first.",
                    reason="node_active",
                )
            record, made, groups = await self._remake(record, again, jobs)
            await self.handover.skip(
                [j for n in again for j in node_jobs(by_id[n], jobs) if j.waiting_for], "replaced by a rerun"
            )
            await self.records.replace_nodes(record, made, groups)
            jobs = await self.handover.jobs_of(record)
            await asyncio.to_thread(
                files.write_doc, Path(record.folder), build.doc_of(record, jobs, self.jobs.folder_of)
            )
            await self.handover.start(record, set(again), strict=False)
        return await self.get(pipeline_id)

    async def _remake(
        self, record: PipelineRecord, again: builtins.list[str], jobs: Mapping[str, Job]
    ) -> tuple[PipelineRecord, builtins.list[Job], builtins.list[Any]]:
        """New jobs (held where they have parents) for the nodes ``again``, from their snapshots."""
        base = Path(record.folder)
        maker = build.Maker(self.jobs.intake, record.id, base, None, record.schedule_id)
        parts: dict[str, build.Made] = {}
        for node in record.nodes:
            runs = node_jobs(node, jobs)
            if node.id in again or not runs:
                continue
            group = await self._group(node.group_id)
            if group is not None:
                maker.varied[node.id] = group.varied
            folders = [self.jobs.folder_of(j) for j in runs]
            parts[node.id] = build.Made(
                jobs=[(j, {}) for j in runs], group=group, folder=folders[0].parent if group else folders[0]
            )
        nodes = {n.id: n for n in record.nodes}
        made: builtins.list[Job] = []
        groups = []
        for nid in again:
            old = node_jobs(nodes[nid], jobs)
            if not old:
                raise Conflict(
                    f"Node '{nid}' has no job left to take its snapshot from.", reason="snapshot_missing"
                )
            snapshot = await self.jobs.intake.snapshot_of(old[0], named=f"Node '{nid}'")
            request = PipelineNodeRequest.model_validate(nodes[nid].request)
            plan = await build.check_node(self.jobs, request, snapshot)
            part = maker.node(plan, parts, held=bool(request.after))
            await python_work(maker.write, plan, part, base)
            parts[nid] = part
            made += [j for j, _ in part.jobs]
            if part.group is not None:
                groups.append(part.group)
            nodes[nid] = build.node_record(plan, part).model_copy(
                update={"attempts": nodes[nid].attempts + 1}
            )
        record = record.model_copy(
            update={"nodes": [nodes[n.id] for n in record.nodes], "cancelled_at": None}
        )
        return record, made, groups

    async def _group(self, group_id: str | None) -> Any:
        if group_id is None:
            return None
        try:
            return await self.store.sweeps.get(group_id)
        except NotFound:
            return None
