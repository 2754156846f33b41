"""`tasks`, `tasks/{task_id}`: follow and cancel long operations."""

from __future__ import annotations

from ..models.tasks import Task, TaskList
from .base import GpuEnvHandler, Param, operation


class TasksHandler(GpuEnvHandler):
    @operation(
        "Recent tasks, newest first",
        response=TaskList,
        query=(
            Param(
                "kind",
                {"type": "string", "pattern": "^[a-z-]{1,40}$"},
                "Only tasks of this kind, e.g. `clone`.",
            ),
        ),
        errors=(400,),
    )
    async def get(self) -> TaskList:
        return TaskList(tasks=self.services.tasks.list(self.query["kind"]))


class TaskHandler(GpuEnvHandler):
    @operation("One task: state, progress, message and log tail", response=Task, errors=(404,))
    async def get(self, task_id: str) -> Task:
        return self.services.tasks.get(task_id)

    @operation(
        "Cancel a task",
        response=Task,
        errors=(404, 409),
        description="Stops the operation and removes what it had built; answers the task as it ended. The "
        "task stays readable afterwards, so that a reload still shows how it ended.",
    )
    async def delete(self, task_id: str) -> Task:
        return await self.services.tasks.cancel(task_id)
