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
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from .. import kernelspecs
from ..contracts import jobfiles
from ..errors import Conflict, NotFound, kernels_running
from ..jobs.service import JobService
from ..jobs.sessions import SessionAsk
from ..models.jobs import TERMINAL_STATES, Job, JobRequest
from ..models.kernels.batch import BatchKernel, BatchKernelList, BatchKernelRequest, BatchKernelSession
from ..system.offloop import python_work
from . import specs, words
from .options import BatchKernels
from .session import KernelSession

log = logging.getLogger(__name__)
_KERNEL_ID = re.compile(r"^[0-9a-f-]{8,64}$")
_SPEC_NAME = re.compile("^" + re.escape(specs.NAME_PREFIX) + r"[a-z0-9._-]{1,120}$")

SpecReader = Callable[[str], dict[str, Any] | None]  # a kernelspec's kernel.json by name, None if unknown


class Kernels(Protocol):
    """This server's kernels, as batch kernels need them (``services.kernels.ServerKernels``)."""

    async def shutdown(self, kernel_id: str) -> None: ...
    async def take_back(self, kernel_name: str, kernel_id: str, notebook_path: str) -> None: ...
    def forget(self, kernel_id: str) -> None: ...


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
        kernels: Kernels | None = None,
    ) -> None:
        self.jobs = jobs
        self.options = options
        self._base_spec = base_spec
        self._data_dir = data_dir
        self._kernels = kernels  # None without a server (tests of the provisioner alone)
        self._sessions: dict[str, Opened] = {}
        self._kept: dict[str, Job] = {}  # kernel id -> the job of a session being taken back

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
            raise kernels_running(
                f"{len(live)} kernel{'s' if len(live) > 1 else ''} of '{kernel.display_name}' "
                f"{'are' if len(live) > 1 else 'is'} running or waiting",
                len(live),
                [
                    {"kernel_id": s.kernel_id, "name": kernel.display_name, "notebook_path": s.notebook_path}
                    for s in live
                ],
            )
        for s in live:
            await self._end(s.kernel_id)
        await python_work(kernelspecs.unregister, kernel_name, self._data_dir)
        kernel.sessions = await self._views(kernel_name)
        # Answered once, then forgotten: one registered again under this name starts with none.
        for kid in [k for k, o in self._sessions.items() if o.kernel_name == kernel_name]:
            del self._sessions[kid]
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
                "interface": self.options.interface if bind != "loopback" else "",
                "orphan_timeout": self.options.orphan_timeout,
                "kernel_id": kernel_id,
                "kernel_name": kernel_name,
            },
        )
        session = KernelSession(self.jobs, ask, launch_timeout=self.options.launch_timeout)
        kept = self._kept.pop(kernel_id, None)
        if kept is not None:
            session.adopt(kept)
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
        if self._kernels is not None and opened.session.connected:
            await self._kernels.shutdown(kernel_id)  # through Jupyter, which asks the provisioner to end it
        await opened.session.end()
        self.ended(kernel_id)

    async def stop(self) -> None:
        """The server stops: its batch kernels' jobs end with it, unless the site keeps them
        (``keep_on_shutdown``: the hosts wait ``orphan_timeout`` for a server to take them back)."""
        live = [o for o in self._sessions.values() if o.ended_at is None]
        ending = live
        if self.options.keep_on_shutdown:
            # Kept: those whose kernel runs. One still waiting holds no state, and would hold its GPU
            # with nobody to use it should it start while no server is there: it ends.
            ending = [o for o in live if not o.session.connected]
            for opened in live:
                if opened.session.connected:
                    opened.session.let_go()
                    if self._kernels is not None:
                        self._kernels.forget(opened.kernel_id)  # or Jupyter shuts it down next
        await asyncio.gather(
            *(o.session.end("The Jupyter server stopped.") for o in ending), return_exceptions=True
        )

    async def take_back(self) -> builtins.list[str]:
        """With ``keep_on_shutdown``, once the jobs are reconciled at start: give Jupyter back the batch
        kernels the last run of this server kept, under their own kernel ids and notebooks. Those whose
        job has ended, or whose host no longer answers (past ``orphan_timeout``), are let be."""
        if not self.options.keep_on_shutdown or self._kernels is None:
            return []
        taken = []
        for job in await self.jobs.store.active():
            if job.kind != "kernel":
                continue
            kept = await python_work(_kept_as, self.jobs.folder_of(job))
            if kept is None or kept[0] in self._sessions:
                continue
            kernel_id, kernel_name = kept
            self._kept[kernel_id] = job
            try:
                await self._kernels.take_back(kernel_name, kernel_id, job.notebook_path)
                taken.append(kernel_id)
                log.info("took back batch kernel %s (job %s)", kernel_id, job.id)
            except Exception as e:  # its kernelspec removed, its job ended meanwhile: not this server's
                log.warning("could not take back batch kernel %s (job %s): %s", kernel_id, job.id, e)
            finally:
                self._kept.pop(kernel_id, None)
        return taken


def _kept_as(folder: Path) -> tuple[str, str] | None:
    """(kernel id, kernelspec) a kept session's job.json names, as this server wrote them."""
    spec = jobfiles.read_json(folder / jobfiles.JOB_JSON) or {}
    session = spec.get("kernel_session")
    if not isinstance(session, dict):
        return None
    kid, name = session.get("kernel_id"), session.get("kernel_name")
    if not (
        isinstance(kid, str)
        and _KERNEL_ID.match(kid)
        and isinstance(name, str)
        and name.startswith(specs.NAME_PREFIX)
    ):
        return None
    return kid, name


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
