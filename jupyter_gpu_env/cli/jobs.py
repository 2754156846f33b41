"""Batch jobs: `job run|list|show|logs|cancel|rerun|usage` (and their older spellings `submit`, `jobs`,
`logs`, `cancel`, `rerun`).

Jobs run detached from this process (the local backend starts the runner in its own session), so
the command may end while its job runs; a server or a later command follows it. ``--wait`` and
``--follow`` poll the service: refresh the records from the backends, then read.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from typing import TYPE_CHECKING, Any

from ..efficiency.words import carbon_text, energy_text
from ..errors import GpuEnvError, InvalidRequest
from ..models.jobs import JOB_STATES, TERMINAL_STATES, Job
from ..models.sweeps import JobGroup
from .common import (
    UsageError,
    add_parameter_option,
    add_run_arguments,
    energy_words,
    human_duration,
    money,
    parse_value,
    print_facts,
    print_json,
    print_table,
    run_request,
    sweep_values,
)
from .config import Session, command_parser, older_spelling, run_command, verb_parsers, with_services
from .progress import ProgressBar
from .sweeps import follow_sweep

if TYPE_CHECKING:
    from ..jobs.service import JobService
    from ..services import Library

POLL_SECONDS = 0.5


class JobFailed(GpuEnvError):
    """A job waited for ended without succeeding."""


def _fraction(job: Job) -> float:
    p = job.progress
    return p.cells_done / p.cells_total if p.cells_total else 0.0


def _status(job: Job) -> str:
    if job.state == "queued":
        return f"queued: {job.pending_reason or job.message}"
    if job.state == "running" and job.progress.cells_total:
        return f"running: cell {job.progress.cells_done} of {job.progress.cells_total}"
    return f"{job.state}: {job.message}" if job.message else job.state


class _LogLines:
    """With --verbose, --wait shows the job's log lines above the bar as they come."""

    def __init__(self, svc: JobService, job_id: str, bar: ProgressBar) -> None:
        self.svc, self.job_id, self.bar = svc, job_id, bar
        self.offset, self.pending = 0, ""

    async def read(self) -> bool:
        """Show the complete lines written since the last read; False when nothing was new."""
        chunk = await self.svc.log(self.job_id, self.offset)
        new, self.offset = chunk.next_offset != self.offset, chunk.next_offset
        *lines, self.pending = (self.pending + chunk.text).split("\n")
        for line in lines:
            self.bar.log(line)
        return new


async def _wait(svc: JobService, job: Job, verbose: bool) -> Job:
    bar = ProgressBar(f"job {job.id}", verbose=verbose)
    lines = _LogLines(svc, job.id, bar) if verbose else None
    try:
        while job.state not in TERMINAL_STATES:
            bar.progress(_fraction(job), _status(job))
            await asyncio.sleep(POLL_SECONDS)
            await svc.refresh()
            job = await svc.get(job.id)
            if lines is not None:
                await lines.read()
    except (KeyboardInterrupt, asyncio.CancelledError):  # Ctrl-C: stop waiting, never stop the job
        bar.close("Stopped waiting; the job goes on")
        print(f"Follow it with: jupyter gpu-env job logs --follow {job.id}", file=sys.stderr)
        raise
    if lines is not None:
        while await lines.read():
            pass
        if lines.pending:
            bar.log(lines.pending)
    bar.progress(_fraction(job), _status(job))
    bar.close()
    return job


def cmd_submit(args: argparse.Namespace) -> int:
    """Run a notebook as a batch job, with parameters; prints the job id."""

    if args.max_concurrent is not None and not any(sweep_values(v) for _, v in args.parameter):
        raise UsageError(
            "--max-concurrent applies to a sweep: give a parameter several values (1,2,3 or 0:1:0.1)"
        )

    async def run(s: Library) -> int:
        job = await s.jobs.submit(run_request(args, session.root))
        if isinstance(job, JobGroup):
            return await follow_sweep(s.jobs, job, args)
        print(job.id)
        print(f"Submitted '{job.name}' to {job.backend}: {_status(job)}", file=sys.stderr)
        print(f"  output: {job.output_path}", file=sys.stderr)
        if not args.wait:
            return 0
        job = await _wait(s.jobs, job, args.verbose)
        if job.state != "succeeded":
            raise JobFailed(f"job {job.id} {job.state}: {job.message}")
        print(f"Job {job.id} succeeded in {_elapsed(job)}; output: {job.output_path}", file=sys.stderr)
        return 0

    with Session(args) as session:  # the root it resolved places the notebook
        return session.run(run)


def _elapsed(job: Job) -> str:
    if job.started_at is None:
        return "-"
    return human_duration((job.finished_at or time.time()) - job.started_at)


def _sweep_row(g: JobGroup) -> tuple[object, ...]:
    done = sum(n for state, n in g.counts.items() if state in TERMINAL_STATES)
    ended = g.finished_at or time.time()
    return (
        g.id,
        f"{g.name} (sweep of {g.size})",
        g.state,
        g.backend,
        f"{done}/{g.size} runs",
        human_duration(ended - g.created_at),
        None,  # its runs' energy: `sweep results`
    )


def cmd_jobs(args: argparse.Namespace) -> int:
    """List batch jobs, newest first: a sweep is one row, with its id (``sweep results ID``, ``sweep
    cancel ID``); --runs lists its runs one by one."""

    if args.limit < 1:
        raise UsageError("--limit must be at least 1")

    async def run(s: Library) -> int:
        await s.jobs.refresh()
        if args.json or args.runs:
            listing = await s.jobs.list(args.state or None, limit=args.limit)
        else:
            listing = await s.jobs.list(args.state or None, limit=args.limit, sweep="none")
        if args.json:
            print_json(listing)
            return 0
        rows: list[tuple[float, tuple[object, ...]]] = [
            (
                j.created_at,
                (
                    j.id,
                    j.name,
                    j.state,
                    j.backend,
                    f"{j.progress.cells_done}/{j.progress.cells_total} cells"
                    if j.progress.cells_total
                    else None,
                    _elapsed(j),
                    energy_text(j.gpu.energy_joules) if j.gpu and j.gpu.energy_joules is not None else None,
                ),
            )
            for j in listing.items
        ]
        more = listing.next_offset is not None
        if not args.runs:
            sweeps = await s.sweeps.list(limit=args.limit)
            chosen = [g for g in sweeps.items if not args.state or g.state in args.state]
            rows += [(g.created_at, _sweep_row(g)) for g in chosen]
            more = more or sweeps.next_offset is not None or len(rows) > args.limit
        rows.sort(key=lambda r: r[0], reverse=True)
        print_table(
            ("ID", "NAME", "STATE", "BACKEND", "PROGRESS", "ELAPSED", "GPU ENERGY"),
            [r for _, r in rows[: args.limit]],
            "No jobs.",
        )
        if more:
            print(f"(the newest {args.limit}; see more with --limit)", file=sys.stderr)
        return 0

    return run_command(args, run)


@with_services
async def cmd_logs(s: Library, args: argparse.Namespace) -> int:
    """Print a job's log; --follow keeps printing until the job ends."""
    await s.jobs.refresh()
    job = await s.jobs.get(args.job)
    folder = s.jobs.folder_of(job)
    if not folder.is_dir():
        raise InvalidRequest(
            f"The folder of job {job.id} is not at {folder}: it was submitted with another root "
            "directory; pass that one with --root."
        )
    offset = 0
    while True:
        chunk = await s.jobs.log(job.id, offset)
        if chunk.text:
            sys.stdout.write(chunk.text)
            sys.stdout.flush()
        if chunk.eof or (chunk.next_offset == offset and not args.follow):
            return 0
        if chunk.next_offset == offset:
            await asyncio.sleep(POLL_SECONDS)
            await s.jobs.refresh()
        offset = chunk.next_offset


@with_services
async def cmd_cancel(s: Library, args: argparse.Namespace) -> int:
    """Cancel a queued or running job."""
    job = await s.jobs.cancel(args.job)
    print(f"Cancelled job {job.id} ({job.name})")
    return 0


@with_services
async def cmd_rerun(s: Library, args: argparse.Namespace) -> int:
    """Send a job (or a run of a sweep) again: its snapshot and settings, parameters changed with -p."""
    changes = {"name": args.name} if args.name else None
    job = await s.jobs.rerun(args.job, {name: parse_value(v) for name, v in args.parameter}, changes)
    print(job.id)
    print(f"Sent '{job.name}' again to {job.backend} as {job.id}", file=sys.stderr)
    return 0


@with_services
async def cmd_show(s: Library, args: argparse.Namespace) -> int:
    """One job: its state and message, where and how it runs, its output and log."""
    await s.jobs.refresh()
    job = await s.jobs.get(args.job)
    if args.json:
        print_json(job)
        return 0
    facts = [
        ("job", f"{job.id} ({job.name})"),
        ("state", f"{job.state}: {job.message}" if job.message else job.state),
        ("backend", job.backend + (f", queue {job.queue}" if job.queue else "")),
        ("notebook", job.notebook_path),
        ("parameters", ", ".join(f"{k}={v!r}" for k, v in job.parameters.items()) or None),
        ("progress", _status(job)),
        ("elapsed", _elapsed(job)),
        ("GPU energy", energy_words(job.gpu)),
        ("output", job.output_path),
        ("log", job.log_path),
        ("sweep", f"{job.group_id} (run {job.group_index})" if job.group_id else None),
    ]
    print_facts(facts)
    return 0


@with_services
async def cmd_usage(s: Library, args: argparse.Namespace) -> int:
    """GPU-hours allocated and used, and the GPUs' energy (with CO2e and cost where the site set its
    numbers), per week and backend, as `GET jobs/usage/weeks` counts them."""
    report = await s.jobs.usage_weeks(args.weeks)
    if args.json:
        print_json(report)
        return 0
    rows = []
    for week in report.weeks:
        day = time.strftime("%Y-%m-%d", time.localtime(week.week_start))
        for name, u in [*sorted(week.backends.items()), ("all", week.total)]:
            if name == "all" and len(week.backends) == 1:
                continue  # the one backend's row is the total
            rows.append(
                (
                    day,
                    name,
                    f"{u.gpu_hours:.2f}",
                    f"{u.gpu_hours_used:.2f}" if u.gpu_hours_measured else None,
                    energy_text(u.gpu_energy_kwh * 3.6e6) if u.gpu_hours_energy_measured else None,
                    carbon_text(u.co2e_grams) if u.co2e_grams is not None else None,
                    money(u.cost) if u.cost is not None else None,
                )
            )
    print_table(("WEEK", "BACKEND", "GPU-H", "USED", "GPU ENERGY", "CO2E", "COST"), rows, "No usage.")
    return 0


def _run_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("notebook", metavar="NOTEBOOK", help="the notebook to run (inside the root directory)")
    add_run_arguments(p)
    p.add_argument(
        "--wait", action="store_true", help="follow the job until it ends; exit 1 unless it succeeded"
    )


def _list_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--state", choices=JOB_STATES, action="append", help="only jobs in this state (repeatable)"
    )
    p.add_argument("--limit", type=int, default=50, metavar="N", help="at most N rows (default: 50)")
    p.add_argument(
        "--runs", action="store_true", help="list each run of a sweep as a row of its own, not the sweep"
    )
    p.add_argument(
        "--json", action="store_true", help="print the listing as JSON (as the API lists jobs: runs too)"
    )


def _job_argument(p: argparse.ArgumentParser, text: str = "the job's id") -> argparse.ArgumentParser:
    p.add_argument("job", metavar="JOB", help=text)
    return p


def _logs_arguments(p: argparse.ArgumentParser) -> None:
    _job_argument(p).add_argument(
        "-f", "--follow", action="store_true", help="keep printing until the job ends"
    )


def _rerun_arguments(p: argparse.ArgumentParser) -> None:
    add_parameter_option(
        _job_argument(p, "a job's id, or one run's of a sweep"),
        "-p",
        "--parameter",
        text="a parameter to change (VALUE read as JSON where it parses, else text)",
    )
    p.add_argument(
        "--name", help="a name for the new job, so that the two are told apart (default: the job's)"
    )


def register(sub: Any) -> None:
    verbs = verb_parsers(
        sub,
        "job",
        "Batch jobs: run a notebook, list, show, follow its log, cancel, run again; the usage per week.",
    )
    _run_arguments(command_parser(verbs, "run", cmd_submit))
    _list_arguments(command_parser(verbs, "list", cmd_jobs))
    _job_argument(command_parser(verbs, "show", cmd_show)).add_argument(
        "--json", action="store_true", help="print the job as JSON, as the API gives it"
    )
    _logs_arguments(command_parser(verbs, "logs", cmd_logs))
    _job_argument(command_parser(verbs, "cancel", cmd_cancel))
    _rerun_arguments(command_parser(verbs, "rerun", cmd_rerun))
    usage = command_parser(verbs, "usage", cmd_usage)
    usage.add_argument("--weeks", type=int, default=8, choices=range(1, 105), metavar="N",
                       help="the last N weeks, this one so far included (default: 8)")  # fmt: skip
    usage.add_argument("--json", action="store_true", help="print the weeks as JSON, as the API gives them")


def register_older(sub: Any) -> None:
    """The older spellings of these commands, still served (listed after every current one)."""
    _run_arguments(older_spelling(sub, "submit", "job run", cmd_submit))
    _list_arguments(older_spelling(sub, "jobs", "job list", cmd_jobs))
    _logs_arguments(older_spelling(sub, "logs", "job logs", cmd_logs))
    _job_argument(older_spelling(sub, "cancel", "job cancel", cmd_cancel))
    _rerun_arguments(older_spelling(sub, "rerun", "job rerun", cmd_rerun))
