"""Sweeps as a whole: submitted in one go (one scheduler object where the backend has one), summarised,
cancelled, their failed runs retried, and their results gathered side by side.

A sweep's runs are ordinary jobs (a record, a folder, a log and an output notebook each) that share a
``group_id`` (the record's field keeps its first name); their folders live in one sweep folder, built
aside and renamed into place whole, so a refused sweep leaves neither records nor folders.
"""

from __future__ import annotations

import asyncio
import builtins
import shutil
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...backends.base import Backend
from ...contracts import jobfiles
from ...errors import Conflict
from ...gpu.energy import NO_PRICES, SitePrices
from ...models.jobs import TERMINAL_STATES, Job, JobRequest
from ...models.sweeps import JobGroup, JobGroupList, SweepResults, SweepRow
from ...system.offloop import python_work
from .. import submission
from ..intake import Intake, Prepared
from ..parameters import inspect_notebook
from ..runner.attempts import RESUME_PARAMETERS
from ..store import JobStore
from ..tracking import JobTracker
from . import plan, results
from .folders import build_sweep_folder, make_run


class Sweeps:
    """Sweeps over the job ``store``: made through ``intake``, handed to ``backends``, their first
    observations applied by ``tracker``."""

    def __init__(
        self,
        store: JobStore,
        backends: Mapping[str, Backend],
        intake: Intake,
        tracker: JobTracker,
        *,
        max_runs: int = 1000,
        max_parameters_bytes: int = 64 << 10,
        gpu_idle_seconds: float = 600.0,
        result_value_bytes: int = results.VALUE_BYTES,
        results_bytes: int = results.TOTAL_BYTES,
        prices: SitePrices = NO_PRICES,
    ) -> None:
        self.store = store
        self.records = store.sweeps
        self.backends = backends
        self.intake = intake
        self.tracker = tracker
        self.max_runs = max_runs
        self.max_parameters_bytes = max_parameters_bytes
        self.gpu_idle_seconds = gpu_idle_seconds
        self.result_value_bytes = result_value_bytes
        self.results_bytes = results_bytes
        self.prices = prices
        self._adding = asyncio.Lock()

    async def submit(self, request: JobRequest, snapshot: bytes | None = None) -> JobGroup:
        """Check the whole sweep, record it and hand all its runs to the backend at once."""
        planned = plan.expand(request, self.max_runs)
        ready = await self.intake.prepare(request, snapshot)
        declared = await python_work(inspect_notebook, ready.nb)
        await python_work(plan.check, declared, planned, self.max_parameters_bytes)
        sweep_id = uuid.uuid4().hex[:12]
        name = request.name or ready.nb_file.stem
        base = self.intake.job_dir / f"{jobfiles.slug(name)}-sweep-{sweep_id}"
        runs = self._runs(request, ready, name, planned, base, sweep_id, range(len(planned.runs)))
        sweep = JobGroup(
            id=sweep_id,
            name=name,
            backend=ready.backend.name,
            notebook_path=self.intake.shown(ready.nb_file),
            size=len(runs),
            max_concurrent=planned.max_concurrent,
            varied=planned.varied,
            parameters=request.parameters,
            counts={"queued": len(runs)},
            state="queued",
            created_at=time.time(),
        )
        await python_work(
            build_sweep_folder, base, ready.raw, [(self.intake.folder_of(j), s) for j, s in runs]
        )
        try:
            await self.records.insert(sweep, [j for j, _ in runs])
        except BaseException:
            await asyncio.to_thread(shutil.rmtree, base, True)
            raise
        await self.hand_over(sweep, [j for j, _ in runs], discard=base)
        return await self._summary(sweep_id)

    def _runs(
        self,
        request: JobRequest,
        ready: Prepared,
        name: str,
        planned: plan.Sweep,
        base: Path,
        sweep_id: str,
        indexes: range | list[int],
    ) -> list[tuple[Job, dict[str, Any]]]:
        out = []
        for i in indexes:
            params = planned.runs[i]
            label = plan.label(params, planned.varied)
            job, spec = self.intake.new_job(
                request,
                ready,
                plan.run_name(name, params, planned.varied),
                params,
                base / f"{i:04d}-{jobfiles.slug(label, 30)}",
                group_id=sweep_id,
                group_index=i,
            )
            spec["group"] = {"id": sweep_id, "index": i, "max_concurrent": planned.max_concurrent}
            out.append((job, spec))
        return out

    async def hand_over(self, sweep: JobGroup, runs: list[Job], *, discard: Path | None) -> None:
        """Submit recorded runs of ``sweep`` as one; refused, their records and folders (or ``discard``) go."""
        backend = self.backends[sweep.backend]
        try:
            seen = await backend.submit_sweep(runs, sweep.max_concurrent)
        except BaseException:
            await self.records.discard(run.id for run in runs)
            if discard is not None:
                await asyncio.to_thread(shutil.rmtree, discard, True)
            else:
                for run in runs:
                    await asyncio.to_thread(shutil.rmtree, self.intake.folder_of(run), True)
            raise
        for run in runs:
            if run.id in seen.runs:
                await self.tracker.apply(run, seen.runs[run.id], None)
        if seen.backend_job_id and sweep.backend_job_id is None:  # a retry's array is not the sweep's
            await self.records.update(sweep.model_copy(update={"backend_job_id": seen.backend_job_id}))

    async def list(self, *, limit: int = 50, offset: int = 0, pipelines: bool = True) -> JobGroupList:
        """Sweeps, newest first, each with its runs counted per state and its idle runs named: as the
        store has them, their runs settled in the background when one is active (a listing is polled by
        every open tab; it never waits behind a refresh of 1,000 runs)."""
        page = await self.records.list(limit=limit, offset=offset, pipelines=pipelines)
        if any(g.state in ("queued", "running") for g in page.items):
            self.tracker.settle_soon()
        idle = await self._idle([g.id for g in page.items if g.counts.get("running")])
        page.items = [g.model_copy(update={"gpu_idle_runs": idle.get(g.id, [])}) for g in page.items]
        return page

    async def get(self, sweep_id: str) -> JobGroup:
        """The sweep as someone watching it sees it: its runs settled first (at most a few times a
        second), their states counted, its idle runs named."""
        await self.tracker.settle_watched()
        return await self._summary(sweep_id)

    async def _summary(self, sweep_id: str) -> JobGroup:
        sweep = await self.records.get(sweep_id)
        if sweep.counts.get("running"):
            idle = await self._idle([sweep.id])
            sweep = sweep.model_copy(update={"gpu_idle_runs": idle.get(sweep.id, [])})
        return sweep

    async def _idle(self, sweep_ids: builtins.list[str]) -> dict[str, builtins.list[str]]:
        return await self.records.idle_runs(sweep_ids, self.gpu_idle_seconds)

    async def cancel(self, sweep_id: str) -> JobGroup:
        """Cancel every run still queued or running; Conflict when none is."""
        runs = await self.records.runs(sweep_id)
        # runs that ended since the last round keep how they ended
        active = await self.tracker.settle_ended([r for r in runs if r.state not in TERMINAL_STATES])
        active = [r for r in active if r.state not in TERMINAL_STATES]
        if not active:
            raise Conflict(f"Every run of sweep '{sweep_id}' has already ended.", reason="job_finished")
        backend = self.backends.get(active[0].backend)
        if backend is not None:
            await self.tracker.mark_cancelling(active)
            await backend.cancel_sweep(active)
        cancelled = []
        for run in active:
            try:
                cancelled.append(
                    await self.store.update(
                        run.id,
                        state="cancelled",
                        reason="cancelled",
                        message="Cancelled by the user.",
                        pending_reason=None,
                    )
                )
            except Conflict:
                continue  # it ended on its own meanwhile
        sweep = await self.records.get(sweep_id)  # cancelled as a whole, not one run of it
        await self.records.update(sweep.model_copy(update={"cancelled_at": time.time()}))
        for run in cancelled:  # told once the sweep says it was cancelled
            self.tracker.ended(run)
        return await self._summary(sweep_id)

    async def retry_failed(self, sweep_id: str) -> JobGroup:
        """Run again, with the same snapshot and parameters, the runs that failed or were cancelled; the
        others are left as they are. Conflict while none did."""
        sweep = await self._summary(sweep_id)
        runs = await self.records.runs(sweep_id)
        again = [r for r in runs if r.state in ("failed", "cancelled")]
        if not again:
            raise Conflict(
                f"No run of sweep '{sweep_id}' failed or was cancelled.", reason="nothing_to_retry"
            )
        fresh = await self._copies(sweep, again)
        await self.records.replace(again, fresh)
        try:
            await self.hand_over(sweep, fresh, discard=None)
        except BaseException:
            # refused: the failed runs stand as they were, records and folders
            await asyncio.shield(self.records.unhide([r.id for r in again]))
            raise
        if sweep.cancelled_at is not None:  # its runs run again: no longer a cancelled sweep
            await self.records.update(sweep.model_copy(update={"cancelled_at": None}))
        for old in again:  # their place is taken only once the backend has the new runs
            await asyncio.to_thread(shutil.rmtree, self.intake.folder_of(old), True)
        return await self._summary(sweep_id)

    async def add_run(self, sweep: JobGroup, old: Job, request: JobRequest, snapshot: bytes) -> Job:
        """The run ``old`` of ``sweep`` sent again as ``request`` (its values changed or not): a new run of
        the sweep, numbered after its runs, beside them in its folder and in its results; ``old`` stays as
        it was. Refused (nothing left behind) as any submission would be."""
        ready = await self.intake.prepare(request, snapshot)
        await python_work(submission.check_parameters, ready.nb, request.parameters)
        params = dict(request.parameters)
        async with self._adding:  # two runs sent at once take two numbers
            runs = await self.records.runs(sweep.id)
            index = max((r.group_index or 0 for r in runs), default=-1) + 1
            base = self.intake.folder_of(old).parent
            job, spec = self.intake.new_job(
                request,
                ready,
                request.name or plan.run_name(sweep.name, params, sweep.varied),
                params,
                base / f"{index:04d}-{jobfiles.slug(plan.label(params, sweep.varied), 30)}",
                group_id=sweep.id,
                group_index=index,
            )
            spec["group"] = {"id": sweep.id, "index": index, "max_concurrent": sweep.max_concurrent}
            await python_work(make_run, self.intake.folder_of(job), ready.raw, spec)
            try:
                await self.store.insert(job)
            except BaseException:
                await asyncio.to_thread(shutil.rmtree, self.intake.folder_of(job), True)
                raise
        await self.hand_over(sweep, [job], discard=None)
        grown = sweep.model_copy(update={"size": max(sweep.size, index + 1), "cancelled_at": None})
        await self.records.update(grown)
        return await self.store.get(job.id)

    async def _copies(self, sweep: JobGroup, again: builtins.list[Job]) -> builtins.list[Job]:
        """New records and folders for the runs ``again``, each copied from its run's folder; a Conflict
        naming the runs whose folder no longer holds its snapshot, and then no copy is left."""
        fresh: list[Job] = []
        try:
            for old in again:
                fresh.append(await self._copy(sweep, old))
        except BaseException:
            for job in fresh:
                await asyncio.to_thread(shutil.rmtree, self.intake.folder_of(job), True)
            raise
        return fresh

    async def _copy(self, sweep: JobGroup, old: Job) -> Job:
        """A retry's record and folder for ``old``: its snapshot, and a job.json made from its record
        (never its own, which the run's code could have rewritten); a Conflict, in words, when its
        folder no longer holds its snapshot."""
        raw = await self.intake.snapshot_of(
            old,
            named=f"Run {(old.group_index or 0) + 1} of sweep '{sweep.id}' ({plan.label(old.parameters, sweep.varied)})",
            advice=f"Delete that run (DELETE jobs/{old.id}) to retry the others, or send the notebook anew.",
        )
        runtime = await self.intake.runtime_of(old, raw)
        folder = self.intake.folder_of(old)
        job = old.model_copy(
            update={
                "id": uuid.uuid4().hex[:12],
                "state": "queued",
                "reason": None,
                "message": "Waiting to start (a retry).",
                "created_at": time.time(),
                "started_at": None,
                "finished_at": None,
                "exit_code": None,
                "backend_job_id": None,
                "node": None,
                "pending_reason": None,
                "progress": type(old.progress)(),
            }
        )
        new_folder = folder.with_name(f"{folder.name.rsplit('-', 1)[0]}-{job.id}")
        shown = self.intake.shown(new_folder)
        job = job.model_copy(
            update={
                "job_dir": shown,
                "input_path": f"{shown}/{jobfiles.INPUT}",
                "output_path": f"{shown}/{Path(old.output_path).name}",
                "log_path": f"{shown}/{jobfiles.LOG}",
                "attempts": [],
                "checkpoint_dir": f"{shown}/{jobfiles.CHECKPOINT}",
            }
        )
        spec = self.intake.spec(job, runtime, (self.intake.root / old.notebook_path).parent)
        # which of checkpoint_dir and resumed the notebook declares, as the first run's job.json says
        earlier = await python_work(jobfiles.read_json, folder / jobfiles.JOB_JSON) or {}
        spec["resume_parameters"] = [
            p for p in RESUME_PARAMETERS if p in (earlier.get("resume_parameters") or ())
        ]
        spec["group"] = {"id": sweep.id, "index": old.group_index, "max_concurrent": sweep.max_concurrent}
        await python_work(make_run, new_folder, raw, spec)
        return job

    async def results(self, sweep_id: str) -> SweepResults:
        """Every run's parameters, recorded values, state, duration and GPU energy (with its CO2e and cost
        at the site's numbers), in the sweep's order; values cut at ``result_value_bytes`` each and after
        ``results_bytes`` in all, each row saying so."""
        sweep = await self._summary(sweep_id)
        runs = await self.records.runs(sweep_id)
        paths = [self.intake.folder_of(r) / Path(r.output_path).name for r in runs]
        found = await python_work(results.gather, paths, self.result_value_bytes, self.results_bytes)
        now = time.time()
        priced = [self.prices.priced(r.gpu) for r in runs]
        rows = [
            SweepRow(
                index=r.group_index or 0,
                job_id=r.id,
                state=r.state,
                duration_seconds=round((r.finished_at or now) - r.started_at, 3) if r.started_at else None,
                energy_joules=gpu.energy_joules if gpu else None,
                co2e_grams=gpu.co2e_grams if gpu else None,
                cost=gpu.cost if gpu else None,
                parameters={k: r.parameters.get(k) for k in sweep.varied},
                values=rec.values,
                cut=list(rec.cut),
                note=" ".join([*rec.notes, f"See {r.output_path} for the whole."]) if rec.notes else None,
                output_path=r.output_path,
            )
            for r, rec, gpu in zip(runs, found, priced, strict=True)
        ]
        columns = list(dict.fromkeys(k for row in rows for k in row.values))
        return SweepResults(
            group=sweep,
            parameter_columns=sweep.varied,
            value_columns=columns,
            rows=rows,
            cut=any(row.cut for row in rows),
        )

    async def results_csv(self, sweep_id: str) -> tuple[str, str]:
        """:meth:`results` as CSV (made off the event loop), and the file's name: the sweep's, with its id."""
        table = await self.results(sweep_id)
        return f"{jobfiles.slug(table.group.name)}-{sweep_id}.csv", await python_work(results.as_csv, table)
