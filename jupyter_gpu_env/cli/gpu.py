"""`gpu` (memory, CPU and GPUs visible here) and `openapi` (the REST API's document)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from ..gpu.sampler import Sampler
from ..gpu.sources import GpuReaders
from ..models.gpu import GpuSnapshot


def _gib(n: int) -> str:
    return f"{n / (1 << 30):.2f} GiB"


async def _two_samples(recorded: str) -> GpuSnapshot:
    readers = GpuReaders(recorded)
    try:
        sampler = Sampler(readers.read, interval=0.5)
        await sampler.sample_once()
        await asyncio.sleep(0.5)  # CPU usage is a rate: it needs two samples
        return await sampler.sample_once()
    finally:
        readers.close()


def cmd_gpu(args: argparse.Namespace) -> int:
    """Print the container's memory and CPU, and the GPUs visible here."""
    snap = asyncio.run(_two_samples(args.recorded or ""))
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
    from ..handlers.openapi import render

    sys.stdout.write(render())
    return 0


def register(sub: Any) -> None:
    gpu = sub.add_parser("gpu", help=cmd_gpu.__doc__, description=cmd_gpu.__doc__)
    gpu.add_argument("--json", action="store_true", help="print the snapshot as JSON")
    gpu.add_argument("--recorded", metavar="PATH", help="replay recorded nvidia-smi output instead (demos)")
    gpu.set_defaults(func=cmd_gpu)
    api = sub.add_parser("openapi", help=cmd_openapi.__doc__, description=cmd_openapi.__doc__)
    api.set_defaults(func=cmd_openapi)
