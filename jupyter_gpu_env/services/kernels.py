"""This server's kernels, as the operations that remove what kernels run from (an environment, an
image) and the GPU panel's release see them."""

from __future__ import annotations

import asyncio
import posixpath
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from ..errors import kernels_running
from ..gpu.kernel_processes import RunningKernel, describe_kernels, running_in

KernelLister = Callable[[], Awaitable[list[RunningKernel]]]


async def _none() -> list[RunningKernel]:
    return []


class ServerKernels:
    """``lister`` names the running kernels with their notebooks; ``manager`` is the server's kernel
    manager (None without a server, where nothing runs)."""

    def __init__(self, lister: KernelLister = _none, manager: Any = None, sessions: Any = None) -> None:
        self.lister = lister
        self.manager = manager
        self.sessions = sessions  # the server's session manager: which notebook uses which kernel

    async def take_back(self, kernel_name: str, kernel_id: str, notebook_path: str) -> None:
        """Start kernel ``kernel_id`` of spec ``kernel_name`` again under its own id (its provisioner
        reconnects to what still runs), and give it back to its notebook, which then opens on it."""
        folder = posixpath.dirname(notebook_path)
        await self.manager.start_kernel(kernel_name=kernel_name, kernel_id=kernel_id, path=folder)
        if notebook_path and self.sessions is not None:
            await self.sessions.create_session(
                path=notebook_path,
                name=posixpath.basename(notebook_path),
                type="notebook",
                kernel_id=kernel_id,
            )

    def forget(self, kernel_id: str) -> None:
        """Drop a kernel from this server without shutting it down (it goes on elsewhere)."""
        if self.manager is None or kernel_id not in self.manager:
            return
        kernel = self.manager.get_kernel(kernel_id)
        kernel.stop_restarter()
        # Its control socket is closed here: left open, the manager's ZeroMQ context could never be
        # terminated, and whatever ends it (the server's exit, a collection) would wait for ever.
        getattr(kernel, "_close_control_socket", lambda: None)()
        if hasattr(self.manager, "stop_watching_activity"):
            self.manager.stop_watching_activity(kernel_id)
        self.manager.remove_kernel(kernel_id)  # no shutdown: its kernel goes on elsewhere

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
            raise kernels_running(
                f"{describe_kernels(running)} of this server run in {what}",
                len(running),
                [
                    {"kernel_id": k.kernel_id, "name": k.name, "notebook_path": k.notebook_path}
                    for k in running
                ],
            )
        for k in running:
            await self.shutdown(k.kernel_id)
