"""``python -m jupyter_gpu_env.demo build --channel DIR --env PREFIX [--wheels DIR] [--pkgs DIR] [--configure]``
``python -m jupyter_gpu_env.demo unconfigure`` and ``python -m jupyter_gpu_env.demo terminal VENV_BIN``."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

from ..envs.service import default_pkgs_dir
from ..errors import GpuEnvError
from .builder import build_demo, default_cache_dir
from .settings import remove_settings, settings_path, write_settings, write_terminal_settings


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m jupyter_gpu_env.demo",
        description="Build an offline conda channel from this Python and pip wheels, and a demo "
        "managed environment (python, ipykernel, pip) from it. Reuses what already exists.",
    )
    sub = p.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build (or reuse) the channel and the environment")
    b.add_argument("--channel", type=Path, required=True, help="folder of the local channel")
    b.add_argument("--env", type=Path, required=True, help="prefix of the demo managed environment")
    b.add_argument(
        "--wheels",
        type=Path,
        help="folder of wheels to package; when it holds none, wheels of ipykernel and pip (with "
        f"their dependencies) are downloaded into it with pip (default: {default_cache_dir() / 'wheels'})",
    )
    b.add_argument(
        "--pkgs",
        type=Path,
        help=f"package cache (default: {default_pkgs_dir()}, the server's default); use the "
        "server's package cache (c.GpuEnvApp pkgs setting) so that clones hard-link",
    )
    b.add_argument(
        "--configure",
        action="store_true",
        help=f"then point the server and `jupyter gpu-env` of this Python at the demo, in {settings_path()}",
    )
    b.add_argument("--quiet", action="store_true", help="print only the result")
    sub.add_parser("unconfigure", help=f"remove {settings_path()} if --configure wrote it")
    t = sub.add_parser("terminal", help="make the lab's terminals find this Python's `jupyter` first")
    t.add_argument("venv_bin", type=Path, help="the folder put first on the terminals' PATH")
    return p


class Printed:
    """The build's progress and its tools' lines, printed as they come."""

    def progress(self, fraction: float, message: str) -> None:
        print(f"[{fraction * 100:5.1f}%] {message}", flush=True)

    def log(self, line: str) -> None:
        print(f"         {line}", flush=True)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "terminal":
        print(f"wrote {write_terminal_settings(args.venv_bin.resolve())}")
        return 0
    if args.command == "unconfigure":
        path = settings_path()
        if remove_settings():
            print(f"removed {path}")
        elif path.exists():
            print(f"kept {path}: the demo builder did not write it")
        return 0
    started = time.monotonic()

    report = None if args.quiet else Printed()
    try:
        result = asyncio.run(
            build_demo(args.channel, args.env, wheels=args.wheels, pkgs_dir=args.pkgs, report=report)
        )
        if args.configure:
            pkgs = args.pkgs.expanduser().resolve() if args.pkgs else None
            configured = write_settings(result.env.parent, result.channel, pkgs)
    except GpuEnvError as e:
        print(f"error: {e.message}", file=sys.stderr)
        return 1
    print(f"channel: {result.channel} ({'built' if result.channel_built else 'reused'})")
    print(f"environment: {result.env} ({'built' if result.env_built else 'reused'})")
    if args.configure:
        print(f"settings: {configured}")
    print(f"took {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
