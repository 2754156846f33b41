"""The kernel a host runs: started with jupyter_client on the node, bound where the site says, with a
fresh signing key; started again in the same allocation with the same ports and key, so the server's
connection to it stays valid across a restart."""

from __future__ import annotations

import secrets
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager

from ...contracts.batchkernel.files import CONNECTION_JSON, kernel_dir

# How long a kernel may take to answer its first kernel_info before the host gives up on it.
READY_TIMEOUT = 120.0


class NodeKernel:
    def __init__(self, folder: Path, kernel_name: str, ip: str, cwd: str) -> None:
        self._cwd = cwd
        self._km = AsyncKernelManager(
            kernel_name=kernel_name,
            ip=ip,
            transport="tcp",
            connection_file=str(kernel_dir(folder) / CONNECTION_JSON),
        )
        # jupyter_client's default key is a dashed uuid; a kernel reached over the network gets 256 bits.
        self._km.session.key = secrets.token_hex(32).encode("ascii")
        self.generation = 0

    async def start(self) -> int:
        """Start the kernel (its first generation, or the next one on the same ports); answer once it
        has replied to kernel_info here, so the server connects to a kernel that is listening."""
        if self.generation == 0:
            await self._km.start_kernel(cwd=self._cwd)
        else:
            # Ports and key are the manager's: restart_kernel keeps them (newports=False).
            await self._km.restart_kernel(now=True)
        self.generation += 1
        client = self._km.client()
        client.start_channels()
        try:
            await client.wait_for_ready(timeout=READY_TIMEOUT)
        finally:
            client.stop_channels()
        return self.generation

    @property
    def pgid(self) -> int | None:
        """The kernel's process group (jupyter_client starts it in a session of its own)."""
        provisioner = self._km.provisioner
        return getattr(provisioner, "pgid", None) if provisioner is not None else None

    async def exit_code(self) -> int | None:
        """None while the kernel process runs, else how it ended."""
        provisioner = self._km.provisioner
        if provisioner is None or not provisioner.has_process:
            return None if self.generation == 0 else 0
        return await provisioner.poll()

    async def signal(self, signum: int) -> None:
        """Send ``signum`` to the kernel's whole process group (what it started too)."""
        await self._km.signal_kernel(signum)

    async def stop(self) -> None:
        """End the kernel process now, with what it started."""
        if self._km.has_kernel:
            await self._km.shutdown_kernel(now=True)
