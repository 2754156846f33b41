"""A process that changes an environment as a server does (a task of a TaskManager with a state file),
printing each progress message, for tests that kill it with SIGKILL mid-change, or that look at what it
holds while it works.

usage: python change_victim.py CONFIG.json

CONFIG: channel, pkgs, managed, home, env, state; ``shared`` (folders to share in, optional); ``action``:
``packages`` (the default: ``add`` and ``remove``), ``undo``, or ``publish`` (as ``as``). With ``pause``,
the process stops, alive, at that checkpoint until a line arrives on its input: ``BUILDING`` (the first
progress message of a publish, its copy being built), ``READY`` (the task on record, its work not begun)
or ``APPLIED`` (its work done, its end not yet on record).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from jupyter_gpu_env.envs.catalog import EnvironmentCatalog
from jupyter_gpu_env.envs.rattler.engine import RattlerEngine
from jupyter_gpu_env.envs.service import EnvironmentService
from jupyter_gpu_env.models.envs import PublishRequest
from jupyter_gpu_env.tasks import TaskContext, TaskManager


def checkpoint(cfg: dict, name: str) -> None:
    print(name, flush=True)
    if cfg.get("pause") == name:
        sys.stdin.readline()  # blocks the whole process, as a server stopped right there


async def main(cfg: dict) -> None:
    home = Path(cfg["home"])
    catalog = EnvironmentCatalog(
        [cfg["managed"]],
        home / "envs",
        conda_lists=[home / ".conda" / "environments.txt"],
        shared_dirs=cfg.get("shared", []),
    )
    svc = EnvironmentService(
        catalog,
        RattlerEngine([cfg["channel"]], cfg["pkgs"]),
        conda_list_path=home / ".conda" / "environments.txt",
    )
    tasks = TaskManager(Path(cfg["state"]))
    action = cfg.get("action", "packages")

    class Printed:
        building = False

        def progress(self, fraction: float, message: str) -> None:
            print(message, flush=True)
            if action == "publish" and not self.building:
                self.building = True
                checkpoint(cfg, "BUILDING")

        def log(self, line: str) -> None:
            pass

    if action == "undo":
        change = await svc.undoing(cfg["env"])
    elif action == "publish":
        change = await svc.publishing(cfg["env"], cfg["as"])
    else:
        change = await svc.changing(cfg["env"])

    async def run(ctx: TaskContext) -> Any:
        checkpoint(cfg, "READY")
        if action == "undo":
            result = await svc.undo(change, change_id=ctx.task_id)
        elif action == "publish":
            request = PublishRequest(description="in progress", name=cfg["as"])
            result = await svc.publish(change, request, report=Printed())
        else:
            result = await svc.change_packages(
                change, cfg["add"], cfg["remove"], report=Printed(), change_id=ctx.task_id
            )
        checkpoint(cfg, "APPLIED")
        return result

    kind = "install" if action == "packages" else action  # as the server names its tasks
    task = tasks.start(kind, "change", run, target=f"environments/{cfg['env']}", on_done=change.release)
    print(f"TASK {task.id}", flush=True)
    done = await tasks.wait(task.id)
    print(f"DONE {done.state} {done.message}", flush=True)
    await svc.close()


if __name__ == "__main__":
    asyncio.run(main(json.loads(Path(sys.argv[1]).read_text())))
