"""Dask clusters: `dask start`, `dask list`, `dask scale ID N` (or `--adapt MIN:MAX`), `dask stop ID`.

A cluster started here is the one the sidebar shows: its scheduler runs on the backend and keeps its
workers, so this command ends at once (`--wait` waits until its workers have joined).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING, Any, TextIO

from ...models.automation.dask import DaskAdapt, DaskCluster, DaskClusterRequest, DaskScaleRequest
from ...models.resources import Resources
from ..common import UsageError, print_json, print_table
from ..config import command_parser, run_command, say_older

if TYPE_CHECKING:
    from ...services import Library


def _workers(c: DaskCluster) -> str:
    w = c.workers
    pending = f", {w.pending} pending" if w.pending else ""
    return f"{w.running}/{w.requested}{pending}"


def _describe(c: DaskCluster, out: TextIO) -> None:
    print(f"{c.id}  {c.name} on {c.backend}: {c.state}" + (f" ({c.message})" if c.message else ""), file=out)
    if c.scheduler_address:
        print(f"  scheduler  {c.scheduler_address}", file=out)
    if c.tls is not None:
        print(f"  tls        {c.tls.cert_file} (its key readable by you alone)", file=out)
    if c.client_code:
        print("  client", file=out)
        for line in c.client_code.splitlines():
            print(f"    {line}" if line else "", file=out)
    if c.dashboard:
        print(f"  dashboard  {c.dashboard} (through the Jupyter server)", file=out)
    scale = f" (adapt {c.adapt.minimum}..{c.adapt.maximum})" if c.adapt else ""
    if c.layout == "one_allocation":
        apart = c.workers.running + c.workers.pending - c.workers.in_allocation
        more = f", {apart} more as jobs of their own" if apart > 0 else ""
        life = f"one allocation with the scheduler{more}; it ends at ~{c.walltime_seconds // 60} min"
    else:
        life = f"each retires after ~{c.lifetime_seconds // 60} min and is replaced"
    print(f"  workers    {_workers(c)}{scale}; {life}", file=out)
    for p in c.workers.pending_workers[:10]:
        place = f" place {p.place}" if p.place else ""
        print(f"    {p.name}: {p.state}{place}" + (f" ({p.reason})" if p.reason else ""), file=out)
    for problem in c.problems:
        print(f"  ! {problem}", file=out)


def _adapt(text: str) -> DaskAdapt:
    low, sep, high = text.partition(":")
    if not sep or not low.isdigit() or not high.isdigit():
        raise UsageError(f"--adapt takes MIN:MAX, e.g. 0:10, not {text!r}")
    return DaskAdapt(minimum=int(low), maximum=int(high))


async def _until_ready(s: Library, cluster_id: str, interval: float = 1.0) -> DaskCluster:
    said = ""
    while True:
        c = await s.dask.get(cluster_id)
        line = f"{c.state}: {_workers(c)} workers" + (f" ({c.message})" if c.message else "")
        if line != said:
            print(line, file=sys.stderr)
            said = line
        if c.state in ("stopped", "failed") or (
            c.state == "running" and c.workers.running >= c.workers.requested and not c.workers.pending
        ):
            return c
        await asyncio.sleep(interval)


def cmd_dask(args: argparse.Namespace) -> int:
    """Dask clusters on the batch system, in an environment: start, list, show, scale, cancel (shut down;
    `stop` is its older spelling)."""

    async def run(s: Library) -> int:
        if args.action == "list":
            listing = await s.dask.list(limit=args.limit)
            if args.json:
                print_json(listing)
                return 0
            rows = [
                (c.id, c.name, c.backend, c.state, _workers(c), c.scheduler_address or "")
                for c in listing.items
            ]
            print_table(("ID", "NAME", "BACKEND", "STATE", "WORKERS", "SCHEDULER"), rows, "No Dask clusters.")
            return 0
        if args.action == "start":
            shown = await s.dask.create(_request(args))
            print(shown.id)
            if args.wait:
                shown = await _until_ready(s, shown.id)
        else:
            if not args.id:
                raise UsageError(f"say which cluster: dask {args.action} ID")
            if args.action == "scale":
                if (args.workers is None) == (args.adapt is None):
                    raise UsageError("give a number of workers or --adapt MIN:MAX")
                adapt = _adapt(args.adapt) if args.adapt else None
                shown = await s.dask.scale(args.id, DaskScaleRequest(workers=args.workers, adapt=adapt))
            elif args.action in ("cancel", "stop"):
                if args.action == "stop":
                    say_older("dask stop", "dask cancel")
                await s.dask.stop(args.id)
                shown = await s.dask.wait_stopped(args.id)
            else:
                shown = await s.dask.get(args.id)
        if args.json:
            print_json(shown)
        else:
            _describe(shown, sys.stdout)
        return 0 if shown.state != "failed" else 1

    return run_command(args, run)


def _request(args: argparse.Namespace) -> DaskClusterRequest:
    if args.start_workers is not None and args.adapt:
        raise UsageError("give a number of workers or --adapt MIN:MAX, not both")
    if not (args.env or args.kernel or args.image):
        raise UsageError("say what the workers run in: --env E, --kernel K or --image I")
    return DaskClusterRequest(
        name=args.name,
        environment=args.env,
        kernel=args.kernel,
        image=args.image,
        backend=args.backend,
        workers=args.start_workers,
        adapt=_adapt(args.adapt) if args.adapt else None,
        resources=Resources(
            cpus=args.cpus,
            memory=args.memory,
            gpus=args.gpus,
            mig_profile=args.mig,
            time_limit=args.time_limit,
        ),
        queue=args.queue,
        threads_per_worker=args.threads,
    )


def register(sub: Any) -> None:
    p = command_parser(sub, "dask", cmd_dask)
    p.add_argument("action", choices=("start", "list", "show", "scale", "cancel", "stop"))
    p.add_argument("id", nargs="?", metavar="ID", help="the cluster (show, scale, cancel)")
    p.add_argument("workers", nargs="?", type=int, metavar="N", help="scale: this many workers")
    runtime = p.add_mutually_exclusive_group()
    runtime.add_argument("--env", metavar="E", help="start: the environment scheduler and workers run in")
    runtime.add_argument("--kernel", metavar="K", help="start: a kernel whose environment they run in")
    runtime.add_argument("--image", metavar="I", help="start: a packed image they run from")
    p.add_argument("--backend", default="local", help="start: where it runs (default: local)")
    p.add_argument("--name", help="start: its name in lists and the usage ledger")
    p.add_argument(
        "-n", "--workers", dest="start_workers", type=int, metavar="N", help="start: this many workers"
    )
    p.add_argument("--adapt", metavar="MIN:MAX", help="start or scale: adaptive, between MIN and MAX workers")
    p.add_argument("--cpus", type=int, metavar="N", help="each worker's CPU cores")
    p.add_argument("--memory", metavar="SIZE", help="each worker's memory, e.g. 4G")
    p.add_argument("--gpus", type=int, metavar="N", help="each worker's whole GPUs")
    p.add_argument("--mig", metavar="PROFILE", help="each worker's MIG slice, e.g. 1g.10gb")
    p.add_argument("--threads", type=int, metavar="N", help="threads in each worker (default: its cpus)")
    p.add_argument(
        "--time-limit",
        "--walltime",  # the older name, still read
        dest="time_limit",
        metavar="LIMIT",
        help="each worker job's time limit: minutes or HH:MM:SS (--walltime is the older name)",
    )
    p.add_argument("--queue", metavar="Q", help="the partition or queue")
    p.add_argument("--wait", action="store_true", help="start: wait until the workers have joined")
    p.add_argument("--limit", type=int, default=50, help="list: at most this many")
    p.add_argument("--json", action="store_true", help="print the cluster(s) as JSON, as the API gives them")
