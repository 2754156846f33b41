"""Which of this server's kernels is which process, and how much host memory each holds.

The kernel table is read on the event loop (it is the server's own state, cheap to copy); the psutil
walk over each kernel's process tree runs in the sampler's worker thread.
"""

from __future__ import annotations

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


def _tree(pid: int) -> list[psutil.Process]:
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


def pid_owners(kernels: list[KernelInfo]) -> dict[int, KernelInfo]:
    """Map every pid in each kernel's process tree to that kernel (GPU work often runs in children)."""
    owners: dict[int, KernelInfo] = {}
    for k in kernels:
        for p in _tree(k.pid):
            owners[p.pid] = k
    return owners


def kernel_usage(kernels: list[KernelInfo]) -> list[KernelUsage]:
    """Resident memory of each kernel's process tree (the kernel and what it started)."""
    out = []
    for k in kernels:
        procs = _tree(k.pid)
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
