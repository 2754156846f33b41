"""Sweeps from a terminal: following one `submit` made, `results GROUP`, and `rerun JOB`."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING, Any

from ..batch import groups
from ..batch.rerun import rerun
from ..models.jobs import TERMINAL_STATES
from ..models.sweeps import JobGroup
from .common import parse_value, print_json, print_table
from .config import command_parser, run_command
from .progress import ProgressBar

if TYPE_CHECKING:
    from ..batch.service import JobService
    from ..services import Services

POLL_SECONDS = 0.5


def counts(group: JobGroup) -> str:
    return ", ".join(f"{n} {state}" for state, n in group.counts.items() if n)


async def follow_group(svc: JobService, group: JobGroup, args: argparse.Namespace) -> int:
    """Print the sweep's id (what scripts capture); with --wait, follow it to its end."""
    print(group.id)
    at_once = f", {group.max_concurrent} at a time" if group.max_concurrent < group.size else ""
    print(
        f"Submitted a sweep of {group.size} runs of '{group.name}' to {group.backend}{at_once}",
        file=sys.stderr,
    )
    print(f"  results: jupyter gpu-env results {group.id}", file=sys.stderr)
    if not args.wait:
        return 0
    bar = ProgressBar(f"sweep {group.id}", verbose=False)
    try:
        while group.state not in TERMINAL_STATES:
            done = sum(group.counts.get(s, 0) for s in TERMINAL_STATES)
            bar.progress(done / group.size, f"{done} of {group.size} ended ({counts(group)})")
            await asyncio.sleep(POLL_SECONDS)
            await svc.refresh()
            group = await svc.sweeps.get(group.id)
    except (KeyboardInterrupt, asyncio.CancelledError):
        bar.close("Stopped waiting; the sweep goes on")
        raise
    bar.progress(1.0, counts(group))
    bar.close()
    print(f"Sweep {group.id} {group.state}: {counts(group)}", file=sys.stderr)
    return 0 if group.state == "succeeded" else 1


def cmd_results(args: argparse.Namespace) -> int:
    """A sweep's runs side by side: parameters, what each recorded, state and duration."""

    async def run(s: Services) -> int:
        await s.jobs.refresh()
        table = await s.jobs.sweeps.results(args.group)
        if args.csv:
            sys.stdout.write(groups.as_csv(table))
        elif args.json:
            print_json(table)
        else:
            head = ("RUN", *table.parameter_columns, *table.value_columns, "STATE", "SECONDS")
            rows = [
                (r.index, *(r.parameters.get(c) for c in table.parameter_columns),
                 *(r.values.get(c) for c in table.value_columns), r.state, r.duration_seconds)
                for r in table.rows
            ]  # fmt: skip
            print_table(head, rows, "The sweep has no runs.")
        return 0

    return run_command(args, run)


def cmd_rerun(args: argparse.Namespace) -> int:
    """Send a job (or a run of a sweep) again: its snapshot and settings, parameters changed with -p."""

    async def run(s: Services) -> int:
        job = await rerun(s.jobs, args.job, {name: parse_value(v) for name, v in args.parameter})
        print(job.id)
        print(f"Sent '{job.name}' again to {job.backend} as {job.id}", file=sys.stderr)
        return 0

    return run_command(args, run)


def register(sub: Any) -> None:
    p = command_parser(sub, "results", cmd_results)
    p.add_argument("group", metavar="GROUP", help="a sweep's id (what submit printed)")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--csv", action="store_true", help="print CSV: a row per run")
    out.add_argument("--json", action="store_true", help="print the table as JSON")

    p = command_parser(sub, "rerun", cmd_rerun)
    p.add_argument("job", metavar="JOB", help="a job's id, or one run's of a sweep")
    p.add_argument(
        "-p", "--parameter", nargs=2, metavar=("NAME", "VALUE"), action="append", default=[],
        help="a parameter to change (VALUE read as JSON where it parses, else text)",
    )  # fmt: skip
