"""The conda worker a server keeps ready: it serves the next operation, another follows, close ends it.

(How a spare leaves when its server dies: tests/test_spare.py.)
"""

from __future__ import annotations

import psutil
from helpers import wait_until


def workers() -> set[int]:
    """Conda workers started by this test process (each through its tether, which names it too)."""
    return {
        p.pid
        for p in psutil.Process().children(recursive=True)
        if "jupyter_gpu_env.envs.rattler.worker" in " ".join(p.cmdline())
        and "tether.py" not in " ".join(p.cmdline())
    }


async def test_a_spare_serves_the_next_clone_and_close_ends_it(service):
    engine = service.engine
    await engine.warm_up()
    (spare,) = await wait_until(workers, what="a spare worker")
    result = await service.clone("demo", "quick")
    assert result.report.packages >= 30
    assert not psutil.pid_exists(spare) or psutil.Process(spare).status() == psutil.STATUS_ZOMBIE
    (following,) = await wait_until(lambda: workers() - {spare}, what="the next spare")
    await engine.close()
    assert workers() == set()
    assert not psutil.pid_exists(following) or psutil.Process(following).status() == psutil.STATUS_ZOMBIE


async def test_without_warm_up_no_spare_is_kept(service):
    await service.clone("demo", "plain")  # a command-line run: one worker per operation, none left
    assert workers() == set()
