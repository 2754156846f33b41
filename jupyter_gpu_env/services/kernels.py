"""This server's kernels, as the operations that remove what kernels run from (an environment, an
image) and the GPU panel's release see them."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from ..errors import Conflict
from ..gpu.kernel_processes import RunningKernel, describe_kernels, running_in

KernelLister = Callable[[], Awaitable[list[RunningKernel]]]


async def _none() -> list[RunningKernel]:
    return []


class ServerKernels:
    """``lister`` names the running kernels with their notebooks; ``manager`` is the server's kernel
    manager (None without a server, where nothing runs)."""

    def __init__(self, lister: KernelLister = _none, manager: Any = None) -> None:
        self.lister = lister
        self.manager = manager

    def running_ids(self) -> set[str]:
        return set(self.manager.list_kernel_ids()) if self.manager is not None else set()

    async def shutdown(self, kernel_id: str) -> None:
        await self.manager.shutdown_kernel(kernel_id)

    async def clear(self, prefix: Path, spec_names: set[str], shutdown: bool, what: str) -> None:
        """Make sure no kernel of this server runs from ``prefix`` (or through ``spec_names``): shut them
        down with ``shutdown``, else 409 naming them, so that nothing is removed under a running kernel."""
        running = await asyncio.to_thread(running_in, await self.lister(), prefix, spec_names)
        if not running:
            return
        if not shutdown:
            raise Conflict(
                f"{describe_kernels(running)} of this server run in {what}. Shut "
                f"{'it' if len(running) == 1 else 'them'} down first, or ask to shut them down and delete.",
                reason="kernels_running",
                details=[
                    {"kernel_id": k.kernel_id, "name": k.name, "notebook_path": k.notebook_path}
                    for k in running
                ],
            )
        for k in running:
            await self.shutdown(k.kernel_id)
