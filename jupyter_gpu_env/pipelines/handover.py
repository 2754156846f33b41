"""Handing a pipeline's nodes to their backends: at submission as far as each backend allows (SLURM
holds a node after its parents itself), and later, node by node, as parents end; skipping what must
not run, saying why. One class, given the :class:`JobService` whose backends, store and tracker it uses.
"""

from __future__ import annotations

import asyncio
import builtins
import logging
from collections.abc import Mapping, Sequence

from ..backends.base import Dependency, IllegalTransition
from ..contracts.pipelines import folder as files
from ..contracts.pipelines.graph import ACTIVE, ENDED, WAITING, Edge, decide, order, refusal
from ..errors import GpuEnvError, NotFound
from ..jobs.service import JobService
from ..models.jobs import Job
from .records import PipelineRecord, PipelineRecords
from .view import node_jobs, standing

log = logging.getLogger(__name__)


class Handover:
    """Hands nodes over through ``jobs``' backends and records what became of them."""

    def __init__(self, jobs: JobService, records: PipelineRecords) -> None:
        self.jobs = jobs
        self.store = jobs.store
        self.records = records

    async def start(self, record: PipelineRecord, new: set[str], *, strict: bool) -> None:
        """Hand over the nodes of ``new`` that can go now: those whose parents have all ended (or are
        skipped, saying why), and, on a backend that holds dependencies, those whose parents it holds
        too. The others stay held, their backend given what lets it start them without us (stage)."""
        jobs = dict(await self.jobs_of(record))
        by_id = {n.id: n for n in record.nodes}
        now = {n.id: standing(node_jobs(n, jobs)) for n in record.nodes}
        for nid in order(edges(record), [n.id for n in record.nodes if n.kind == "external"]):
            if nid not in new:
                continue
            node, runs = by_id[nid], node_jobs(by_id[nid], jobs)
            ends = [(p, now[p]) for p in node.after]
            if all(s in ENDED for _, s in ends):
                why = refusal(node.when, ends)
                if why is None:
                    jobs.update((j.id, j) for j in await self.hand(record, nid, runs, None, strict=strict))
                    now[nid] = ACTIVE
                else:
                    await self.skip(runs, why)
                    now[nid] = "skipped"
                continue
            dependency = self._dependency(record, nid, jobs, now)
            if dependency is not None:
                jobs.update((j.id, j) for j in await self.hand(record, nid, runs, dependency, strict=strict))
                now[nid] = ACTIVE
            else:
                await self.jobs.backends[runs[0].backend].stage(runs)

    def _dependency(
        self, record: PipelineRecord, nid: str, jobs: Mapping[str, Job], now: Mapping[str, str]
    ) -> Dependency | None:
        """What the node's backend is to wait for, where it can hold the node itself: every parent not
        ended is handed to the same backend (their ids known). None: the server hands it over later."""
        by_id = {n.id: n for n in record.nodes}
        node = by_id[nid]
        runs = node_jobs(node, jobs)
        backend = self.jobs.backends.get(runs[0].backend) if runs else None
        if backend is None or not backend.holds_dependencies:
            return None
        ids: builtins.list[str] = []
        for parent in node.after:
            if now[parent] in ENDED:
                continue
            parent_runs = node_jobs(by_id[parent], jobs)
            if now[parent] != ACTIVE or any(
                j.backend != backend.name or not j.backend_job_id for j in parent_runs
            ):
                return None
            ids += _scheduler_ids([j.backend_job_id or "" for j in parent_runs])
        ended = [(p, now[p]) for p in node.after if now[p] in ENDED]
        when = node.when
        if when == "succeeded" and any(s != "succeeded" for _, s in ended):
            return None  # it will be skipped: decided once the others end
        if when == "failed" and any(s == "failed" for _, s in ended):
            when = "always"
        return Dependency(tuple(ids), when)

    async def hand(
        self, record: PipelineRecord, nid: str, runs: Sequence[Job], after: Dependency | None, *, strict: bool
    ) -> builtins.list[Job]:
        """Give the node's jobs to their backend (after ``after``, where it holds them) and release them.
        Refused at submission (``strict``), the error goes to the caller; later, a refusal fails the
        node, saying why, and a backend that cannot be reached is asked again at the next round."""
        backend = self.jobs.backends.get(runs[0].backend) if runs else None
        if backend is None:
            await self.fail(runs, f"its backend '{runs[0].backend if runs else '?'}' is not configured here")
            return []
        node = next(n for n in record.nodes if n.id == nid)
        try:
            if node.group_id is not None:
                group = await self.store.sweeps.get(node.group_id)
                seen = await (
                    backend.submit_sweep_after(runs, group.max_concurrent, after)
                    if after is not None
                    else backend.submit_sweep(runs, group.max_concurrent)
                )
                observed = seen.runs
                if seen.backend_job_id and group.backend_job_id is None:
                    await self.store.sweeps.update(
                        group.model_copy(update={"backend_job_id": seen.backend_job_id})
                    )
            else:
                job = runs[0]
                obs = await (backend.submit_after(job, after) if after is not None else backend.submit(job))
                observed = {job.id: obs}
        except GpuEnvError as e:
            if strict:
                raise type(e)(f"Node '{nid}': {e.message}", reason=e.reason, details=e.details) from None
            if e.status >= 500:
                log.warning("pipeline %s: node %s could not be handed over yet: %s", record.id, nid, e)
                return []
            await self.fail(runs, f"the '{backend.name}' backend refused it: {e.message}")
            return []
        handed = []
        for job in runs:
            job = await self.store.update(job.id, waiting_for=[])
            if job.id in observed:
                job = await self.jobs.tracker.apply(job, observed[job.id], None)
            handed.append(job)
        return handed

    async def skip(self, runs: Sequence[Job], why: str) -> None:
        """Record the node's jobs skipped, and why, in the store and in their folders."""
        skipped = await self._end(runs, "cancelled", "skipped", f"Skipped: {why}.")
        folders = [str(self.jobs.folder_of(j)) for j in skipped]
        await asyncio.to_thread(files.skip_folders, folders, f"Skipped: {why}.")
        for job in skipped:  # a pipeline's last node may end by a skip: its word goes then
            self.jobs.tracker.ended(job)

    async def fail(self, runs: Sequence[Job], why: str) -> None:
        for job in await self._end(runs, "failed", "submit_refused", f"Not started: {why}."):
            self.jobs.tracker.ended(job)

    async def _end(self, runs: Sequence[Job], state: str, reason: str, message: str) -> list[Job]:
        """Record the node's jobs ended before they ran; those it ended, as recorded."""
        ended = []
        for job in runs:
            try:
                job = await self.store.update(
                    job.id, state=state, reason=reason, message=message, waiting_for=[], pending_reason=None
                )
            except IllegalTransition:
                continue  # it ended meanwhile: its end stands
            ended.append(job)
        return ended

    async def advance_one(self, record: PipelineRecord) -> None:
        jobs = await self.jobs_of(record)
        now = {n.id: standing(node_jobs(n, jobs)) for n in record.nodes}
        if not any(s == WAITING for s in now.values()):
            return
        by_id = {n.id: n for n in record.nodes}
        for decision in decide(edges(record), now):
            runs = node_jobs(by_id[decision.node], jobs)
            if decision.run:
                await self.hand(record, decision.node, runs, None, strict=False)
            else:
                await self.skip(runs, decision.why)

    async def jobs_of(self, record: PipelineRecord) -> dict[str, Job]:
        """The pipeline's jobs by id, its external parents' included."""
        jobs = await self.records.jobs(record.id)
        for node in record.nodes:
            if node.kind == "external" and node.job_id and node.job_id not in jobs:
                try:
                    jobs[node.job_id] = await self.store.get(node.job_id)
                except NotFound:
                    continue
        return jobs

    async def current(self, record: PipelineRecord) -> builtins.list[Job]:
        jobs = await self.jobs_of(record)
        return [j for n in record.nodes if n.kind != "external" for j in node_jobs(n, jobs)]


def edges(record: PipelineRecord) -> dict[str, Edge]:
    return {n.id: Edge(tuple(n.after), n.when) for n in record.nodes if n.kind != "external"}


def _scheduler_ids(ids: Sequence[str]) -> builtins.list[str]:
    """The scheduler's ids to wait for: a job array's own id for all of its tasks (``123_4`` -> ``123``)."""
    arrays = {i.split("_", 1)[0] for i in ids if "_" in i}
    return sorted(arrays) + [i for i in ids if "_" not in i]
