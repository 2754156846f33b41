"""Long operations as tasks: an id, progress, a log tail, cancellation, and state that survives restarts.

A task wraps one coroutine. The coroutine reports through its :class:`TaskContext`; it is cancelled
with ``asyncio.Task.cancel`` (which ``proc.run`` turns into killing the child's process group), so
services only have to clean up in ``finally`` or ``except CancelledError`` blocks. Tasks are written to
a JSON file when they start and when they end, so that a reload, or a restart, still shows how an
operation ended; a task that was running when the server died is shown as "interrupted by a server
restart", with what the service that owned it finds on disk of its outcome (``recover``): failed, or
succeeded when its work had been done.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from .errors import Conflict, GpuEnvError, NotFound
from .models.tasks import Task, TaskState
from .system.atomic import write_json_atomic

log = logging.getLogger(__name__)

_LOG_TAIL = 40
_FINAL: set[TaskState] = {"succeeded", "failed", "cancelled"}


async def cancel_and_wait(task: asyncio.Future[Any] | None, *, quiet: bool = False) -> None:
    """Cancel ``task`` and wait until it has ended, so that what it held is let go.

    A background loop's own failure was logged when it happened; ``quiet`` keeps it from ending the
    caller's shutdown as well.
    """
    if task is None:
        return
    if task.done():
        if not task.cancelled():
            task.exception()  # seen: the caller's own outcome is what counts now
        return
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, *((Exception,) if quiet else ())):
        await task


class TaskContext:
    """What a running operation uses to report progress and log lines."""

    def __init__(self, record: _Record) -> None:
        self._record = record

    @property
    def task_id(self) -> str:
        return self._record.id

    def progress(self, fraction: float, message: str | None = None) -> None:
        self._record.progress = min(max(float(fraction), self._record.progress), 1.0)
        if message:
            self._record.message = message

    def log(self, line: str) -> None:
        self._record.log.append(line.rstrip("\n"))


class _Record:
    def __init__(
        self, task_id: str, kind: str, title: str, target: str | None, key: str | None = None
    ) -> None:
        self.id = task_id
        self.key = key
        self.kind = kind
        self.title = title
        self.target = target
        self.state: TaskState = "pending"
        self.progress = 0.0
        self.message = "Waiting to start"
        self.reason: str | None = None
        self.log: deque[str] = deque(maxlen=_LOG_TAIL)
        self.result: Any = None
        self.created_at = time.time()
        self.finished_at: float | None = None
        self.future: asyncio.Task[None] | None = None

    def model(self) -> Task:
        return Task(
            id=self.id,
            kind=self.kind,
            title=self.title,
            state=self.state,
            progress=self.progress,
            message=self.message,
            reason=self.reason,
            log_tail=list(self.log),
            result=self.result,
            target=self.target,
            created_at=self.created_at,
            finished_at=self.finished_at,
        )

    @classmethod
    def from_model(cls, task: Task) -> _Record:
        rec = cls(task.id, task.kind, task.title, task.target)
        rec.state, rec.progress, rec.message, rec.reason = (
            task.state,
            task.progress,
            task.message,
            task.reason,
        )
        rec.log.extend(task.log_tail)
        rec.result, rec.created_at, rec.finished_at = task.result, task.created_at, task.finished_at
        return rec


Operation = Callable[[TaskContext], Awaitable[Any]]


@dataclass(frozen=True)
class Outcome:
    """What a service found on disk of a task the server died in: a sentence, and whether the task's
    work had been done (then the task succeeded, though it could not say so)."""

    note: str
    applied: bool = False


# What a service can tell of a task the server died in, or None when it knows nothing more.
Recover = Callable[[Task], Outcome | None]
INTERRUPTED = "Interrupted by a server restart."


class TaskManager:
    def __init__(
        self, state_file: Path | None = None, keep: int = 200, recover: Recover | None = None
    ) -> None:
        self._tasks: OrderedDict[str, _Record] = OrderedDict()
        self._state_file = state_file
        self._keep = keep
        self._stopping = False
        self._recover = recover
        self._seq = 0  # snapshots are numbered so that an older one never overwrites a newer one
        self._written = 0
        self._write_lock = threading.Lock()
        self._load()

    def _load(self) -> None:
        if self._state_file is None or not self._state_file.exists():
            return
        try:
            saved = json.loads(self._state_file.read_text())
        except (OSError, ValueError) as e:
            log.warning("ignoring unreadable task state %s: %s", self._state_file, e)
            return
        for raw in saved:
            try:
                rec = _Record.from_model(Task.model_validate(raw))
            except ValueError:
                continue
            if rec.state not in _FINAL:
                outcome = None
                if self._recover is not None:
                    try:
                        outcome = self._recover(rec.model())
                    except Exception:  # what it could not tell is not worth failing the start for
                        log.exception("could not tell how interrupted task %s ended", rec.id)
                if outcome is not None and outcome.applied:
                    rec.state, rec.reason, rec.progress = "succeeded", None, 1.0
                else:
                    rec.state, rec.reason = "failed", "interrupted"
                note = outcome.note if outcome is not None else "Nothing it was building was kept."
                rec.message = f"{INTERRUPTED} {note}"
                rec.finished_at = rec.finished_at or time.time()
            self._tasks[rec.id] = rec

    async def _persist(self) -> None:
        """Write every task's state (taken now, on the loop) to the state file, in a thread."""
        if self._state_file is None:
            return
        self._seq += 1
        data = [r.model().model_dump(mode="json") for r in self._tasks.values()]
        await asyncio.to_thread(self._write, self._seq, data)

    def _write(self, seq: int, data: list[dict[str, Any]]) -> None:
        assert self._state_file is not None
        with self._write_lock:
            if seq < self._written:
                return
            self._state_file.parent.mkdir(parents=True, exist_ok=True)
            write_json_atomic(self._state_file, data)
            self._written = seq

    def _prune(self) -> None:
        finished = [k for k, r in self._tasks.items() if r.state in _FINAL]
        for key in finished[: max(0, len(self._tasks) - self._keep)]:
            del self._tasks[key]

    def start(
        self,
        kind: str,
        title: str,
        operation: Operation,
        *,
        target: str | None = None,
        key: str | None = None,
        on_done: Callable[[], None] | None = None,
    ) -> Task:
        """Start ``operation`` as a task; with ``key``, an unfinished task of that key is answered instead.

        Synchronous from the check to the start, so that concurrent requests for the same work (twenty
        packs of one environment) share one task. ``on_done`` runs when the task ends however it ends,
        even cancelled before it began (it releases what the request reserved for it).
        """
        if key is not None and (running := self.unfinished(key)) is not None:
            return running
        rec = _Record(uuid.uuid4().hex[:16], kind, title, target, key)
        self._tasks[rec.id] = rec
        self._prune()
        rec.future = asyncio.get_running_loop().create_task(self._run(rec, operation), name=f"gpu-env-{kind}")
        if on_done is not None:
            rec.future.add_done_callback(lambda _: on_done())
        return rec.model()

    async def _run(self, rec: _Record, operation: Operation) -> None:
        rec.state, rec.message = "running", "Starting"
        try:
            # On record before the work begins: a crash from here on is shown as interrupted.
            await self._persist()
            result = await operation(TaskContext(rec))
        except asyncio.CancelledError:
            rec.state, rec.reason = "cancelled", "cancelled"
            rec.message = (
                "Stopped because the server shut down; nothing was kept."
                if self._stopping
                else "Cancelled; nothing was kept."
            )
        except GpuEnvError as e:
            rec.state, rec.reason, rec.message = "failed", e.reason, e.message
        except Exception as e:
            log.exception("task %s (%s) failed", rec.id, rec.kind)
            rec.state, rec.reason = "failed", "internal_error"
            rec.message = f"Unexpected error: {e}. The server log has the details."
        else:
            rec.state, rec.progress = "succeeded", 1.0
            rec.result = result.model_dump(mode="json") if isinstance(result, BaseModel) else result
            # Keep the operation's own last word ("Cloned 'a' as 'b'") when it gave one.
            if rec.message in ("", "Starting", "Waiting to start"):
                rec.message = "Done"
        finally:
            rec.finished_at = time.time()
            await asyncio.shield(self._persist())

    def unfinished(self, key: str) -> Task | None:
        """The unfinished task started with ``key``, if any."""
        for rec in self._tasks.values():
            if rec.key == key and rec.state not in _FINAL:
                return rec.model()
        return None

    def get(self, task_id: str) -> Task:
        return self._record(task_id).model()

    def _record(self, task_id: str) -> _Record:
        try:
            return self._tasks[task_id]
        except KeyError:
            raise NotFound(f"No task with id '{task_id}'; it may have finished long ago.") from None

    def list(self, kind: str | None = None) -> list[Task]:
        recs = reversed(self._tasks.values())
        return [r.model() for r in recs if kind is None or r.kind == kind]

    def active(self, target: str) -> Task | None:
        """The unfinished task working on ``target``, if any (to refuse a second one)."""
        for rec in self._tasks.values():
            if rec.target == target and rec.state not in _FINAL:
                return rec.model()
        return None

    async def cancel(self, task_id: str) -> Task:
        rec = self._record(task_id)
        if rec.state in _FINAL:
            raise Conflict(f"Task '{task_id}' has already {rec.state}.", reason="task_finished")
        if rec.future is not None:
            await cancel_and_wait(rec.future)
        return rec.model()

    async def wait(self, task_id: str) -> Task:
        rec = self._record(task_id)
        if rec.future is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(rec.future)
        return rec.model()

    async def stop(self) -> None:
        """Cancel what still runs (their cleanup runs) and record the final states."""
        self._stopping = True
        running = [r.future for r in self._tasks.values() if r.future and not r.future.done()]
        for fut in running:
            fut.cancel()
        if running:
            await asyncio.gather(*running, return_exceptions=True)
