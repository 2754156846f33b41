"""Pipelines: `pipeline run FILE [--wait]`, `pipeline list`, `pipeline show|cancel ID`, and
`pipeline rerun ID --from NODE` (`pipelines` is the older spelling of `pipeline list`).

A pipeline sent from here is the same as one sent from the sidebar. On SLURM it is submitted whole,
with dependencies, and goes on with no server; on the local backend (and for Kubernetes after a
crash) a Jupyter server moves it on, or this command with ``--wait``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import TYPE_CHECKING, Any, TextIO

from ...models.automation.pipelines import Pipeline
from ..common import UsageError, print_json, print_table
from ..config import Session, command_parser, older_spelling, run_command

if TYPE_CHECKING:
    from ...services import Library

ACTIONS = ("show", "cancel", "rerun")
ENDED = ("succeeded", "failed", "cancelled")
_MARKS = {"succeeded": "✓", "failed": "✗", "cancelled": "-", "skipped": "s", "running": "…"}


def _describe(p: Pipeline, out: TextIO | None = None) -> None:
    out = out or sys.stderr
    print(f"{p.id}  {p.name}: {p.state}", file=out)
    for n in p.nodes:
        parents = (
            f" after {', '.join(n.after)}" + (f" ({n.when})" if n.when != "succeeded" else "")
            if n.after
            else ""
        )
        runs = f" [{n.counts.get('succeeded', 0)}/{sum(n.counts.values())} runs]" if n.kind == "sweep" else ""
        again = f" (attempt {n.attempts})" if n.attempts > 1 else ""
        note = f": {n.message}" if n.message and n.state in ("waiting", "skipped", "failed") else ""
        print(f"  {_MARKS.get(n.state, '·')} {n.id:16} {n.state:9}{runs}{parents}{again}{note}", file=out)


def relative_to_root(path: str, root: str) -> str:
    """``path`` (from here) as the server's root sees it; a UsageError when it lies outside."""
    real = os.path.realpath(os.path.abspath(path))
    if os.path.commonpath([real, root]) != root:
        raise UsageError(
            f"{path} is outside the root directory {root}; run from a folder that holds it or pass --root."
        )
    return os.path.relpath(real, root)


async def _follow(s: Library, pipeline_id: str, interval: float = 1.0) -> int:
    """Move the pipeline on and say what changes, until it ends; its exit code: 0 if it succeeded."""
    seen: dict[str, str] = {}
    while True:
        await s.jobs.refresh()
        await s.pipelines.advance()
        p = await s.pipelines.get(pipeline_id)
        for n in p.nodes:
            if seen.get(n.id) != n.state:
                seen[n.id] = n.state
                print(
                    f"{n.id}: {n.state}" + (f" ({n.message})" if n.state in ("skipped", "failed") else ""),
                    file=sys.stderr,
                )
        if p.state in ENDED:
            _describe(p)
            return 0 if p.state == "succeeded" else 1
        await asyncio.sleep(interval)


def cmd_pipeline(args: argparse.Namespace) -> int:
    """Run a pipeline file (`pipeline run FILE`), list them (`pipeline list`), or act on one: `pipeline
    show|cancel ID`, `pipeline rerun ID --from NODE`."""
    if args.action == "list":
        if args.target is not None:
            raise UsageError("pipeline list takes no id (pipeline show ID shows one)")
        return cmd_pipelines(args)
    if args.target is None:
        raise UsageError(
            f"pipeline {args.action} takes "
            + ("a *.pipeline.yaml file" if args.action == "run" else "a pipeline's id")
        )
    if args.action == "run":
        with Session(args) as session:
            path = relative_to_root(args.target, session.root)

            async def run(s: Library) -> int:
                made = await s.pipelines.submit_file(path)
                print(made.id)
                _describe(made)
                if not args.wait:
                    return 0
                try:
                    return await _follow(s, made.id)
                except asyncio.CancelledError:
                    print(f"Stopped following; pipeline {made.id} goes on.", file=sys.stderr)
                    raise

            return session.run(run)

    async def act(s: Library) -> int:
        if args.action == "cancel":
            shown = await s.pipelines.cancel(args.target)
        elif args.action == "rerun":
            if not args.from_node:
                raise UsageError("say which node to run again from: --from NODE")
            shown = await s.pipelines.rerun(args.target, args.from_node)
        else:
            shown = await s.pipelines.get(args.target)
        if args.json:
            print_json(shown)
        else:
            _describe(shown, sys.stdout)
        return 0

    return run_command(args, act)


def cmd_pipelines(args: argparse.Namespace) -> int:
    """List pipelines: each node's state as a mark (✓ succeeded, ✗ failed, s skipped, … running)."""

    async def run(s: Library) -> int:
        listing = await s.pipelines.list(limit=args.limit)
        if args.json:
            print_json(listing)
            return 0
        rows = [
            (p.id, p.name, p.state, "".join(_MARKS.get(n.state, "·") for n in p.nodes), p.file_path or "")
            for p in listing.items
        ]
        print_table(("ID", "NAME", "STATE", "NODES", "FILE"), rows, "No pipelines.")
        return 0

    return run_command(args, run)


def register(sub: Any) -> None:
    p = command_parser(sub, "pipeline", cmd_pipeline)
    p.add_argument("action", choices=("run", "list", *ACTIONS), help="run a file, list them, or act on one")
    p.add_argument(
        "target", metavar="FILE|ID", nargs="?", help="run: a *.pipeline.yaml file; else the pipeline's id"
    )
    p.add_argument("--limit", type=int, default=50, help="list: at most this many, newest first")
    p.add_argument("--from", dest="from_node", metavar="NODE", help="rerun: the node to run again from")
    p.add_argument(
        "--wait", action="store_true", help="run: follow it until it ends, moving it on (exit 1 if it fails)"
    )
    p.add_argument("--json", action="store_true", help="print the pipeline as JSON, as the API gives it")


def register_older(sub: Any) -> None:
    """The older spellings of these commands, still served (listed after every current one)."""
    p = older_spelling(sub, "pipelines", "pipeline list", cmd_pipelines)
    p.add_argument("--limit", type=int, default=50, help="at most this many, newest first")
    p.add_argument("--json", action="store_true", help="print the listing as JSON, as the API gives it")
