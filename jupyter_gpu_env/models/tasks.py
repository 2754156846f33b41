from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from .common import ApiModel

TaskState = Literal["pending", "running", "succeeded", "failed", "cancelled"]


class Task(ApiModel):
    """A long operation (clone, install, pack): poll it for progress, DELETE it to cancel."""

    id: str
    kind: str = Field(description="What the task does, e.g. `clone`, `install`, `pack`.")
    title: str = Field(description="A sentence for the user, e.g. \"Clone 'base' as 'mine'\".")
    state: TaskState
    progress: float = Field(ge=0, le=1, description="Fraction done, 0..1.")
    message: str = Field(default="", description="What the task is doing now, or why it ended.")
    reason: str | None = Field(default=None, description="Machine-readable reason when failed or cancelled.")
    log_tail: list[str] = Field(default_factory=list, description="The last lines of the task's log.")
    result: Any | None = Field(default=None, description="What the task produced, when it succeeded.")
    target: str | None = Field(default=None, description="The API path of the resource the task works on.")
    created_at: float
    finished_at: float | None = None


class TaskList(ApiModel):
    tasks: list[Task]
