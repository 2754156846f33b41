"""Sweeps from a terminal: following one `job run` made, and `sweep list|show|cancel|rerun|results`."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING, Any

from ..efficiency.words import carbon_text, energy_text
from ..jobs.sweeps.results import as_csv
from ..models.jobs import TERMINAL_STATES
from ..models.sweeps import JobGroup
from .common import money, print_facts, print_json, print_table
from .config import command_parser, older_spelling, verb_parsers, with_services
from .progress import ProgressBar

if TYPE_CHECKING:
    from ..jobs.service import JobService
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
    print(f"  results: jupyter gpu-env sweep results {sweep.id}", file=sys.stderr)
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
    """A sweep's runs side by side: parameters, what each recorded, state, duration and GPU energy (with
    CO2e and cost where the site set its numbers)."""
    await s.jobs.refresh()
    table = await s.sweeps.results(args.sweep)
    if args.csv:
        sys.stdout.write(as_csv(table))
    elif args.json:
        print_json(table)
    else:
        carbon = any(r.co2e_grams is not None for r in table.rows)
        costs = any(r.cost is not None for r in table.rows)
        head = ("RUN", *table.parameter_columns, *table.value_columns, "STATE", "SECONDS", "GPU ENERGY")
        head += ("CO2E",) * carbon + ("COST",) * costs
        rows = [
            (
                r.index,
                *(r.parameters.get(c) for c in table.parameter_columns),
                *(r.values.get(c) for c in table.value_columns),
                r.state,
                r.duration_seconds,
                None if r.energy_joules is None else energy_text(r.energy_joules),
                *([None if r.co2e_grams is None else carbon_text(r.co2e_grams)] if carbon else []),
                *([None if r.cost is None else money(r.cost)] if costs else []),
            )
            for r in table.rows
        ]
        print_table(head, rows, "The sweep has no runs.")
        for r in table.rows:
            if r.note:
                print(f"Run {r.index}: {r.note}", file=sys.stderr)  # what was cut, and where the whole is
    return 0


@with_services
async def cmd_sweeps(s: Library, args: argparse.Namespace) -> int:
    """List sweeps, newest first: each one's runs counted per state."""
    await s.jobs.refresh()
    listing = await s.sweeps.list(limit=args.limit)
    if args.json:
        print_json(listing)
        return 0
    rows = [(g.id, g.name, g.state, g.backend, f"{g.size} runs", counts(g)) for g in listing.items]
    print_table(("ID", "NAME", "STATE", "BACKEND", "SIZE", "RUNS"), rows, "No sweeps.")
    if listing.next_offset is not None:
        print(f"(the newest {args.limit}; see more with --limit)", file=sys.stderr)
    return 0


@with_services
async def cmd_show(s: Library, args: argparse.Namespace) -> int:
    """One sweep: its state, what it varies, its runs counted per state."""
    await s.jobs.refresh()
    sweep = await s.sweeps.get(args.sweep)
    if args.json:
        print_json(sweep)
        return 0
    print_facts(
        [
            ("sweep", f"{sweep.id} ({sweep.name})"),
            ("state", sweep.state),
            ("backend", f"{sweep.backend}, {sweep.max_concurrent} at a time"),
            ("varies", ", ".join(sweep.varied) or "-"),
            ("runs", f"{sweep.size}: {counts(sweep)}"),
            (
                "its runs",
                f"jupyter gpu-env job list --runs; results: jupyter gpu-env sweep results {sweep.id}",
            ),
        ]
    )
    return 0


@with_services
async def cmd_cancel(s: Library, args: argparse.Namespace) -> int:
    """Cancel every run of a sweep still queued or running."""
    sweep = await s.sweeps.cancel(args.sweep)
    print(f"Cancelled sweep {sweep.id} ({sweep.name}): {counts(sweep)}")
    return 0


@with_services
async def cmd_rerun(s: Library, args: argparse.Namespace) -> int:
    """Run the failed and cancelled runs of a sweep again (the others are left as they are)."""
    sweep = await s.sweeps.retry_failed(args.sweep)
    print(f"Sweep {sweep.id} ({sweep.name}) runs again what failed or was cancelled: {counts(sweep)}")
    return 0


def _sweep_argument(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p.add_argument("sweep", metavar="SWEEP", help="a sweep's id (what `job run` printed)")
    return p


def _results_arguments(p: argparse.ArgumentParser) -> None:
    out = _sweep_argument(p).add_mutually_exclusive_group()
    out.add_argument("--csv", action="store_true", help="print CSV: a row per run")
    out.add_argument("--json", action="store_true", help="print the table as JSON")


def register(sub: Any) -> None:
    verbs = verb_parsers(
        sub, "sweep", "Sweeps: one notebook run once per set of values (`job run -p a 1,2,3`)."
    )
    p = command_parser(verbs, "list", cmd_sweeps)
    p.add_argument("--limit", type=int, default=50, metavar="N", help="at most N rows (default: 50)")
    p.add_argument("--json", action="store_true", help="print the listing as JSON, as the API gives it")
    _sweep_argument(command_parser(verbs, "show", cmd_show)).add_argument(
        "--json", action="store_true", help="print the sweep as JSON, as the API gives it"
    )
    _sweep_argument(command_parser(verbs, "cancel", cmd_cancel))
    _sweep_argument(command_parser(verbs, "rerun", cmd_rerun))
    _results_arguments(command_parser(verbs, "results", cmd_results))


def register_older(sub: Any) -> None:
    """The older spellings of these commands, still served (listed after every current one)."""
    _results_arguments(older_spelling(sub, "results", "sweep results", cmd_results))
