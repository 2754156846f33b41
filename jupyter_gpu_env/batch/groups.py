"""Sweeps as a whole: submitted in one go (one scheduler object where the backend has one), summarised,
cancelled, their failed runs retried, and their results gathered side by side.

A sweep's runs are ordinary jobs (a record, a folder, a log and an output notebook each) that share a
``group_id``; their folders live in one sweep folder, built aside and renamed into place whole, so a
refused sweep leaves neither records nor folders.
"""

from __future__ import annotations

import asyncio
import builtins
import csv
import io
import json
import shutil
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import Conflict
from ..models.jobs import TERMINAL_STATES, Job, JobRequest
from ..models.sweeps import JobGroup, JobGroupList, SweepResults, SweepRow
from ..offloop import python_work
from . import jobfiles, results, submission, sweeps
from .parameters import inspect_notebook

if TYPE_CHECKING:
    from .service import JobService, Prepared


class Sweeps:
    def __init__(self, jobs: JobService, *, max_runs: int = 1000) -> None:
        self.jobs = jobs
        self.max_runs = max_runs

    async def submit(self, request: JobRequest, snapshot: bytes | None = None) -> JobGroup:
        """Check the whole sweep, record it and hand all its runs to the backend at once."""
        sweep = sweeps.expand(request, self.max_runs)
        ready = await self.jobs.prepare(request, snapshot)
        declared = await python_work(inspect_notebook, ready.nb)
        await python_work(sweeps.check, declared, sweep, self.jobs.max_parameters_bytes)
        group_id = uuid.uuid4().hex[:12]
        name = request.name or ready.nb_file.stem
        base = self.jobs.job_dir / f"{submission.slug(name)}-sweep-{group_id}"
        runs = self._runs(request, ready, name, sweep, base, group_id, range(len(sweep.runs)))
        group = JobGroup(
            id=group_id,
            name=name,
            backend=ready.backend.name,
            notebook_path=self.jobs.shown(ready.nb_file),
            size=len(runs),
            max_concurrent=sweep.max_concurrent,
            varied=sweep.varied,
            parameters=request.parameters,
            counts={"queued": len(runs)},
            state="queued",
            created_at=time.time(),
        )
        await python_work(
            _build_sweep_folder, base, ready.raw, [(self.jobs.folder_of(j), s) for j, s in runs]
        )
        try:
            await self.jobs.store.insert_group(group, [j for j, _ in runs])
        except BaseException:
            await asyncio.to_thread(shutil.rmtree, base, True)
            raise
        await self._hand_over(group, [j for j, _ in runs], discard=base)
        return await self.get(group_id)

    def _runs(
        self,
        request: JobRequest,
        ready: Prepared,
        name: str,
        sweep: sweeps.Sweep,
        base: Path,
        group_id: str,
        indexes: range | list[int],
    ) -> list[tuple[Job, dict[str, Any]]]:
        out = []
        for i in indexes:
            params = sweep.runs[i]
            label = sweeps.label(params, sweep.varied)
            job, spec = self.jobs.new_job(
                request, ready, sweeps.run_name(name, params, sweep.varied), params,
                base / f"{i:04d}-{submission.slug(label, 30)}",
                group_id=group_id, group_index=i,
            )  # fmt: skip
            spec["group"] = {"id": group_id, "index": i, "max_concurrent": sweep.max_concurrent}
            out.append((job, spec))
        return out

    async def _hand_over(self, group: JobGroup, runs: list[Job], *, discard: Path | None) -> None:
        backend = self.jobs.backends[group.backend]
        try:
            seen = await backend.submit_group(runs, group.max_concurrent)
        except BaseException:
            await self.jobs.store.discard(run.id for run in runs)
            if discard is not None:
                await asyncio.to_thread(shutil.rmtree, discard, True)
            else:
                for run in runs:
                    await asyncio.to_thread(shutil.rmtree, self.jobs.folder_of(run), True)
            raise
        for run in runs:
            if run.id in seen.runs:
                await self.jobs.tracker.apply(run, seen.runs[run.id], None)
        if seen.backend_job_id and group.backend_job_id is None:  # a retry's array is not the sweep's
            await self.jobs.store.update_group(
                group.model_copy(update={"backend_job_id": seen.backend_job_id})
            )

    async def list(self, *, limit: int = 50, offset: int = 0) -> JobGroupList:
        """Sweeps, newest first, each with its runs counted per state and its idle runs named."""
        page = await self.jobs.store.list_groups(limit=limit, offset=offset)
        idle = await self._idle([g.id for g in page.items if g.counts.get("running")])
        page.items = [g.model_copy(update={"gpu_idle_runs": idle.get(g.id, [])}) for g in page.items]
        return page

    async def get(self, group_id: str) -> JobGroup:
        group = await self.jobs.store.get_group(group_id)
        if group.counts.get("running"):
            idle = await self._idle([group.id])
            group = group.model_copy(update={"gpu_idle_runs": idle.get(group.id, [])})
        return group

    async def _idle(self, group_ids: builtins.list[str]) -> dict[str, builtins.list[str]]:
        return await self.jobs.store.idle_runs(group_ids, self.jobs.gpu_idle_seconds)

    async def cancel(self, group_id: str) -> JobGroup:
        """Cancel every run still queued or running; Conflict when none is."""
        runs = await self.jobs.store.group_jobs(group_id)
        active = [r for r in runs if r.state not in TERMINAL_STATES]
        if not active:
            raise Conflict(f"Every run of sweep '{group_id}' has already ended.", reason="job_finished")
        backend = self.jobs.backends.get(active[0].backend)
        if backend is not None:
            await backend.cancel_group(active)
        for run in active:
            try:
                await self.jobs.store.update(
                    run.id, state="cancelled", reason="cancelled", message="Cancelled by the user.",
                    pending_reason=None,
                )  # fmt: skip
            except Conflict:
                continue  # it ended on its own meanwhile
        return await self.get(group_id)

    async def retry_failed(self, group_id: str) -> JobGroup:
        """Run again, with the same snapshot and parameters, the runs that failed or were cancelled; the
        others are left as they are. Conflict while none did."""
        group = await self.get(group_id)
        runs = await self.jobs.store.group_jobs(group_id)
        again = [r for r in runs if r.state in ("failed", "cancelled")]
        if not again:
            raise Conflict(
                f"No run of sweep '{group_id}' failed or was cancelled.", reason="nothing_to_retry"
            )
        fresh: list[Job] = []
        for old in again:
            folder = self.jobs.folder_of(old)
            job = old.model_copy(
                update={
                    "id": uuid.uuid4().hex[:12], "state": "queued", "reason": None,
                    "message": "Waiting to start (a retry).", "created_at": time.time(), "started_at": None,
                    "finished_at": None, "exit_code": None, "backend_job_id": None, "pending_reason": None,
                    "progress": type(old.progress)(),
                }
            )  # fmt: skip
            new_folder = folder.with_name(f"{folder.name.rsplit('-', 1)[0]}-{job.id}")
            shown = self.jobs.shown(new_folder)
            job = job.model_copy(
                update={
                    "job_dir": shown, "input_path": f"{shown}/{jobfiles.INPUT}",
                    "output_path": f"{shown}/{Path(old.output_path).name}", "log_path": f"{shown}/{jobfiles.LOG}",
                }
            )  # fmt: skip
            await python_work(_copy_run, folder, new_folder, job.id)
            fresh.append(job)
        await self.jobs.store.replace(again, fresh)
        try:
            await self._hand_over(group, fresh, discard=None)
        except BaseException:
            # refused: the failed runs stand as they were, records and folders
            await asyncio.shield(self.jobs.store.unhide([r.id for r in again]))
            raise
        for old in again:  # their place is taken only once the backend has the new runs
            await asyncio.to_thread(shutil.rmtree, self.jobs.folder_of(old), True)
        return await self.get(group_id)

    async def results(self, group_id: str) -> SweepResults:
        """Every run's parameters, recorded values, state and duration, in the sweep's order."""
        group = await self.get(group_id)
        runs = await self.jobs.store.group_jobs(group_id)
        folders = [self.jobs.folder_of(r) / Path(r.output_path).name for r in runs]
        found = await python_work(lambda: [results.read_recorded(p) or {} for p in folders])
        now = time.time()
        rows = [
            SweepRow(
                index=r.group_index or 0,
                job_id=r.id,
                state=r.state,
                duration_seconds=round((r.finished_at or now) - r.started_at, 3) if r.started_at else None,
                parameters={k: r.parameters.get(k) for k in group.varied},
                values=values,
                output_path=r.output_path,
            )
            for r, values in zip(runs, found, strict=True)
        ]
        columns = list(dict.fromkeys(k for row in rows for k in row.values))
        return SweepResults(group=group, parameter_columns=group.varied, value_columns=columns, rows=rows)


def as_csv(table: SweepResults) -> str:
    """The results as CSV: a row per run, parameters then recorded values, then state and duration."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(
        ["run", *table.parameter_columns, *table.value_columns, "state", "duration_seconds", "job_id"]
    )
    for row in table.rows:
        writer.writerow(
            [
                row.index,
                *(_cell(row.parameters.get(c)) for c in table.parameter_columns),
                *(_cell(row.values.get(c)) for c in table.value_columns),
                row.state,
                "" if row.duration_seconds is None else row.duration_seconds,
                row.job_id,
            ]
        )
    return out.getvalue()


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    return (
        value if isinstance(value, int | float | str) and not isinstance(value, bool) else json.dumps(value)
    )


def _build_sweep_folder(base: Path, raw: bytes, runs: list[tuple[Path, dict[str, Any]]]) -> None:
    """Every run's folder (the snapshot, hard-linked, and its job.json) in a hidden sibling of ``base``,
    renamed into place whole."""
    tmp = base.with_name(f".tmp-{base.name}")
    tmp.mkdir(parents=True)
    try:
        first: Path | None = None
        for folder, spec in runs:
            run = tmp / folder.name
            run.mkdir()
            if first is None:
                first = run / jobfiles.INPUT
                first.write_bytes(raw)
            else:
                (run / jobfiles.INPUT).hardlink_to(first)  # the runner reads it and never writes it
            jobfiles.write_json_atomic(run / jobfiles.JOB_JSON, spec)
        tmp.rename(base)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _copy_run(old: Path, new: Path, job_id: str) -> None:
    """A retried run's folder: the old one's snapshot and job.json (with the new id), nothing it made."""
    tmp = new.with_name(f".tmp-{new.name}")
    tmp.mkdir()
    try:
        shutil.copy2(old / jobfiles.INPUT, tmp / jobfiles.INPUT)
        spec = json.loads((old / jobfiles.JOB_JSON).read_text())
        jobfiles.write_json_atomic(tmp / jobfiles.JOB_JSON, {**spec, "id": job_id})
        tmp.rename(new)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
