"""Batch kernels: registered as kernelspecs (``POST batch-kernels``), started by Jupyter through the
``gpu-env-batch`` provisioner, each start a session followed here until it ends.

The kernelspec is the registration's record (``specs``). A session is what one start of it holds: its
job (through ``jobs/sessions``), its waiting place, its node, its walltime, and why it ended. The
provisioner opens sessions with :meth:`BatchKernelService.open`; the REST API lists them beside their
kernelspec, and the notebook's toolbar reads them while Jupyter itself still waits for the kernel.
"""

from __future__ import annotations

import asyncio
import builtins
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import kernelspecs
from ..errors import Conflict, NotFound
from ..jobs.service import JobService
from ..jobs.sessions import SessionAsk
from ..models.jobs import TERMINAL_STATES, Job, JobRequest
from ..models.kernels.batch import BatchKernel, BatchKernelList, BatchKernelRequest, BatchKernelSession
from ..system.offloop import python_work
from . import specs, words
from .options import BatchKernels
from .session import KernelSession

log = logging.getLogger(__name__)

SpecReader = Callable[[str], dict[str, Any] | None]  # a kernelspec's kernel.json by name, None if unknown
Shutdown = Callable[[str], Awaitable[None]]  # shut a kernel of this server down by its id


@dataclass
class Opened:
    """One session: who started it (Jupyter's kernel id, the kernelspec, the notebook) and its job."""

    kernel_id: str
    kernel_name: str
    notebook_path: str
    session: KernelSession
    ended_at: float | None = None


class BatchKernelService:
    def __init__(
        self,
        jobs: JobService,
        options: BatchKernels,
        *,
        base_spec: SpecReader,
        data_dir: Path | None = None,
        shutdown: Shutdown | None = None,
    ) -> None:
        self.jobs = jobs
        self.options = options
        self._base_spec = base_spec
        self._data_dir = data_dir
        self._shutdown = shutdown
        self._sessions: dict[str, Opened] = {}

    # ----- the kernelspecs -----

    async def register(self, request: BatchKernelRequest) -> BatchKernel:
        """Check where the kernel would run as a job is checked, then write its kernelspec.

        NotFound (backend, environment, kernel, image), Conflict (beyond the backend's limits, no
        ipykernel, a batch kernel inside a batch kernel, the same one registered already), all before
        anything is written."""
        backend = await self.jobs.intake.polled_backend(request.backend)
        seconds = specs.walltime_seconds(request, self.options.default_walltime)
        job_request = _job_request(request, seconds)
        runtime = await self.jobs.intake.checked_runtime(job_request, None, backend)
        argv, language, interrupt_mode, base_display = await python_work(self._runs, request, runtime)
        existing = await python_work(kernelspecs.read_ours, self._data_dir, specs.NAME_PREFIX)
        spec = specs.kernelspec(
            request,
            backend_kind=backend.kind,
            resources=job_request.resources.normalized(),
            argv=argv,
            language=language,
            interrupt_mode=interrupt_mode,
            base_display=base_display,
        )
        same = next((n for n, s in existing if specs.same_job(s, spec)), None)
        if same is not None:
            raise Conflict(
                f"This batch kernel is registered already, as '{same}'. Start it from the Launcher, or "
                "delete it first to register it again with another name.",
                reason="batch_kernel_exists",
                details=[{"kernel_name": same}],
            )
        name = specs.kernel_name(request, backend.kind, {n for n, _ in existing})
        root = kernelspecs.kernels_dir(self._data_dir)
        await python_work(kernelspecs.install_spec, root, root / name, spec)
        made = specs.batch_kernel(name, spec)
        assert made is not None  # built above from a checked request
        log.info("registered batch kernel %s (%s)", name, made.where)
        return made

    def _runs(
        self, request: BatchKernelRequest, runtime: dict[str, Any]
    ) -> tuple[list[str], str, str, str | None]:
        """The argv shown, language, interrupt mode and base name of what the kernel runs in."""
        if request.kernel:
            base = self._base_spec(request.kernel) or {}
            provisioner = ((base.get("metadata") or {}).get("kernel_provisioner") or {}).get(
                "provisioner_name"
            )
            if provisioner == specs.PROVISIONER:
                raise Conflict(
                    f"'{request.kernel}' is a batch kernel itself; name the kernel or environment it runs in.",
                    reason="batch_kernel_nested",
                )
            return (
                [str(a) for a in base.get("argv") or []],
                str(base.get("language") or "python"),
                "message" if base.get("interrupt_mode") == "message" else "signal",
                str(base.get("display_name") or request.kernel),
            )
        if request.environment:
            prefix = Path(runtime["environment"]["prefix"])
            if not kernelspecs.has_ipykernel(prefix):
                raise Conflict(
                    f"The environment '{request.environment}' has no ipykernel, so no kernel can run in it. Add "
                    "the package ipykernel (Customise → add packages), then register the batch kernel again.",
                    reason="no_ipykernel",
                )
            python = str(prefix / "bin" / "python")
        else:
            python = "python"  # the image's own, once mounted on the node
        return [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"], "python", "signal", None

    async def list(self, limit: int = 50, offset: int = 0) -> BatchKernelList:
        found = await self._registered()
        items = sorted(found, key=lambda k: k.display_name.lower())
        page = items[offset : offset + limit]
        for kernel in page:
            kernel.sessions = await self._views(kernel.kernel_name)
        nxt = offset + len(page)
        return BatchKernelList(
            items=page,
            total=len(items),
            offset=offset,
            limit=limit,
            next_offset=nxt if nxt < len(items) else None,
        )

    async def get(self, kernel_name: str) -> BatchKernel:
        found = next((k for k in await self._registered() if k.kernel_name == kernel_name), None)
        if found is None:
            raise NotFound(f"No batch kernel named '{kernel_name}'.", reason="batch_kernel_not_found")
        found.sessions = await self._views(kernel_name)
        return found

    async def unregister(self, kernel_name: str, shutdown: bool = False) -> BatchKernel:
        """Remove the kernelspec; its running kernels are shut down with ``shutdown``, else 409 names them."""
        kernel = await self.get(kernel_name)
        live = [s for s in kernel.sessions if s.state != "ended"]
        if live and not shutdown:
            raise Conflict(
                f"{len(live)} kernel{'s' if len(live) > 1 else ''} of '{kernel.display_name}' "
                f"{'are' if len(live) > 1 else 'is'} running or waiting. Shut "
                f"{'them' if len(live) > 1 else 'it'} down first, or ask to shut them down and delete.",
                reason="kernels_running",
                details=[
                    {"kernel_id": s.kernel_id, "name": kernel.display_name, "notebook_path": s.notebook_path}
                    for s in live
                ],
            )
        for s in live:
            await self._end(s.kernel_id)
        await python_work(kernelspecs.unregister, kernel_name, self._data_dir)
        kernel.sessions = await self._views(kernel_name)
        return kernel

    async def _registered(self) -> builtins.list[BatchKernel]:
        found = await python_work(kernelspecs.read_ours, self._data_dir, specs.NAME_PREFIX)
        return [k for name, spec in found if (k := specs.batch_kernel(name, spec)) is not None]

    # ----- the sessions -----

    def open(
        self, kernel_id: str, kernel_name: str, job: dict[str, Any], cwd: Path, notebook: str
    ) -> KernelSession:
        """The provisioner's session for a kernel Jupyter starts: ``job`` is the kernelspec's job fields."""
        notebook = _under(self.jobs.root, notebook)
        backend = self.jobs.backends.get(str(job.get("backend") or "local"))
        bind = self.options.bind or ("loopback" if backend is None or backend.kind == "local" else "hostname")
        request = JobRequest.model_validate(
            {
                "notebook_path": notebook if notebook.endswith(".ipynb") else "session.ipynb",
                "name": _name(notebook),
                **job,
            }
        )
        ask = SessionAsk(
            request=request,
            cwd=cwd if cwd.is_absolute() else self.jobs.root / cwd,
            kernel_session={
                "bind": bind,
                "orphan_timeout": self.options.orphan_timeout,
                "kernel_id": kernel_id,
                "kernel_name": kernel_name,
            },
        )
        session = KernelSession(self.jobs, ask, launch_timeout=self.options.launch_timeout)
        self._sessions[kernel_id] = Opened(kernel_id, kernel_name, notebook, session)
        return session

    def ended(self, kernel_id: str) -> None:
        """The provisioner saw the session end: listed as ended for a while, then dropped."""
        opened = self._sessions.get(kernel_id)
        if opened is not None and opened.ended_at is None:
            opened.ended_at = time.time()

    async def tick(self) -> None:
        """Notice sessions whose job ended (cancelled from outside, walltime, node lost); drop old ones."""
        now = time.time()
        for kid, opened in list(self._sessions.items()):
            if opened.ended_at is None and opened.session.job is not None:
                job = await self._find(opened.session.job.id)
                if job is None or job.state in TERMINAL_STATES:
                    opened.ended_at = now
            if opened.ended_at is not None and now - opened.ended_at > self.options.ended_kept:
                del self._sessions[kid]

    async def _views(self, kernel_name: str) -> builtins.list[BatchKernelSession]:
        out = []
        for opened in [o for o in self._sessions.values() if o.kernel_name == kernel_name]:
            job = opened.session.job
            if job is not None:
                job = await self._find(job.id) or job
            out.append(_view(opened, job))
        return out

    async def _find(self, job_id: str) -> Job | None:
        try:
            return await self.jobs.store.get(job_id)
        except NotFound:  # deleted with its history
            return None

    async def _end(self, kernel_id: str) -> None:
        opened = self._sessions.get(kernel_id)
        if opened is None:
            return
        if self._shutdown is not None and opened.session.connected:
            await self._shutdown(kernel_id)  # through Jupyter, which then asks the provisioner to end it
        await opened.session.end()
        self.ended(kernel_id)

    async def stop(self) -> None:
        """The server stops: its batch kernels' jobs end with it, unless the site keeps them
        (``keep_on_shutdown``: the hosts wait ``orphan_timeout`` for a server to take them back)."""
        live = [o for o in self._sessions.values() if o.ended_at is None]
        if self.options.keep_on_shutdown:
            for opened in live:
                opened.session.let_go()
            return
        await asyncio.gather(
            *(o.session.end("The Jupyter server stopped.") for o in live), return_exceptions=True
        )


def _job_request(request: BatchKernelRequest, walltime: int) -> JobRequest:
    fields = request.model_dump(exclude={"display_name", "walltime"}, exclude_none=True)
    fields["resources"]["time_limit"] = specs.time_text(walltime)
    return JobRequest.model_validate({"notebook_path": "session.ipynb", **fields})


def _under(root: Path, notebook: str) -> str:
    """The notebook's path under the server's root, as the Lab names it (Jupyter gives it absolute)."""
    path = Path(notebook)
    if not path.is_absolute():
        return notebook
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.name


def _name(notebook: str) -> str:
    stem = Path(notebook).stem if notebook else ""
    return f"kernel: {stem}" if stem else "kernel"


def _view(opened: Opened, job: Job | None) -> BatchKernelSession:
    session = opened.session
    state = words.state_of(job, session.connected, opened.ended_at is not None)
    return BatchKernelSession(
        kernel_id=opened.kernel_id,
        kernel_name=opened.kernel_name,
        job_id=job.id if job else None,
        notebook_path=opened.notebook_path,
        state=state,
        words=words.session_words(state, job),
        queue_name=job.queue_name if job else None,
        queue_position=job.queue_position if job else None,
        pending_reason=job.pending_reason if job else None,
        estimated_start=job.estimated_start if job else None,
        node=job.node if job else None,
        started_at=job.started_at if job else None,
        ends_at=words.ends_at(job),
        restarts=session.restarts,
        reason=job.reason if job and state == "ended" else None,
        message=job.message if job and state == "ended" else None,
    )
