"""The job folder: the one contract between the server, every backend and the runner.

The server writes ``job.json`` and ``input.ipynb``; the runner writes ``output.ipynb``, ``progress.json``,
``heartbeat`` and, last, ``status.json``; the backend captures the runner's output in ``log.txt``. Files
another process reads are replaced atomically, so a reader never sees half a JSON document. Kept free of
heavy imports: the runner imports it on the node.

The notebook's own code runs with write access to this folder, so the server believes none of it
blindly: every file it reads goes through :func:`read_bytes` (a regular file, bounded in size, never a
FIFO or a device) and is parsed into a model that bounds every value. What fails is :class:`Damaged`,
which concerns that one job. The times and the state the server records come from what it observed
or from the backend; the runner's word only fills in how the notebook ended.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from ..errors import FileRefused
from ..models.attempts import JobAttempt
from ..models.jobs import MAX_CELLS, JobGpuUsage, JobProgress
from ..system import untrusted
from ..system.atomic import write_json_atomic

# The runner's exit code for an attempt it stopped to be resumed (an opportunistic job's preemption):
# how a backend that sees only exit codes (a SLURM job's, a pod's) tells it from a failure.
EXIT_PREEMPTED = 3


def slug(text: str, limit: int = 40) -> str:
    """A folder-name-safe form of a job's name (and a batch system's job name)."""
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-._")
    return (s[:limit].rstrip("-._") or "job").lower()


JOB_JSON = "job.json"
INPUT = "input.ipynb"
OUTPUT = "output.ipynb"  # the executed notebook of a job.json that names none (an older server's)
LOG = "log.txt"
STATUS = "status.json"
PROGRESS = "progress.json"
HEARTBEAT = "heartbeat"
PID = "runner.pid"
KERNELS = "kernels"
GPU_SUMMARY = "gpu.json"
# Earlier attempts of a job that was stopped and requeued (the runner appends one as it stops).
ATTEMPTS = "attempts.json"
# Written by the server before it asks a backend to stop a job: the runner that is then signalled
# knows the user cancelled it, and does not take the signal for a preemption to resume from.
CANCEL_MARK = "cancel-requested"
# The folder a notebook may keep its own state in, to resume from after a preemption.
CHECKPOINT = "checkpoint"
# The time limit as the job's record says, in seconds (0: none), set by a backend in the runner's
# environment: the runner takes it over job.json's, which another job's code may rewrite while this
# one waits in a queue.
TIME_LIMIT_ENV = "JUPYTER_GPU_ENV_TIME_LIMIT"

# What the server reads of a job's files at most: the runner writes far less; more is not believed.
MAX_SMALL = 4096
MAX_JSON = 1 << 20

__all__ = ["write_json_atomic"]  # the runner and the backends write through this module

JOB_FORMAT = 1  # bump when job.json changes incompatibly; the runner refuses what it does not know

# Seconds since the epoch that a job's file may name: from 2001 to 2286. A start "at 0" is not believed.
_EPOCH = Field(ge=1e9, le=1e10)
M = TypeVar("M", bound=BaseModel)


def _cut(limit: int) -> BeforeValidator:
    """Keep the first ``limit`` characters of a text: a long message is shown cut, not refused."""
    return BeforeValidator(lambda v: v[:limit] if isinstance(v, str) else v)


class _FileModel(BaseModel):
    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)


class Progress(JobProgress):
    """``progress.json``: code cells done of the notebook's total."""

    model_config = ConfigDict(extra="ignore")


class Status(_FileModel):
    """``status.json``: how the runner says the notebook ended (the job's times come from the record)."""

    state: Literal["succeeded", "failed", "cancelled"]
    reason: Annotated[str, Field(pattern=r"^[a-z_]{1,64}$")] | None = None
    message: Annotated[str, _cut(4000)] = ""
    exit_code: int | None = Field(default=None, ge=-255, le=255)
    started_at: Annotated[float, _EPOCH] | None = None
    finished_at: Annotated[float, _EPOCH] | None = None
    ename: Annotated[str, _cut(200)] | None = None
    evalue: Annotated[str, _cut(4000)] | None = None
    cell: int | None = Field(default=None, ge=0, le=MAX_CELLS)
    gpu: JobGpuUsage | None = None

    @model_validator(mode="after")
    def _ends_after_start(self) -> Status:
        if self.started_at and self.finished_at and self.finished_at < self.started_at:
            raise ValueError("finished_at is before started_at")
        return self


class Attempts(_FileModel):
    """``attempts.json``: the job's earlier attempts, oldest first, as the runner recorded them."""

    attempts: list[JobAttempt] = Field(default_factory=list, max_length=1000)


class PidFile(_FileModel):
    """``runner.pid``: the runner the local backend started (``pid`` None while it is being started)."""

    pid: int | None = Field(default=None, ge=2, le=1 << 22)
    create_time: Annotated[float, _EPOCH] | None = None
    started_at: Annotated[float, _EPOCH] | None = None
    launching_at: Annotated[float, _EPOCH] | None = None
    # What it was given, for whoever reads the folder; the server takes it from the runner's own
    # environment, which the job's code cannot rewrite.
    devices: list[Annotated[str, Field(max_length=128)]] = Field(default_factory=list, max_length=64)


class Damaged(Exception):
    """A file in a job's folder that the server cannot believe: not a regular file, too large, not
    JSON, or out of range. It concerns that job alone; the job's code may have written it."""

    def __init__(self, name: str, why: str) -> None:
        super().__init__(f"its {name} is damaged: {why}")
        self.name = name
        self.why = why

    @classmethod
    def refused(cls, path: Path, e: FileRefused) -> Damaged:
        """The bounded reader's refusal (a FIFO, a device, too large), as this job's damage."""
        return cls(path.name, "it " + e.message.removeprefix(f"'{path.name}' ").rstrip("."))


def read_bytes(path: Path, limit: int) -> bytes | None:
    """The bytes of a job's file, None when it is missing; :class:`Damaged` when it is not a regular
    file of at most ``limit`` bytes (a FIFO, a link to a device, a runaway file)."""
    try:
        return untrusted.read_regular_file(path, limit, name=path.name)
    except FileNotFoundError:
        return None
    except FileRefused as e:
        raise Damaged.refused(path, e) from None
    except OSError as e:
        raise Damaged(path.name, f"it cannot be read ({e.strerror})") from None


def read_model(path: Path, model: type[M], limit: int = MAX_JSON) -> M | None:
    """A job's JSON file as ``model`` (which bounds every value), None when it is missing."""
    raw = read_bytes(path, limit)
    if raw is None:
        return None
    try:
        return model.model_validate_json(raw)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the document"
        raise Damaged(path.name, f"{where}: {first['msg']}") from None
    except (ValueError, RecursionError) as e:
        raise Damaged(path.name, f"it is not valid JSON ({type(e).__name__})") from None


def read_json(path: Path, limit: int = MAX_JSON) -> dict[str, Any] | None:
    """The JSON object in ``path``, or None when it is missing, damaged or not an object."""
    try:
        raw = read_bytes(path, limit)
        data = None if raw is None else json.loads(raw)
    except (Damaged, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def read_progress(folder: Path) -> Progress | None:
    """What the runner last wrote of its progress; :class:`Damaged` when it cannot be believed."""
    return read_model(folder / PROGRESS, Progress, MAX_SMALL)


def read_status(folder: Path) -> dict[str, Any] | None:
    """The runner's final status, when it wrote one: ``state``, ``reason``, ``message``, ``exit_code``, times.

    A status the server cannot believe reads as a failure that says so: the runner writes its
    status last, so a damaged one means the job's own code wrote over it.
    """
    try:
        status = read_model(folder / STATUS, Status)
    except Damaged as e:
        return {
            "state": "failed",
            "reason": "files_damaged",
            "message": f"How the notebook ended is unknown: {e}.",
        }
    return None if status is None else status.model_dump(exclude_none=True)


def read_pid(folder: Path) -> PidFile | None:
    """The local backend's record of the runner it started; :class:`Damaged` when unbelievable."""
    return read_model(folder / PID, PidFile, MAX_SMALL)


def read_log(path: Path, offset: int, limit: int) -> tuple[str, int, int]:
    """Text of ``path`` from byte ``offset``, about ``limit`` bytes, ending on a whole UTF-8 character.

    Returns ``(text, next_offset, size)``; a missing file reads as empty, one that is not a regular
    file as :class:`Damaged`. A follower always advances: a limit smaller than one character still
    returns that character.
    """
    try:
        with untrusted.open_regular_file(path, name=path.name) as f:
            size = os.fstat(f.fileno()).st_size
            if offset >= size:
                return "", offset, size
            f.seek(offset)
            raw = f.read(min(limit + 3, size - offset))
    except FileNotFoundError:
        return "", offset, 0
    except FileRefused as e:
        raise Damaged.refused(path, e) from None
    body = raw[:limit]
    # Hold back a character cut by the chunk's end; the next read starts with it.
    cut = _incomplete_tail(body)
    if cut:
        body = body[:-cut] if len(body) > cut else raw[: _char_length(body[0])]
    return body.decode("utf-8", "replace"), offset + len(body), size


def _char_length(lead: int) -> int:
    return 1 if lead < 0x80 else 2 if lead >> 5 == 0b110 else 3 if lead >> 4 == 0b1110 else 4


def _incomplete_tail(raw: bytes) -> int:
    """How many bytes at the end of ``raw`` begin a UTF-8 character that is not complete."""
    for back in range(1, min(4, len(raw)) + 1):
        byte = raw[-back]
        if byte & 0xC0 != 0x80:  # a lead byte (or ASCII): how long should its character be?
            return back if _char_length(byte) > back else 0
    return 0


def time_limit_of(spec: dict[str, Any], environ: Mapping[str, str]) -> float | None:
    """The runner's time limit in seconds: the backend's word (:data:`TIME_LIMIT_ENV`) where it gave
    one, else job.json's; None for none."""
    given = environ.get(TIME_LIMIT_ENV)
    if given is not None:
        try:
            seconds = float(given)
        except ValueError:
            seconds = 0.0
        return seconds if seconds > 0 and seconds != float("inf") else None
    limit = spec.get("time_limit_seconds")
    return (
        float(limit) if isinstance(limit, int | float) and not isinstance(limit, bool) and limit > 0 else None
    )


def first_tagged_cell(nb: Any, tag: str) -> int:
    """Index of the first cell tagged ``tag``, or -1 (papermill's own helper needs papermill's loader)."""
    for i, cell in enumerate(nb.cells):
        if tag in (cell.get("metadata", {}).get("tags") or ()):
            return i
    return -1


def output_name(spec: dict[str, Any]) -> str:
    """The executed notebook's file name in the job folder, as job.json names it."""
    name = spec.get("output")
    return name if isinstance(name, str) and name.endswith(".ipynb") and "/" not in name else OUTPUT


def read_gpu(folder: Path) -> JobGpuUsage | None:
    """The runner's GPU use summary (``gpu.json``), as it last wrote it; :class:`Damaged` when unbelievable."""
    return read_model(folder / GPU_SUMMARY, JobGpuUsage, MAX_SMALL * 64)


def read_attempts(folder: Path) -> list[JobAttempt]:
    """The earlier attempts the runner recorded; :class:`Damaged` when unbelievable."""
    found = read_model(folder / ATTEMPTS, Attempts, MAX_JSON)
    return [] if found is None else found.attempts


def mark_cancel(folder: Path) -> None:
    """Leave :data:`CANCEL_MARK` in a job's folder (a folder already gone needs none)."""
    try:
        (folder / CANCEL_MARK).touch()
    except OSError:
        pass
