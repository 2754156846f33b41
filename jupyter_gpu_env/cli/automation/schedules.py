"""Schedules: `schedule create NOTEBOOK --cron ...` (or `--every` an ISO-8601 interval), `schedule list`,
and `schedule pause|resume|run|rearm|snapshot|show|delete ID` (older spellings: `schedule NOTEBOOK ...`,
`schedules`).

A schedule made here is the same as one made in the sidebar: on SLURM or Kubernetes the batch system
keeps it and runs it with no server; on the local backend a Jupyter server runs it while it runs.
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import datetime
from typing import TYPE_CHECKING, Any, TextIO

from ...models.automation.schedules import Schedule
from ...pipelines.pipelinefile import is_pipeline_file
from ..common import UsageError, add_run_arguments, print_json, print_table, run_request
from ..config import Session, command_parser, older_spelling, run_command, say_older
from .pipelines import relative_to_root

if TYPE_CHECKING:
    from ...services import Library

ACTIONS = ("pause", "resume", "run", "rearm", "snapshot", "show", "delete")
_MARKS = {"succeeded": "✓", "failed": "✗", "cancelled": "-", "running": "…", "queued": "·"}


def _local_zone() -> str:
    """This terminal's IANA zone (``TZ``, else where /etc/localtime points), as the UI sends the
    browser's; UTC when it cannot be told."""
    zone = os.environ.get("TZ", "").lstrip(":")
    if zone and "/" in zone or zone == "UTC":
        return zone
    try:
        link = os.readlink("/etc/localtime")
    except OSError:
        return "UTC"
    return link.split("zoneinfo/", 1)[1] if "zoneinfo/" in link else "UTC"


def _when(at: float) -> str:
    return datetime.fromtimestamp(at).strftime("%a %d %b %H:%M")


def _marks(schedule: Schedule) -> str:
    return "".join(
        _MARKS.get(r.state or "", "·") if r.outcome == "started" else ("s" if r.outcome == "skipped" else "m")
        for r in reversed(schedule.last_runs[:10])
    )


def _describe(s: Schedule, out: TextIO | None = None) -> None:
    out = out or sys.stdout
    print(f"{s.id}  {s.name}: {s.description} ({s.schedule}), on {s.backend}", file=out)
    print(f"  {'active' if s.active else 'paused'}; {s.keeper.message}", file=out)
    for due in s.next_runs:
        local = datetime.fromisoformat(due.local).strftime("%a %d %b %H:%M")
        print(f"  next: {local} {s.timezone} ({due.utc})", file=out)
    for r in s.last_runs[:10]:
        what = f"job {r.job_id} {r.state or ''}" if r.job_id else r.message
        print(f"  {_when(r.due_at)}  {r.outcome:8} {what}", file=out)


def cmd_schedule(args: argparse.Namespace) -> int:
    """Run a notebook (or a *.pipeline.yaml, whole) on a schedule: `schedule create NOTEBOOK` with a cron
    line (--cron) or an ISO-8601 interval (--every); `schedule list`; or act on one: `schedule
    pause|resume|run|rearm|snapshot|show|delete ID`."""
    if args.target == "list":
        if args.id is not None:
            raise UsageError("schedule list takes no id (schedule show ID shows one)")
        return cmd_schedules(args)
    if args.target in ACTIONS and args.id is not None:
        return run_command(args, lambda s: _act(s, args.target, args.id))
    if args.target == "create":
        if args.id is None:
            raise UsageError("schedule create takes the notebook (or *.pipeline.yaml) to run")
        args.target, args.id = args.id, None
    elif args.target in ACTIONS:
        raise UsageError(f"schedule {args.target} takes a schedule's id")
    elif args.id is None:
        say_older("schedule NOTEBOOK", "schedule create NOTEBOOK")
    if args.id is not None:
        raise UsageError(
            f"give create and a notebook, list, or one of {', '.join(ACTIONS)} and a schedule's id"
        )
    expression = args.cron or args.every
    if not expression:
        raise UsageError("say when: --cron '0 6 * * *' (or @daily), or --every R/2026-12-01T06:00:00Z/PT6H")
    args.notebook = args.target

    async def run(s: Library) -> int:
        request: dict[str, Any]
        if is_pipeline_file(args.target):  # its nodes and their parameters are the file's
            request = {"pipeline_path": relative_to_root(args.target, session.root)}
            request |= {"name": args.name} if args.name else {}
        else:
            request = run_request(args, session.root)  # a -p with several values: a sweep
        request |= {
            "schedule": expression,
            "timezone": args.timezone or _local_zone(),
            "overlap": args.overlap,
            "active": not args.paused,
        }
        made = await s.schedules.create(request)
        print(made.id)
        _describe(made, sys.stderr)
        return 0

    with Session(args) as session:
        return session.run(run)


async def _act(s: Library, action: str, schedule_id: str) -> int:
    svc = s.schedules
    if action == "delete":
        await svc.delete(schedule_id)
        print(f"Deleted schedule {schedule_id}; its runs stay, as jobs.", file=sys.stderr)
        return 0
    if action == "run":
        job = await svc.run_now(schedule_id)
        print(job.id)
        print(
            f"Started '{job.name}' now" + (f" on {job.backend}" if hasattr(job, "backend") else ""),
            file=sys.stderr,
        )
        return 0
    if action in ("pause", "resume"):
        shown = await svc.update(schedule_id, {"active": action == "resume"})
    elif action == "rearm":
        shown = await svc.rearm(schedule_id)
    elif action == "snapshot":
        shown = await svc.update_snapshot(schedule_id)
    else:
        shown = await svc.get(schedule_id)
    _describe(shown)
    return 0


def cmd_schedules(args: argparse.Namespace) -> int:
    """List schedules: when each runs next, and how its last runs went (✓ succeeded, ✗ failed, s skipped,
    m missed)."""

    async def run(s: Library) -> int:
        listing = await s.schedules.list()
        if args.json:
            print_json(listing)
            return 0
        rows = [
            (
                x.id,
                x.name,
                x.description,
                x.backend,
                _when(x.next_runs[0].at) if x.next_runs else ("paused" if not x.active else "-"),
                _marks(x) or "-",
                "" if x.keeper.present else "LOST: rearm it",
            )
            for x in listing.items
        ]
        print_table(("ID", "NAME", "WHEN", "BACKEND", "NEXT", "LAST RUNS", ""), rows, "No schedules.")
        return 0

    return run_command(args, run)


def register(sub: Any) -> None:
    p = command_parser(sub, "schedule", cmd_schedule)
    p.add_argument(
        "target", metavar="VERB", help=f"create (then the notebook), list, or one of {', '.join(ACTIONS)}"
    )
    p.add_argument(
        "id", metavar="ID", nargs="?", help="create: the notebook to schedule; else the schedule's id"
    )
    p.add_argument("--json", action="store_true", help="list: print the listing as JSON, as the API gives it")
    when = p.add_mutually_exclusive_group()
    when.add_argument(
        "--cron",
        metavar="LINE",
        help="five fields (minute hour day month weekday) or @hourly, @daily, @weekly",
    )
    when.add_argument(
        "--every", metavar="ISO", help="an ISO-8601 repeating interval: R/START/PERIOD, Rn/START/PERIOD"
    )
    p.add_argument("--timezone", metavar="ZONE", help="an IANA time zone (default: this machine's)")
    p.add_argument(
        "--overlap",
        choices=("skip", "allow"),
        default="skip",
        help="a run due while the previous one still runs: skip it (default) or start it anyway",
    )
    p.add_argument("--paused", action="store_true", help="make it paused (resume it later)")
    add_run_arguments(p)


def register_older(sub: Any) -> None:
    """The older spellings of these commands, still served (listed after every current one)."""
    p = older_spelling(sub, "schedules", "schedule list", cmd_schedules)
    p.add_argument("--json", action="store_true", help="print the listing as JSON, as the API gives it")
