"""Which of this server's kernels is which process, and how much host memory each holds.

The kernel table is read on the event loop (it is the server's own state, cheap to copy); the psutil
walk over each kernel's process tree runs in the sampler's worker thread.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from ..models.gpu import KernelUsage


@dataclass(frozen=True)
class RunningKernel:
    kernel_id: str
    name: str
    pid: int
    notebook_path: str | None = None


def kernel_table(kernel_manager: object, paths: dict[str, str] | None = None) -> list[RunningKernel]:
    """Local kernels with a process we can see; remote (gateway) kernels have none and are skipped."""
    paths = paths or {}
    out = []
    for kernel_id in list(getattr(kernel_manager, "list_kernel_ids", list)()):
        km = kernel_manager.get_kernel(kernel_id)  # type: ignore[attr-defined]
        process = getattr(getattr(km, "provisioner", None), "process", None)
        pid = getattr(process, "pid", None)
        if pid:
            out.append(
                RunningKernel(kernel_id, getattr(km, "kernel_name", "") or "", pid, paths.get(kernel_id))
            )
    return out


async def server_kernels(server: Any) -> list[RunningKernel]:
    """A Jupyter server's kernels, with the notebook of each kernel's session (none without a server:
    the CLI)."""
    if server is None or getattr(server, "session_manager", None) is None:
        return []
    sessions = await server.session_manager.list_sessions()
    paths = {s["kernel"]["id"]: s.get("path") for s in sessions if s.get("kernel")}
    return kernel_table(server.kernel_manager, paths)


def process_trees(kernels: list[RunningKernel]) -> dict[str, list[psutil.Process]]:
    """Each kernel's process tree (the kernel and what it started), from ONE scan of the process table.

    Asking psutil for each kernel's children rescans /proc per kernel; one parent map serves them all.
    """
    if not kernels:
        return {}
    procs: dict[int, psutil.Process] = {}
    children: dict[int, list[int]] = defaultdict(list)
    for p in psutil.process_iter(["ppid"]):
        procs[p.pid] = p
        children[p.info["ppid"]].append(p.pid)
    trees = {}
    for k in kernels:
        if k.pid not in procs:
            continue
        stack, tree = [k.pid], []
        while stack:
            pid = stack.pop()
            tree.append(procs[pid])
            stack.extend(children.get(pid, ()))
        trees[k.kernel_id] = tree
    return trees


def pid_owners(
    kernels: list[RunningKernel], trees: dict[str, list[psutil.Process]]
) -> dict[int, RunningKernel]:
    """Map every pid in each kernel's process tree to that kernel (GPU work often runs in children)."""
    return {p.pid: k for k in kernels for p in trees.get(k.kernel_id, ())}


def kernel_usage(kernels: list[RunningKernel], trees: dict[str, list[psutil.Process]]) -> list[KernelUsage]:
    """Resident memory of each kernel's process tree (the kernel and what it started)."""
    out = []
    for k in kernels:
        procs = trees.get(k.kernel_id, [])
        if not procs:
            continue
        rss = 0
        for p in procs:
            try:
                rss += p.memory_info().rss
            except psutil.Error:
                continue
        out.append(
            KernelUsage(
                kernel_id=k.kernel_id,
                kernel_name=k.name,
                notebook_path=k.notebook_path,
                pid=k.pid,
                processes=len(procs),
                host_memory_bytes=rss,
            )
        )
    return sorted(out, key=lambda u: u.host_memory_bytes, reverse=True)


def running_in(kernels: list[RunningKernel], prefix: Path, spec_names: set[str]) -> list[RunningKernel]:
    """The kernels whose kernelspec is one of ``spec_names`` or whose program lives under ``prefix``
    (blocking: reads each kernel's executable). Kernels started through another kernelspec are found
    by their executable all the same."""
    root = os.path.realpath(prefix) + os.sep
    out = []
    for k in kernels:
        if k.name in spec_names:
            out.append(k)
            continue
        try:
            exe = psutil.Process(k.pid).exe()
        except psutil.Error:
            continue
        if exe.startswith(root) or os.path.realpath(exe).startswith(root):
            out.append(k)
    return out


def describe_kernels(kernels: list[RunningKernel]) -> str:
    """'2 kernels (analysis.ipynb, train.ipynb)' for messages."""
    names = [k.notebook_path or f"kernel {k.kernel_id[:8]}" for k in kernels]
    return f"{len(kernels)} kernel{'s' if len(kernels) != 1 else ''} ({', '.join(names)})"
