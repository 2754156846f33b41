"""Which of this server's kernels is which process, and how much host memory each holds.

The kernel table is read on the event loop (it is the server's own state, cheap to copy); the psutil
walk over each kernel's process tree runs in the sampler's worker thread.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import psutil

from ..models.gpu import KernelUsage


@dataclass(frozen=True)
class KernelInfo:
    kernel_id: str
    name: str
    pid: int
    notebook_path: str | None = None


def kernel_table(kernel_manager: object, paths: dict[str, str] | None = None) -> list[KernelInfo]:
    """Local kernels with a process we can see; remote (gateway) kernels have none and are skipped."""
    paths = paths or {}
    out = []
    for kernel_id in list(getattr(kernel_manager, "list_kernel_ids", list)()):
        km = kernel_manager.get_kernel(kernel_id)  # type: ignore[attr-defined]
        process = getattr(getattr(km, "provisioner", None), "process", None)
        pid = getattr(process, "pid", None)
        if pid:
            out.append(KernelInfo(kernel_id, getattr(km, "kernel_name", "") or "", pid, paths.get(kernel_id)))
    return out


def process_trees(kernels: list[KernelInfo]) -> dict[str, list[psutil.Process]]:
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


def pid_owners(kernels: list[KernelInfo], trees: dict[str, list[psutil.Process]]) -> dict[int, KernelInfo]:
    """Map every pid in each kernel's process tree to that kernel (GPU work often runs in children)."""
    return {p.pid: k for k in kernels for p in trees.get(k.kernel_id, ())}


def kernel_usage(kernels: list[KernelInfo], trees: dict[str, list[psutil.Process]]) -> list[KernelUsage]:
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
