"""`install` (conda and PyPI packages, the plan first), `history` and `undo` of one of your environments."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ..models.envs.packages import PackagesPlan, PackagesRequest
from .common import confirm, human_bytes, print_json, validated
from .config import command_parser, with_services
from .progress import ProgressBar

if TYPE_CHECKING:
    from ..services import Library


def print_plan(plan: PackagesPlan) -> None:
    for c in plan.changes:
        versions = " → ".join(v for v in (c.version_before, c.version_after) if v)
        size = (
            "" if c.download_bytes is None or c.action == "remove" else f"  ({human_bytes(c.download_bytes)})"
        )
        mark = "" if c.requested or c.action != "remove" else "  (not named: taken along)"
        print(f"  {c.action.value:<9} {c.name} {versions} [{c.kind}]{size}{mark}")
    print(f"  {len(plan.changes)} package(s), {human_bytes(plan.download_bytes)} to download")
    for warning in plan.warnings:
        print(f"Warning: {warning}")


@with_services
async def cmd_install(s: Library, args: argparse.Namespace) -> int:
    """Add packages to (or remove them from) one of your environments, conda and PyPI; the plan first."""
    req = validated(
        PackagesRequest,
        add=args.specs,
        remove=args.remove,
        pip_add=args.pip,
        pip_remove=args.pip_remove,
        dry_run=args.plan,
    )
    plan = await s.envs.plan_packages(
        args.env, req.add, req.remove, pip_add=req.pip_add, pip_remove=req.pip_remove
    )
    if args.plan or plan.unrequested_removals or not plan.runs_notebooks:
        print(f"Plan for '{plan.environment}':")
        print_plan(plan)
    if args.plan:
        return 0
    if not plan.changes:
        print(f"Nothing to change in '{plan.environment}'.")
        return 0
    if (plan.unrequested_removals or not plan.runs_notebooks) and not args.yes:
        unasked = "this change removes packages you did not name; pass --yes to apply it anyway"
        if not confirm("Apply this change?", unasked=unasked):
            print("Nothing changed.")
            return 1
    async with s.envs.changing(args.env) as change:
        env = change.name
        with ProgressBar(f"install {env}", verbose=args.verbose) as bar:
            result = await s.envs.change_packages(
                change,
                req.add,
                req.remove,
                pip_add=req.pip_add,
                pip_remove=req.pip_remove,
                report=bar,
            )
            bar.progress(1.0, f"Changed '{env}'")
    report = result.report
    for label, items in (("Installed", report.installed), ("Removed", report.removed)):
        if items:
            print(f"{label}:")
            print("\n".join(f"  {item}" for item in items))
    if not report.installed and not report.removed:
        print(f"Nothing to change in '{env}'.")
    return 0


@with_services
async def cmd_history(s: Library, args: argparse.Namespace) -> int:
    """The changes an environment holds, newest first, and what undo would do."""
    found = await s.envs.history(args.env)
    if args.json:
        print_json(found.model_dump(mode="json"))
        return 0
    import time

    for c in found.changes:
        print(f"{time.strftime('%Y-%m-%d %H:%M', time.localtime(c.at))}  {c.summary}")
    if not found.changes:
        print(f"No change has been made to '{found.environment}' here yet.")
    print(f"undo: {found.undo or 'not available (no earlier state is kept)'}")
    return 0


@with_services
async def cmd_undo(s: Library, args: argparse.Namespace) -> int:
    """Swap the state kept before the last change back in (again: redo)."""
    result = await s.envs.undo(args.env)
    print(result.restored)
    return 0


def register(sub: Any) -> None:
    p = command_parser(sub, "install", cmd_install)
    p.add_argument("env", metavar="ENV", help="one of your environments")
    p.add_argument("specs", metavar="SPEC", nargs="*", help="conda match specs: tensorboard, 'numpy>=1.26'")
    p.add_argument("--remove", metavar="NAME", nargs="+", default=[], help="conda packages to remove")
    p.add_argument("--pip", metavar="REQ", nargs="+", default=[], help="PyPI requirements: 'requests>=2.31'")
    p.add_argument("--pip-remove", metavar="NAME", nargs="+", default=[], help="PyPI packages to remove")
    p.add_argument("--plan", action="store_true", help="only print the plan; change nothing")
    p.add_argument(
        "-y", "--yes", action="store_true", help="apply without asking, removals not named included"
    )

    p = command_parser(sub, "history", cmd_history)
    p.add_argument("env", metavar="ENV", help="an environment")
    p.add_argument("--json", action="store_true", help="print the history as JSON")

    p = command_parser(sub, "undo", cmd_undo)
    p.add_argument("env", metavar="ENV", help="one of your environments")
