"""proc.spawn_detached: the one way a batch runner is started on this machine."""

from __future__ import annotations

import json
import os
import sys
import time

import psutil
import pytest
from helpers import wait_until_sync

from jupyter_gpu_env import proc
from jupyter_gpu_env.errors import Conflict

CHILD = """
import json, os, sys, time
time.sleep(0.5)  # still running when spawn_detached has returned
print(json.dumps({"sid": os.getsid(0), "pgid": os.getpgid(0), "cwd": os.getcwd(),
                  "stdin": sys.stdin.read(), "var": os.environ.get("SPAWN_VAR")}), flush=True)
print("to stderr", file=sys.stderr, flush=True)
"""


def test_spawn_detached_returns_at_once_in_a_new_session(tmp_path):
    out = tmp_path / "log.txt"
    out.write_text("earlier line\n")
    t0 = time.monotonic()
    pid = proc.spawn_detached(
        [sys.executable, "-c", CHILD], cwd=tmp_path, env={**os.environ, "SPAWN_VAR": "x"}, stdout_path=out
    )
    assert time.monotonic() - t0 < 0.4  # it does not wait for the child
    assert psutil.pid_exists(pid)
    wait_until_sync(lambda: "to stderr" in out.read_text(), within=10, what="the child's output")
    lines = out.read_text().splitlines()
    assert lines[0] == "earlier line"  # appended, not truncated
    seen = json.loads(lines[1])
    assert seen == {"sid": pid, "pgid": pid, "cwd": str(tmp_path), "stdin": "", "var": "x"}
    # Reaped by the spawner's thread: no zombie is left behind.
    wait_until_sync(lambda: not psutil.pid_exists(pid), within=10, what=f"process {pid} being reaped")


def test_spawn_detached_takes_argv_lists_only(tmp_path):
    with pytest.raises(TypeError):
        proc.spawn_detached("echo hi", cwd=tmp_path, env=None, stdout_path=tmp_path / "o")  # type: ignore[arg-type]
    with pytest.raises(Conflict, match="not found"):
        proc.spawn_detached(["/no/such/program"], cwd=tmp_path, env=None, stdout_path=tmp_path / "o")
