"""`gpu` (memory, CPU and GPUs visible here), `check` (does an environment see the GPU?), `advice` (the
smallest GPU or MIG slice a notebook needs) and `openapi` (the REST API's document)."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import TYPE_CHECKING, Any

from ..gpu.envcheck import check_environment
from ..gpu.sampler import Sampler
from ..gpu.sources import GpuReaders
from ..models.gpu import GpuCheck, GpuSnapshot
from .common import print_json
from .config import command_parser, terminal_text, with_services

if TYPE_CHECKING:
    from ..services import Library


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


def check_facts(check: GpuCheck) -> list[tuple[str, str]]:
    """What the check found, as (label, value) lines: Python, devices visible, driver, framework."""
    raw = check.details
    if not raw:  # the check itself could not run; its message says why
        return []
    driver, fw = raw.get("driver") or {}, raw.get("framework")
    facts = [("Python", f"{raw.get('python', '?')} at {raw.get('prefix', '?')}")]
    facts.append(("CUDA_VISIBLE_DEVICES", raw.get("cuda_visible_devices") or "not set"))
    if driver.get("loaded"):
        names = ", ".join(driver.get("names") or [])
        devices = f"{driver.get('count', 0)} device(s)" + (f": {names}" if names else "")
        problem = f" ({driver['error']})" if driver.get("error") else ""
        facts.append(("Driver", f"loaded, {devices}{problem}"))
    else:
        facts.append(("Driver", f"not loaded: {driver.get('error') or 'libcuda cannot be loaded'}"))
    if fw is None:
        facts.append(("Computation", "not tried: neither torch nor cupy is installed"))
    elif fw.get("error"):
        facts.append(("Computation", f"{fw['name']}: {fw['error']}"))
    else:
        build = f", CUDA {fw['cuda_build']}" if fw.get("cuda_build") else ""
        if not fw.get("available"):
            result = "no usable device"
        elif fw.get("computed", True):
            result = f"{fw.get('count', 0)} device(s), a computation gave the right answer"
        else:
            result = "a computation on the GPU gave a wrong answer"
        facts.append(("Computation", f"{fw['name']} {fw.get('version', '')}{build}: {result}"))
    return facts


@with_services
async def cmd_check(s: Library, args: argparse.Namespace) -> int:
    """Check whether an environment sees the GPU: its own Python loads the CUDA driver, counts the
    devices and computes with torch or cupy where installed. Exit status 0 when a GPU is usable from
    it, 1 when not (the report says why)."""
    loc = await s.envs.resolve(args.env)  # as the server finds it: a name or a prefix
    if not args.json:
        print(f"Checking '{loc.name}' with its own Python...", file=sys.stderr)
    check = await check_environment(loc.prefix)
    if args.json:
        print_json(check)
    else:
        print(f"{'GPU usable' if check.ok else 'No usable GPU'} in '{loc.name}': {check.message}")
        facts = check_facts(check)
        width = max((len(label) for label, _ in facts), default=0)
        for label, value in facts:
            print(f"  {label + ':':<{width + 1}}  {value}")
    return 0 if check.ok else 1


def cmd_openapi(args: argparse.Namespace) -> int:
    """Print the REST API's OpenAPI document."""
    from ..app import GpuEnvApp  # the server's side: its routes declare the document

    sys.stdout.write(GpuEnvApp.openapi_document())
    return 0


def _under(notebook: str, root: object) -> str:
    """A notebook's path as the job records keep it: relative to the root."""
    return os.path.relpath(os.path.abspath(notebook), str(root))


@with_services
async def cmd_advice(s: Library, args: argparse.Namespace) -> int:
    """Suggest the smallest GPU or MIG slice a backend offers that holds what a notebook's runs used."""
    advice = await s.advice.advise(args.backend, _under(args.notebook, s.jobs.root))
    if args.json:
        print_json(advice)
        return 0
    print(advice.sentence)
    for option in advice.soonest:
        print(f"  {option.sentence}")
    return 0


def register(sub: Any) -> None:
    gpu = sub.add_parser(
        "gpu", help=terminal_text(cmd_gpu.__doc__), description=terminal_text(cmd_gpu.__doc__)
    )
    gpu.add_argument("--json", action="store_true", help="print the snapshot as JSON")
    gpu.add_argument("--recorded", metavar="PATH", help="replay recorded nvidia-smi output instead (demos)")
    gpu.set_defaults(func=cmd_gpu)
    check = command_parser(sub, "check", cmd_check)
    check.add_argument("env", metavar="ENV", help="an environment (managed or your own): a name or a prefix")
    check.add_argument("--json", action="store_true", help="print the check as JSON")
    advice = command_parser(sub, "advice", cmd_advice)
    advice.add_argument("notebook", metavar="NOTEBOOK", help="the notebook whose earlier runs are measured")
    advice.add_argument("--backend", default="local", help="the backend to size for (default: local)")
    advice.add_argument("--json", action="store_true", help="print the advice as JSON")
    api = sub.add_parser(
        "openapi", help=terminal_text(cmd_openapi.__doc__), description=terminal_text(cmd_openapi.__doc__)
    )
    api.set_defaults(func=cmd_openapi)
