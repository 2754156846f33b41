"""New environments from a file (`create`) and environments shared with the team (`publish`,
`unpublish`)."""

from __future__ import annotations

import argparse
import asyncio
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..models.envs import KernelRequest, PublishRequest
from .changes import print_plan
from .common import UsageError, confirm, validated
from .config import command_parser, with_services
from .envs import register_kernel
from .progress import ProgressBar

if TYPE_CHECKING:
    from ..services import Library

ANYWHERE = Path("/")  # the root a terminal reads environment files under


@with_services
async def cmd_create(s: Library, args: argparse.Namespace) -> int:
    """Create one of your environments from an environment.yml, a requirements.txt or an explicit lock;
    the plan first."""
    kernel = validated(KernelRequest, display_name=args.display_name) if args.kernel else None
    path = await asyncio.to_thread(os.path.abspath, args.file)
    # A terminal may name any file its user can read: the server's root does not apply here.
    plan = await s.envs.plan_from_file(args.name, path, root_dir=ANYWHERE)
    if args.plan or not args.yes:
        print(f"Plan for '{args.name}' from {args.file}:")
        print_plan(plan)
    if args.plan:
        return 0
    unasked = "create asks for confirmation on a terminal; pass --yes to create without asking"
    if not args.yes and not confirm("Create it?", unasked=unasked):
        print("Nothing created.")
        return 1
    change = await s.envs.making(args.name)
    with ProgressBar(f"create {args.name}", verbose=args.verbose) as bar:
        result = await s.envs.create_from_file(change, path, report=bar, root_dir=ANYWHERE)
    env = result.environment
    print(
        f"Created '{env.name}' at {env.prefix}: {len(result.report.installed)} packages, "
        f"{result.report.seconds:.1f} s"
    )
    for note in result.report.ignored:
        print(f"Not applied: {note}")
    await register_kernel(s, env.name, kernel)
    return 0


@with_services
async def cmd_publish(s: Library, args: argparse.Namespace) -> int:
    """Share a copy of one of your environments with your team (read-only for them, cloneable)."""
    req = validated(PublishRequest, description=args.description, name=args.name)
    change = await s.envs.publishing(args.env, req.name)
    with ProgressBar(f"publish {args.env}", verbose=args.verbose) as bar:
        env = await s.envs.publish(change, req, report=bar)
    print(f"Shared '{args.env}' as '{env.name}' at {env.prefix}")
    return 0


@with_services
async def cmd_unpublish(s: Library, args: argparse.Namespace) -> int:
    """Remove an environment you shared (clones teammates made of it stay)."""
    loc = await s.envs.resolve(args.env)
    if loc.kind != "shared":
        raise UsageError(f"'{loc.name}' is not a shared environment (it is {loc.kind})")
    await s.envs.unpublish(loc)
    print(f"Unpublished '{loc.name}' ({loc.prefix})")
    return 0


def register(sub: Any) -> None:
    p = command_parser(sub, "create", cmd_create)
    p.add_argument("name", metavar="NAME", help="the new environment's name")
    p.add_argument("file", metavar="FILE", help="an environment.yml, requirements.txt or explicit lock file")
    p.add_argument("--plan", action="store_true", help="only print the plan; create nothing")
    p.add_argument("-y", "--yes", action="store_true", help="create without showing the plan and asking")
    p.add_argument("--kernel", action="store_true", help="register it as a kernel afterwards")
    p.add_argument("--display-name", metavar="TEXT", help="the kernel's name in the Launcher (with --kernel)")

    p = command_parser(sub, "publish", cmd_publish)
    p.add_argument("env", metavar="ENV", help="one of your environments")
    p.add_argument("-d", "--description", metavar="TEXT", required=True, help="what it is for, one line")
    p.add_argument("--name", metavar="NAME", help="its name in the shared folder (default: ENV)")

    p = command_parser(sub, "unpublish", cmd_unpublish)
    p.add_argument("env", metavar="ENV", help="a shared environment you published")
