"""The kernel provisioner ``gpu-env-batch`` (jupyter_client's entry-point group
``jupyter_client.kernel_provisioners``): what Jupyter's own kernel manager calls to start, signal,
restart and stop a kernel whose kernelspec names it, mapped onto a :class:`KernelSession`.

The kernelspec's ``metadata.kernel_provisioner.config.session`` says where the kernel runs (a job
request's fields: backend, kernel or environment or image, resources, queue, priority) and how its host
listens. The jobs it submits go through the server's own :class:`JobService`, which the server names
with :func:`use_jobs`; outside such a server the kernel cannot start, and says so.

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

from ..jobs.service import JobService
from ..jobs.sessions import SessionAsk
from ..models.jobs import JobRequest
from .session import KernelSession

_jobs: JobService | None = None


def use_jobs(jobs: JobService | None) -> None:
    """Name the job service batch kernels are submitted through (the server's; None: none)."""
    global _jobs
    _jobs = jobs


class BatchProvisioner(KernelProvisionerBase):
    session = Dict(config=True, help="Where the kernel runs: a job request's fields, and `kernel_session`.")

    _session: KernelSession | None = None

    @property
    def has_process(self) -> bool:
        return self._session is not None and self._session.connected

    async def pre_launch(self, **kwargs: Any) -> dict[str, Any]:
        kwargs = await super().pre_launch(**kwargs)
        if self._session is None:
            if _jobs is None:
                raise RuntimeError(
                    "A batch kernel starts only in a Jupyter server with jupyter-gpu-env enabled."
                )
            config = dict(self.session)
            host = dict(config.pop("kernel_session", {}) or {})
            path = (kwargs.get("env") or {}).get("JPY_SESSION_NAME") or "session.ipynb"
            request = JobRequest.model_validate({"notebook_path": _notebook(path), **config})
            cwd = Path(kwargs.get("cwd") or os.getcwd())
            ask = SessionAsk(
                request=request, cwd=cwd if cwd.is_absolute() else _jobs.root / cwd, kernel_session=host
            )
            self._session = KernelSession(_jobs, ask)
        kwargs["cmd"] = list(self.kernel_spec.argv)
        return kwargs

    async def launch_kernel(self, cmd: list[str], **kwargs: Any) -> KernelConnectionInfo:
        assert self._session is not None
        if self._session.job is None:
            info = await self._session.start()
        else:
            info = await self._session.start_again()
        self.connection_info = cast(KernelConnectionInfo, info)
        return self.connection_info

    async def poll(self) -> int | None:
        return await self._session.exit_code() if self._session is not None else 0

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

    def resolve_path(self, path: str) -> str | None:
        return None  # the kernel's files are on its node


def _notebook(path: str) -> str:
    return path if path.endswith(".ipynb") else "session.ipynb"
