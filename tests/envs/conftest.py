"""Fixtures of the environment tests: an offline wheelhouse, and processes that change environments
as a server does (``victims``), to be looked at mid-change or killed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from helpers import make_wheel

VICTIM = Path(__file__).with_name("change_victim.py")


@pytest.fixture
def wheelhouse(demo, tmp_path) -> Path:
    """Our hand-made wheels and the demo's extra ones (six): an offline index."""
    folder = tmp_path / "wheelhouse"
    folder.mkdir()
    make_wheel(folder, "gpuenvmini", "1.0", value="one")
    make_wheel(folder, "gpuenvmini", "2.0", value="two")
    for wheel in demo.extra_wheels.glob("*.whl"):
        (folder / wheel.name).symlink_to(wheel)
    return folder


class Victim:
    """One ``change_victim.py`` process: what it printed, read up to a line; resumed; killed."""

    def __init__(self, config: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(VICTIM), str(config)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self.seen: list[str] = []
        self.task_id: str | None = None

    def until(self, start: str, within: float = 120) -> str:
        """Read what it prints up to the first line starting with ``start``; returns that line."""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + within
        for line in self.proc.stdout:
            self.seen.append(line.strip())
            if line.startswith("TASK "):
                self.task_id = line.split()[1]
            if line.startswith(start):
                return line.strip()
            assert time.monotonic() < deadline, self.seen
        raise AssertionError(f"ended before {start!r}: {self.seen}")

    def resume(self) -> None:
        """Go on from the checkpoint it is paused at."""
        assert self.proc.stdin is not None
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()

    def kill(self) -> None:
        """SIGKILL the process and every process it started (the engine's worker runs in its own
        session)."""
        family = [self.proc.pid] + [c.pid for c in psutil.Process(self.proc.pid).children(recursive=True)]
        for pid in family:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.kill()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()


@pytest.fixture
def victims(demo) -> Any:
    """``victims(home, env, state, **config)``: a :class:`Victim` changing ``env`` of the user folder
    ``home`` (see change_victim.py for ``config``), its tasks recorded in ``state``."""
    started: list[Victim] = []

    def start(home: Path, env: str, state: Path, **config: Any) -> Victim:
        path = home / f"victim-{len(started)}.json"
        path.write_text(
            json.dumps(
                {
                    "channel": str(demo.channel),
                    "pkgs": str(demo.pkgs),
                    "managed": str(demo.managed_dir),
                    "home": str(home),
                    "env": env,
                    "state": str(state),
                    **config,
                }
            )
        )
        started.append(Victim(path))
        return started[-1]

    yield start
    for victim in started:
        victim.close()
