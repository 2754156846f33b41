"""`jupyter gpu-env ...`: the same library the server uses, from a terminal (no server needed).

Commands read the server's configuration (``c.GpuEnvApp.*``, ``c.LocalBackend.*`` in
``jupyter_server_config.py``/``.json`` on the Jupyter config path), build the same services, and call
them directly. Exit status: 0 done, 1 failed (``error: <message>`` on standard error), 2 bad usage,
130 interrupted; ``check`` also exits 1 when the environment cannot use a GPU (its report says why).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from .. import __version__
from ..errors import GpuEnvError
from ..system.startup import lean_start
from . import changes, envs, gpu, images, jobs, sweeps, team
from .automation import dask, pipelines, schedules
from .common import UsageError

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="jupyter gpu-env",
        description="Environments, images, batch jobs and GPU usage for shared GPU platforms.",
    )
    parser.add_argument("--version", action="version", version=__version__)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules = (gpu, envs, changes, team, images, jobs, sweeps, schedules, pipelines, dask)
    for module in modules:
        module.register(sub)
    for module in modules:  # the spellings of before the noun-first grammar, still served
        getattr(module, "register_older", lambda sub: None)(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, --version (0) and usage errors (2), as a status
        return e.code if isinstance(e.code, int) else 2
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        command: Callable[[argparse.Namespace], int] = args.func
        return command(args)
    except GpuEnvError as e:
        print(f"error: {e.message}", file=sys.stderr)
        return 1
    except UsageError as e:
        print(f"{parser.prog} {args.command}: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (`jupyter gpu-env job list | head`): it has what it wanted. Point stdout at
        # /dev/null so that the interpreter's last flush does not fail again, and end quietly.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def console() -> int:
    """The ``jupyter gpu-env`` command: :func:`main` in a process of its own, started lean
    (system/startup.py: seconds off a command that builds the server's services)."""
    lean_start()
    return main()
