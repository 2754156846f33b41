"""What the cluster writes, read as untrusted: the keeper's ``state.json`` and the scheduler's log. The
user's code runs beside them and may rewrite them, so every value is bounded and a damaged file
concerns that cluster alone."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from ...errors import GpuEnvError
from ...system import untrusted
from .. import jobfiles
from .spec import STATE_JSON

MAX_STATE_BYTES = 1 << 20
_EPOCH = Field(ge=1e9, le=1e10)
Text = Annotated[str, StringConstraints(max_length=2000)]
Name = Annotated[str, StringConstraints(max_length=200)]


class PendingEntry(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: Name
    state: Literal["queued", "starting"]
    reason: Text | None = None


class Versions(BaseModel):
    model_config = ConfigDict(extra="ignore")

    python: Annotated[str, StringConstraints(max_length=40)] | None = None
    distributed: Annotated[str, StringConstraints(max_length=40)] | None = None
    dask_cuda: Annotated[str, StringConstraints(max_length=40)] | None = None


class KeeperState(BaseModel):
    """``state.json``."""

    model_config = ConfigDict(extra="ignore")

    format: Literal[1]
    updated: float = _EPOCH
    started: float = _EPOCH
    host: Name | None = None
    address: Annotated[str, StringConstraints(max_length=300, pattern=r"^[a-z]+://[^\s/]+$")] | None = None
    dashboard_port: int | None = Field(default=None, ge=1, le=65535)
    state: Literal["running", "stopping", "stopped"]
    ended: Literal["stopped", "idle", "terminated"] | None = None
    message: Text | None = None
    generation: int = Field(default=-1, ge=-1, le=1 << 31)
    requested: int = Field(default=0, ge=0, le=1_000_000)
    running: int = Field(default=0, ge=0, le=1_000_000)
    pending: list[PendingEntry] = Field(default_factory=list, max_length=100)
    pending_count: int = Field(default=0, ge=0, le=1_000_000)
    in_allocation: int = Field(default=0, ge=0, le=1_000_000)  # of those, started in the scheduler's job
    started_total: int = Field(default=0, ge=0, le=1 << 31)
    spans: list[tuple[Name, Annotated[float, _EPOCH], Annotated[float, _EPOCH] | None]] = Field(
        default_factory=list, max_length=2000
    )
    worker_seconds: float = Field(default=0.0, ge=0, le=1e12)
    idle_since: float | None = Field(default=None, ge=1e9, le=1e10)
    versions: Versions = Field(default_factory=Versions)
    problems: list[Text] = Field(default_factory=list, max_length=20)


def read_state(folder: Path) -> KeeperState | None:
    """The keeper's last state, None before it wrote one; :class:`jobfiles.Damaged` when unbelievable."""
    return jobfiles.read_model(folder / STATE_JSON, KeeperState, MAX_STATE_BYTES)


def read_state_or_damage(folder: Path) -> tuple[KeeperState | None, str | None]:
    """The keeper's last state, or None and why it cannot be believed."""
    try:
        return read_state(folder), None
    except jobfiles.Damaged as e:
        return None, e.why


def log_tail(path: Path) -> str:
    """The last line the scheduler wrote, bounded (its log is the user's code's to write too)."""
    try:
        size = path.stat().st_size
        with untrusted.open_regular_file(path) as f:
            f.seek(max(0, size - 2048))
            raw = f.read(2048)
    except (OSError, GpuEnvError):
        return ""
    lines = [line.strip() for line in raw.decode(errors="replace").splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""
