"""The conda engine on py-rattler, which runs in a child process (see :mod:`.worker`)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ... import proc
from ...errors import Conflict, DiskFull, GpuEnvError, InvalidRequest, NotFound, Unavailable
from ...models.envs import CloneReport, ExportFormat
from ...models.envs.packages import PackagesReport
from ...system.spare import SpareProcess
from ...tasks import cancel_and_wait
from ..catalog.prefix import read_records
from ..clonefiles import CopyReport, conda_files, copy_records, copy_untracked, find_untracked
from ..engine import EngineError, LogFn, ProgressFn, Reporter, part, run_stoppable, threadsafe
from ..export import environment_yaml, explicit_lock

log = logging.getLogger(__name__)

_ERRORS: dict[str, type[GpuEnvError]] = {
    "invalid_spec": InvalidRequest,
    "package_not_found": NotFound,
    "not_installed": NotFound,
    "invalid_request": Conflict,
    "unsolvable": Conflict,
    "channel_unavailable": Unavailable,
    "disk_full": DiskFull,  # the service says which disk, and what it takes (building.disk_full)
}


def channel_url(channel: str) -> str:
    """A channel as rattler takes it: URLs and names unchanged, local paths as ``file://`` URLs."""
    if "://" in channel:
        return channel
    if channel.startswith(("/", "~", ".")):
        return Path(channel).expanduser().resolve().as_uri()
    return channel


class RattlerEngine:
    """Creates, clones and changes environments with py-rattler.

    ``channels``: URLs, names (``conda-forge``) or local folders; ``pkgs_dir``: the package cache,
    which should be on the same filesystem as the environments so that packages are hard-linked.
    """

    name = "rattler"

    def __init__(
        self,
        channels: Sequence[str],
        pkgs_dir: Path | str,
        *,
        python: str | None = None,
        timeout: float | None = None,
    ) -> None:
        self.channels = [channel_url(c) for c in channels]
        self.pkgs_dir = Path(pkgs_dir).expanduser()
        self.python = python or sys.executable
        self.timeout = timeout
        # A worker started ahead of need, rattler loaded, waiting for its request: an operation then
        # does not wait for a Python to start and import (0.1-0.15 s, more on a busy or slow disk).
        self._workers = SpareProcess(
            [self.python, "-m", "jupyter_gpu_env.envs.rattler.worker"],
            "conda worker",
            env=proc.own_package_env(),
            nice=proc.BACKGROUND,
            tethered=True,  # it writes into a transaction's copy: it must not outlive its server
        )

    async def warm_up(self) -> None:
        await self._workers.warm_up()

    async def close(self) -> None:
        await self._workers.close()

    async def _call(
        self, request: dict[str, Any], progress: ProgressFn | None, log: LogFn | None
    ) -> dict[str, Any]:
        request = {"channels": self.channels, "pkgs_dir": str(self.pkgs_dir), **request}
        outcome: dict[str, Any] = {}

        def on_stdout(line: str) -> None:
            try:
                msg = json.loads(line)
            except ValueError:
                msg = {"log": line}
            if not isinstance(msg, dict):
                return
            if "progress" in msg and progress is not None:
                progress(float(msg["progress"]), str(msg.get("message", "")))
            if "log" in msg and log is not None:
                log(str(msg["log"]))
            if "result" in msg or "error" in msg:
                outcome.update(msg)

        def on_stderr(line: str) -> None:
            if log is not None and line.strip():
                log(line)

        await asyncio.to_thread(self.pkgs_dir.mkdir, parents=True, exist_ok=True)
        worker = await self._workers.take()
        try:
            res = await worker.finish(
                stdin=json.dumps(request).encode(),
                timeout=self.timeout,
                on_stdout=on_stdout,
                on_stderr=on_stderr,
                check=False,
            )
        finally:
            self._workers.replenish()
        # A result counts even if the process then died: py-rattler may abort at exit.
        if "result" in outcome:
            found: dict[str, Any] = outcome["result"]
            return found
        if "error" in outcome:
            cls = _ERRORS.get(outcome.get("reason", ""), EngineError)
            raise cls(str(outcome["error"]), reason=outcome.get("reason"))
        tail = res.stderr.strip()[-1500:]
        raise EngineError(f"The conda engine stopped unexpectedly (exit status {res.returncode}). {tail}")

    async def create(
        self,
        prefix: Path,
        specs: list[str],
        *,
        build_dir: Path | None = None,
        channels: list[str] | None = None,
        report: Reporter | None = None,
    ) -> list[str]:
        build = build_dir or prefix
        request = {"op": "create", "prefix": str(build), "final_prefix": str(prefix), "specs": list(specs)}
        if channels:
            request["channels"] = [channel_url(c) for c in channels]
        whole = part(report)
        result = await self._call(request, whole.progress, whole.log)
        installed: list[str] = result["packages"]
        return installed

    async def plan_create(
        self, specs: list[str], *, channels: list[str] | None = None, progress: ProgressFn | None = None
    ) -> list[dict[str, Any]]:
        request: dict[str, Any] = {"op": "create", "prefix": "", "specs": list(specs), "dry_run": True}
        if channels:
            request["channels"] = [channel_url(c) for c in channels]
        result = await self._call(request, progress, None)
        return list(result["plan"])

    async def clone(
        self,
        source: Path,
        prefix: Path,
        *,
        build_dir: Path | None = None,
        report: Reporter | None = None,
        link_source: bool = False,
    ) -> CloneReport:
        started = time.monotonic()
        build = build_dir or prefix
        log = part(report).log
        if not await asyncio.to_thread(self._same_filesystem, build):
            log(
                f"The package cache {self.pkgs_dir} is on another filesystem than {build}: files are copied, not hard-linked"
            )
        # The source's untracked files are found while the worker links packages: two cores, one wait.
        finding = asyncio.ensure_future(
            asyncio.to_thread(lambda: find_untracked(source, conda_files(read_records(source))))
        )
        try:
            linking = part(report, 0.0, 0.85)
            result = await self._call(
                {
                    "op": "clone",
                    "source": str(source),
                    "prefix": str(build),
                    "final_prefix": str(prefix),
                    "copy_missing": True,
                },
                linking.progress,
                linking.log,
            )
            untracked = await finding
        finally:
            await cancel_and_wait(finding)
        copied = CopyReport()
        if result["copied_from_source"]:
            how = "hard-linked or copied" if link_source else "copied"
            log(f"Not in the package cache, {how} from the source: {', '.join(result['copied_from_source'])}")
            copied.merge(
                await run_stoppable(
                    copy_records, source, build, prefix, set(result["copied_from_source"]), link=link_source
                )
            )
        tick_progress = threadsafe(part(report, 0.85, 0.99).progress)

        def tick(done: int, total: int) -> None:
            if tick_progress is not None:
                tick_progress(done / max(total, 1), f"Copying untracked files ({done}/{total})")

        copied.merge(await run_stoppable(copy_untracked, source, build, prefix, untracked, tick=tick))
        return CloneReport(
            packages=result["packages"],
            fetched=result["fetched"],
            copied_from_source=result["copied_from_source"],
            untracked_files=len(untracked),
            rewritten_files=copied.rewritten,
            binary_with_prefix=copied.binary_with_prefix,
            unreadable=copied.unreadable,
            seconds=round(time.monotonic() - started, 3),
        )

    def _same_filesystem(self, path: Path) -> bool:
        self.pkgs_dir.mkdir(parents=True, exist_ok=True)
        probe = path if path.exists() else path.parent
        return os.stat(self.pkgs_dir).st_dev == os.stat(probe).st_dev

    async def install(
        self,
        prefix: Path,
        add: list[str],
        remove: list[str],
        *,
        final_prefix: Path | None = None,
        report: Reporter | None = None,
    ) -> PackagesReport:
        request = {"op": "install", "prefix": str(prefix), "add": list(add), "remove": list(remove)}
        if final_prefix is not None:
            request["final_prefix"] = str(final_prefix)
        whole = part(report)
        result = await self._call(request, whole.progress, whole.log)
        return PackagesReport(
            installed=result["installed"], removed=result["removed"], seconds=result["seconds"]
        )

    async def plan(
        self, prefix: Path, add: list[str], remove: list[str], *, progress: ProgressFn | None = None
    ) -> list[dict[str, Any]]:
        request = {"op": "install", "prefix": str(prefix), "add": list(add), "remove": list(remove)}
        result = await self._call({**request, "dry_run": True}, progress, None)
        return list(result["plan"])

    async def search(self, query: str, limit: int) -> dict[str, Any]:
        return await self._call({"op": "search", "query": query, "limit": limit}, None, None)

    async def export(self, prefix: Path, fmt: ExportFormat, *, name: str) -> str:
        fn = environment_yaml if ExportFormat(fmt) is ExportFormat.yaml else explicit_lock
        return await asyncio.to_thread(fn, prefix, name)

    async def index(self, channel: Path, *, progress: ProgressFn | None = None) -> None:
        """Write repodata for a local channel folder (used by the demo channel builder)."""
        await self._call({"op": "index", "channel": str(channel)}, progress, None)
