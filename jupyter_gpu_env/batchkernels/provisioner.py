"""The kernel provisioner ``gpu-env-batch`` (jupyter_client's entry-point group
``jupyter_client.kernel_provisioners``): what Jupyter's own kernel manager calls to start, signal,
restart and stop a kernel whose kernelspec names it, mapped onto a :class:`KernelSession`.

The kernelspec's ``metadata.kernel_provisioner.config.session`` says where the kernel runs (a job
request's fields: backend, kernel or environment or image, resources, queue, priority). Its sessions are
opened by the server's :class:`BatchKernelService`, which the server names with :func:`use_service`
(a provisioner is made by jupyter_client from the entry point, with nothing of ours to hand it); outside
such a server the kernel cannot start, and says so.

A session whose job has ended (walltime, preemption, cancelled from outside, node lost) cannot be
restarted: no allocation is left. Jupyter's restarter would try again every few seconds for ever (a
failing restart never counts), so the provisioner tells it to give up at once, and Jupyter reports
the kernel dead; the session keeps why, for the notebook's toolbar.

"Kernel process" here is the kernel inside the allocation: a restart stops it and starts the next one
in the same job (no new queue wait); only a shutdown ends the job.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any, cast

from jupyter_client.connect import KernelConnectionInfo
from jupyter_client.provisioning.provisioner_base import KernelProvisionerBase
from traitlets import Dict

from .service import BatchKernelService
from .session import KernelSession

_service: BatchKernelService | None = None


def use_service(service: BatchKernelService | None) -> None:
    """Name the service batch kernels start through (the server's; None: none)."""
    global _service
    _service = service


class BatchProvisioner(KernelProvisionerBase):
    session = Dict(config=True, help="Where the kernel runs: a job request's fields, and `kernel_session`.")

    _session: KernelSession | None = None

    @property
    def has_process(self) -> bool:
        return self._session is not None and self._session.connected

    async def pre_launch(self, **kwargs: Any) -> dict[str, Any]:
        kwargs = await super().pre_launch(**kwargs)
        if self._session is None:
            if _service is None:
                raise RuntimeError(
                    "A batch kernel starts only in a Jupyter server with jupyter-gpu-env enabled."
                )
            path = str((kwargs.get("env") or {}).get("JPY_SESSION_NAME") or "")
            cwd = Path(kwargs.get("cwd") or os.getcwd())
            name = str(getattr(self.parent, "kernel_name", ""))  # the manager's: the spec's own is unset
            self._session = _service.open(self.kernel_id, name, dict(self.session), cwd, path)
        kwargs["cmd"] = list(self.kernel_spec.argv)
        return kwargs

    async def launch_kernel(self, cmd: list[str], **kwargs: Any) -> KernelConnectionInfo:
        assert self._session is not None
        if not self._session.connected:
            info = await self._session.start()
        else:
            info = await self._session.start_again()
        self.connection_info = cast(KernelConnectionInfo, info)
        return self.connection_info

    async def poll(self) -> int | None:
        if self._session is None:
            return 0
        code = await self._session.exit_code()
        if self._session.ended:
            self._give_up_restarts()
        return code

    def _give_up_restarts(self) -> None:
        if _service is not None:
            _service.ended(self.kernel_id)
        restarter = getattr(self.parent, "_restarter", None)  # jupyter_client's, made by start_restarter
        if restarter is not None and restarter.restart_limit:
            restarter.restart_limit = 0  # its next poll reports the kernel dead instead of restarting it
            # Jupyter drops a dead kernel from its map without closing the manager's control socket;
            # left open, the server's ZeroMQ context could never end (its exit would wait for ever).
            getattr(self.parent, "_close_control_socket", lambda: None)()

    async def wait(self) -> int | None:
        while True:
            code = await self.poll()
            if code is not None:
                return code
            await asyncio.sleep(0.2)

    async def send_signal(self, signum: int) -> None:
        if self._session is not None:
            await self._session.signal(signum)

    async def kill(self, restart: bool = False) -> None:
        await self.send_signal(signal.SIGKILL)

    async def terminate(self, restart: bool = False) -> None:
        await self.send_signal(signal.SIGTERM)

    async def shutdown_requested(self, restart: bool = False) -> None:
        if self._session is not None and self._session.connected:
            await self._session.expect(restart)

    async def cleanup(self, restart: bool = False) -> None:
        if not restart and self._session is not None:
            await self._session.end()
            if _service is not None:
                _service.ended(self.kernel_id)

    def resolve_path(self, path: str) -> str | None:
        return None  # the kernel's files are on its node
