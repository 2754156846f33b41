"""A process that changes an environment's packages as the server does (a task of a TaskManager with a
state file), printing each progress message, for tests that kill it with SIGKILL mid-change.

usage: python change_victim.py CONFIG.json  (channel, pkgs, managed, home, env, add, remove, state)
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from jupyter_gpu_env.envs.catalog import EnvironmentCatalog
from jupyter_gpu_env.envs.rattler.engine import RattlerEngine
from jupyter_gpu_env.envs.service import EnvironmentService
from jupyter_gpu_env.tasks import TaskContext, TaskManager


async def main(cfg: dict) -> None:
    home = Path(cfg["home"])
    catalog = EnvironmentCatalog(
        [cfg["managed"]], home / "envs", conda_lists=[home / ".conda" / "environments.txt"]
    )
    svc = EnvironmentService(
        catalog,
        RattlerEngine([cfg["channel"]], cfg["pkgs"]),
        conda_list_path=home / ".conda" / "environments.txt",
    )
    tasks = TaskManager(Path(cfg["state"]))
    change = await svc.changing(cfg["env"])

    class Printed:
        def progress(self, fraction: float, message: str) -> None:
            print(message, flush=True)

        def log(self, line: str) -> None:
            pass

    async def run(ctx: TaskContext):
        return await svc.change_packages(
            change, cfg["add"], cfg["remove"], report=Printed(), change_id=ctx.task_id
        )

    task = tasks.start("install", "change", run, target=f"environments/{cfg['env']}")
    print(f"TASK {task.id}", flush=True)
    done = await tasks.wait(task.id)
    print(f"DONE {done.state} {done.message}", flush=True)


if __name__ == "__main__":
    asyncio.run(main(json.loads(Path(sys.argv[1]).read_text())))
