"""Environments and kernels: `envs`, `clone`, `install`, `remove-env`, `kernel`, `export`."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..models.envs import ExportFormat, KernelRequest
from .common import UsageError, confirm, human_bytes, print_json, print_table, validated
from .config import Session, command_parser, with_services
from .progress import ProgressBar

if TYPE_CHECKING:
    from ..services import Library


@with_services
async def cmd_envs(s: Library, args: argparse.Namespace) -> int:
    """List the managed and your own conda environments."""
    envs = await s.envs.list(wait_for_sizes=True)  # a terminal gets one answer, complete
    if args.json:
        print_json(envs)
        return 0
    rows = [
        (
            e.name,
            e.kind,
            e.python_version,
            e.package_count,
            human_bytes(e.size_bytes),
            e.kernel_name,
            f"shared by {e.owner}: {e.description}" if e.kind == "shared" else e.source_name or e.source,
        )
        for e in envs
    ]
    print_table(
        ("NAME", "KIND", "PYTHON", "PACKAGES", "SIZE", "KERNEL", "SOURCE"), rows, "No environments found."
    )
    return 0


@with_services
async def cmd_clone(s: Library, args: argparse.Namespace) -> int:
    """Clone an environment into your own, with progress; Ctrl-C cancels and keeps nothing."""
    kernel = validated(KernelRequest, display_name=args.display_name) if args.kernel else None
    change = await s.envs.making(args.name, args.source)  # fail fast, before the bar
    source = change.source.name if change.source else args.source
    with ProgressBar(f"clone {args.name}", verbose=args.verbose) as bar:
        result = await s.envs.clone(change, report=bar)
    report = result.report
    env = await s.envs.get(result.environment.name)  # measured now: a terminal waits for the size
    new = human_bytes((env.size_bytes or 0) - (env.shared_bytes or 0))
    print(f"Cloned '{source}' as '{env.name}' at {env.prefix}")
    print(f"  {report.packages} packages, {new} of new disk use, {report.seconds:.1f} s")
    await register_kernel(s, env.name, kernel)
    return 0


async def register_kernel(s: Library, env: str, kernel: KernelRequest | None) -> None:
    """The kernel a command that made ``env`` was asked for (--kernel), if it was."""
    if kernel is not None:
        info = await s.envs.register_kernel(env, kernel.display_name)
        print(f"Registered kernel '{info.kernel_name}' ({info.display_name})")


def cmd_remove_env(args: argparse.Namespace) -> int:
    """Delete one of your environments and its kernel."""
    with Session(args) as session:
        where = {loc.name: loc for loc in session.library.envs.locate()}.get(args.env)
        if not args.yes and where is not None and where.kind == "own":  # else delete says why not
            unasked = "remove-env asks for confirmation on a terminal; pass --yes to delete without asking"
            if not confirm(f"Delete the environment '{args.env}' ({where.prefix})?", unasked=unasked):
                print("Nothing deleted.", file=sys.stderr)
                return 1

        async def run(s: Library) -> int:
            kernel = await s.envs.delete(args.env)
            print(f"Deleted '{args.env}'" + (f" and its kernel '{kernel}'" if kernel else ""))
            return 0

        return session.run(run)


@with_services
async def cmd_kernel(s: Library, args: argparse.Namespace) -> int:
    """Register an environment as a Jupyter kernel (or remove its kernel with --remove)."""
    if args.remove and args.display_name:
        raise UsageError("--display-name applies to registering, not to --remove")
    req = validated(KernelRequest, display_name=args.display_name)
    if args.remove:
        name = await s.envs.unregister_kernel(args.env)
        print(f"Removed kernel '{name}'")
    else:
        info = await s.envs.register_kernel(args.env, req.display_name)
        print(f"Registered kernel '{info.kernel_name}' ({info.display_name}) in {info.resource_dir}")
    return 0


@with_services
async def cmd_export(s: Library, args: argparse.Namespace) -> int:
    """Write an environment.yml (yaml) or an explicit lock of exact package URLs (explicit)."""
    result = await s.envs.export(args.env, args.format)
    if args.output in (None, "-"):
        sys.stdout.write(result.content)
    else:
        await asyncio.to_thread(Path(args.output).write_text, result.content)
        print(f"Wrote {args.output}", file=sys.stderr)
    return 0


def register(sub: Any) -> None:
    p = command_parser(sub, "envs", cmd_envs)
    p.add_argument("--json", action="store_true", help="print the environments as JSON")

    p = command_parser(sub, "clone", cmd_clone)
    p.add_argument("source", metavar="SOURCE", help="the environment to clone: a listed name or a prefix")
    p.add_argument("name", metavar="NAME", help="the new environment's name")
    p.add_argument("--kernel", action="store_true", help="register the clone as a kernel afterwards")
    p.add_argument("--display-name", metavar="TEXT", help="the kernel's name in the Launcher (with --kernel)")

    p = command_parser(sub, "remove-env", cmd_remove_env)
    p.add_argument("env", metavar="ENV", help="one of your environments")
    p.add_argument("-y", "--yes", action="store_true", help="delete without asking")

    p = command_parser(sub, "kernel", cmd_kernel)
    p.add_argument("env", metavar="ENV", help="an environment (managed or your own)")
    p.add_argument("--remove", action="store_true", help="remove the environment's kernel instead")
    p.add_argument("--display-name", metavar="TEXT", help="the name shown in the Launcher")

    p = command_parser(sub, "export", cmd_export)
    p.add_argument("env", metavar="ENV", help="an environment")
    p.add_argument("--format", choices=[f.value for f in ExportFormat], default="yaml", help="default: yaml")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
