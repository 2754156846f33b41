"""`jupyter gpu-env ...`: the same library the server uses, from a terminal."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable, Sequence

from . import __version__
from .errors import GpuEnvError
from .gpu.readers import GpuReaders
from .gpu.sampler import Sampler

Command = Callable[[argparse.Namespace], int]


def _gib(n: int) -> str:
    return f"{n / (1 << 30):.2f} GiB"


def cmd_gpu(args: argparse.Namespace) -> int:
    """Print the container's memory and CPU, and the GPUs visible here."""

    async def two_samples():
        readers = GpuReaders(args.recorded or "")
        try:
            sampler = Sampler(readers.read, interval=0.5)
            await sampler.sample_once()
            await asyncio.sleep(0.5)
            return await sampler.sample_once()
        finally:
            readers.close()

    snap = asyncio.run(two_samples())
    if args.json:
        print(snap.model_dump_json(indent=2))
        return 0
    mem, cpu = snap.host.memory, snap.host.cpu
    origin = {"cgroup2": "cgroup v2", "cgroup1": "cgroup v1", "host": "whole machine"}[snap.host.source]
    limit_word = "limit" if mem.limited else "machine total (no container limit)"
    print(f"Memory: {_gib(mem.used_bytes)} used of {_gib(mem.limit_bytes)} {limit_word} [{origin}]")
    usage = f"{cpu.usage_cores:.2f}" if cpu.usage_cores is not None else "?"
    print(f"CPU:    {usage} of {cpu.limit_cores:g} cores{' (quota)' if cpu.limited else ''}")
    if not snap.gpus:
        print(f"GPU:    {snap.gpu_status.message}")
    for gpu in snap.gpus:
        used = _gib(gpu.memory_used_bytes) if gpu.memory_used_bytes is not None else "?"
        total = _gib(gpu.memory_total_bytes) if gpu.memory_total_bytes is not None else "?"
        print(f"GPU {gpu.index}: {gpu.name} {used} / {total}{' (MIG)' if gpu.mig_enabled else ''}")
    return 0


def cmd_openapi(args: argparse.Namespace) -> int:
    """Print the REST API's OpenAPI document."""
    from .openapi import render

    sys.stdout.write(render())
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="jupyter gpu-env",
        description="Environments, images, batch jobs and GPU usage for shared GPU platforms.",
    )
    parser.add_argument("--version", action="version", version=__version__)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    gpu = sub.add_parser("gpu", help=cmd_gpu.__doc__, description=cmd_gpu.__doc__)
    gpu.add_argument("--json", action="store_true", help="print the snapshot as JSON")
    gpu.add_argument("--recorded", metavar="PATH", help="replay recorded nvidia-smi output instead (demos)")
    gpu.set_defaults(func=cmd_gpu)
    api = sub.add_parser("openapi", help=cmd_openapi.__doc__, description=cmd_openapi.__doc__)
    api.set_defaults(func=cmd_openapi)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except GpuEnvError as e:
        print(f"error: {e.message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
