"""Sweeps from a terminal: following one `submit` made, and `results SWEEP`."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING, Any

from ..batch.sweeps.results import as_csv
from ..models.jobs import TERMINAL_STATES
from ..models.sweeps import JobGroup
from .common import print_json, print_table
from .config import command_parser, with_services
from .progress import ProgressBar

if TYPE_CHECKING:
    from ..batch.service import JobService
    from ..services import Library

POLL_SECONDS = 0.5


def counts(sweep: JobGroup) -> str:
    return ", ".join(f"{n} {state}" for state, n in sweep.counts.items() if n)


async def follow_sweep(svc: JobService, sweep: JobGroup, args: argparse.Namespace) -> int:
    """Print the sweep's id (what scripts capture); with --wait, follow it to its end."""
    print(sweep.id)
    at_once = f", {sweep.max_concurrent} at a time" if sweep.max_concurrent < sweep.size else ""
    print(
        f"Submitted a sweep of {sweep.size} runs of '{sweep.name}' to {sweep.backend}{at_once}",
        file=sys.stderr,
    )
    print(f"  results: jupyter gpu-env results {sweep.id}", file=sys.stderr)
    if not args.wait:
        return 0
    bar = ProgressBar(f"sweep {sweep.id}", verbose=False)
    try:
        while sweep.state not in TERMINAL_STATES:
            done = sum(sweep.counts.get(s, 0) for s in TERMINAL_STATES)
            bar.progress(done / sweep.size, f"{done} of {sweep.size} ended ({counts(sweep)})")
            await asyncio.sleep(POLL_SECONDS)
            await svc.refresh()
            sweep = await svc.sweeps.get(sweep.id)
    except (KeyboardInterrupt, asyncio.CancelledError):
        bar.close("Stopped waiting; the sweep goes on")
        raise
    bar.progress(1.0, counts(sweep))
    bar.close()
    print(f"Sweep {sweep.id} {sweep.state}: {counts(sweep)}", file=sys.stderr)
    return 0 if sweep.state == "succeeded" else 1


@with_services
async def cmd_results(s: Library, args: argparse.Namespace) -> int:
    """A sweep's runs side by side: parameters, what each recorded, state and duration."""
    await s.jobs.refresh()
    table = await s.sweeps.results(args.sweep)
    if args.csv:
        sys.stdout.write(as_csv(table))
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
        for r in table.rows:
            if r.note:
                print(f"Run {r.index}: {r.note}", file=sys.stderr)  # what was cut, and where the whole is
    return 0


def register(sub: Any) -> None:
    p = command_parser(sub, "results", cmd_results)
    p.add_argument("sweep", metavar="SWEEP", help="a sweep's id (what submit printed)")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--csv", action="store_true", help="print CSV: a row per run")
    out.add_argument("--json", action="store_true", help="print the table as JSON")
