"""The contract every conda engine fulfils, and small helpers they share.

An engine changes prefixes on disk; it knows nothing about names, managed or own, kernels or
``environments.txt`` (that is :mod:`.service`). :class:`~.rattler.engine.RattlerEngine` implements it
with py-rattler in a child process; a ``conda``/``mamba`` command-line engine can implement the same
methods with ``proc.run``.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar

from ..errors import GpuEnvError
from ..models.envs import CloneReport, ExportFormat
from ..models.envs.packages import PackagesReport

ProgressFn = Callable[[float, str], None]
LogFn = Callable[[str], None]
T = TypeVar("T")


class Reporter(Protocol):
    """Where a long operation says how far it is and what its tools print: a task's context on the
    server, a progress bar on a terminal."""

    def progress(self, fraction: float, message: str) -> None: ...

    def log(self, line: str) -> None: ...


class EngineError(GpuEnvError):
    """The engine failed for a reason that is not the caller's (a crash, a broken package)."""

    status = 502
    reason = "engine_failed"


class CondaEngine(Protocol):
    name: str
    # The configured channels, as URLs (local folders as file:// URLs) or names: where packages come from.
    channels: list[str]

    async def warm_up(self) -> None:
        """Get ready for the first operation ahead of need (at server start); never fails."""
        ...

    async def close(self) -> None:
        """Let go of what :meth:`warm_up` holds (at server stop)."""
        ...

    async def create(
        self,
        prefix: Path,
        specs: list[str],
        *,
        build_dir: Path | None = None,
        channels: list[str] | None = None,
        report: Reporter | None = None,
    ) -> list[str]:
        """Solve ``specs`` and install them as a new environment whose final path is ``prefix``.

        With ``build_dir``, files are written there (with ``prefix`` embedded) for the caller to rename;
        with ``channels``, those are solved against instead of the configured ones (an explicit lock's).
        Returns ``name-version-build`` of the installed packages.
        """
        ...

    async def plan_create(
        self, specs: list[str], *, channels: list[str] | None = None, progress: ProgressFn | None = None
    ) -> list[dict[str, Any]]:
        """What ``create`` would install, as :meth:`plan` says it (every ``before`` null)."""
        ...

    async def clone(
        self,
        source: Path,
        prefix: Path,
        *,
        build_dir: Path | None = None,
        report: Reporter | None = None,
        link_source: bool = False,
    ) -> CloneReport:
        """Make ``prefix`` a copy of ``source`` with conda's clone semantics (see ``create``).
        ``link_source``: packages the cache lacks may be hard-linked from ``source`` (a managed
        environment, its admin's to change), not only copied."""
        ...

    async def install(
        self,
        prefix: Path,
        add: list[str],
        remove: list[str],
        *,
        final_prefix: Path | None = None,
        report: Reporter | None = None,
    ) -> PackagesReport:
        """Add match specs to and remove packages (and their dependents) from ``prefix``.

        With ``final_prefix``, ``prefix`` is a transaction's copy that will be renamed there: new files
        embed ``final_prefix``.
        """
        ...

    async def plan(
        self, prefix: Path, add: list[str], remove: list[str], *, progress: ProgressFn | None = None
    ) -> list[dict[str, Any]]:
        """What ``install`` would change in ``prefix``, changing nothing: one dict per package with
        ``name``, ``before``/``after`` (versions, null when absent), ``build_before``/``build_after`` and
        ``download_bytes`` (0 when cached, null when unknown)."""
        ...

    async def search(self, query: str, limit: int) -> dict[str, Any]:
        """Package names of the channels holding ``query`` (best ``limit``), each with its newest
        versions: ``{"packages": [{"name", "versions"}], "total": matching names}``."""
        ...

    async def export(self, prefix: Path, fmt: ExportFormat, *, name: str) -> str:
        """An environment.yml or an explicit lock of ``prefix``."""
        ...


class _Part:
    def __init__(self, report: Reporter | None, lo: float, hi: float) -> None:
        self.report, self.lo, self.hi = report, lo, hi

    def progress(self, fraction: float, message: str) -> None:
        if self.report is not None:
            self.report.progress(self.lo + (self.hi - self.lo) * min(max(fraction, 0.0), 1.0), message)

    def log(self, line: str) -> None:
        if self.report is not None:
            self.report.log(line)


def part(report: Reporter | None, lo: float = 0.0, hi: float = 1.0) -> Reporter:
    """``report``'s way from ``lo`` to ``hi`` as a whole way (0..1), its log as it is; none: silent."""
    return _Part(report, lo, hi)


def scaled(progress: ProgressFn | None, lo: float, hi: float) -> ProgressFn:
    """A progress function mapping 0..1 into ``lo..hi`` of ``progress``."""

    def report(fraction: float, message: str) -> None:
        if progress is not None:
            progress(lo + (hi - lo) * min(max(fraction, 0.0), 1.0), message)

    return report


async def run_stoppable(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run blocking ``fn(*args, stop=Event, **kwargs)`` in a thread; on cancel, stop it and wait.

    A thread cannot be killed, so cancelling sets ``stop`` and waits until ``fn`` has noticed:
    only then may the caller remove what ``fn`` was writing into.
    """
    stop = threading.Event()
    fut = asyncio.ensure_future(asyncio.to_thread(fn, *args, stop=stop, **kwargs))
    try:
        return await asyncio.shield(fut)
    except asyncio.CancelledError:
        stop.set()
        try:
            await fut
        except BaseException:  # its outcome no longer matters; the cancellation does
            pass
        raise


def threadsafe(progress: ProgressFn | None) -> ProgressFn | None:
    """Wrap ``progress`` so a worker thread can call it: the call runs on the event loop."""
    if progress is None:
        return None
    loop = asyncio.get_running_loop()

    def report(fraction: float, message: str) -> None:
        loop.call_soon_threadsafe(progress, fraction, message)

    return report
