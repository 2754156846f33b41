"""A process started ahead of need: it serves the next operation, another follows, close ends it."""

from __future__ import annotations

import subprocess
import sys

import psutil
from helpers import wait_until

from jupyter_gpu_env.system.spare import SpareProcess

# Answers its request with the request, or "none" when it gets none.
ECHO = [
    sys.executable,
    "-c",
    "import sys\n"
    "from jupyter_gpu_env.system.spare import read_request\n"
    "r = read_request()\n"
    "sys.stdout.write('none' if r is None else 'got ' + r.decode())\n",
]


def ended(pid: int) -> bool:
    return not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def children() -> set[int]:
    return {p.pid for p in psutil.Process().children() if "read_request" in " ".join(p.cmdline())}


async def test_the_spare_serves_the_next_operation_and_another_follows():
    spares = SpareProcess(ECHO, "echo")
    await spares.warm_up()
    (spare,) = await wait_until(children, what="a spare")
    taken = await spares.take()
    assert taken.process.pid == spare
    result = await taken.finish(stdin=b"one")
    assert result.stdout == "got one"
    spares.replenish()
    (following,) = await wait_until(lambda: children() - {spare}, what="the next spare")
    assert (await (await spares.take()).finish(stdin=b"two")).stdout == "got two"
    await spares.close()
    assert ended(following)
    assert children() == set()


async def test_without_warm_up_each_operation_starts_its_own():
    spares = SpareProcess(ECHO, "echo")
    assert (await (await spares.take()).finish(stdin=b"x")).stdout == "got x"
    spares.replenish()  # keeps none: a command-line run
    assert children() == set()


async def test_an_empty_request_is_none():
    spares = SpareProcess(ECHO, "echo")
    assert (await (await spares.take()).finish(stdin=b"")).stdout == "none"


def test_a_spare_leaves_when_its_server_goes():
    """The spare's input is its server's pipe: when the server dies, the spare reads the end and exits."""
    code = (
        "import asyncio, os, sys\n"
        "from jupyter_gpu_env.system.spare import SpareProcess\n"
        "async def main():\n"
        f"    s = SpareProcess({ECHO!r}, 'echo')\n"
        "    await s.warm_up()\n"
        "    print(s._spare.process.pid, flush=True)\n"
        "    os._exit(0)\n"  # no close(): a killed server
        "asyncio.run(main())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    pid = int(out.stdout.strip())
    try:
        psutil.Process(pid).wait(timeout=30)
    except psutil.NoSuchProcess:
        pass
    assert ended(pid)
