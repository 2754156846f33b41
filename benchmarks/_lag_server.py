"""`jupyter server` with its event loop's lag recorded: `python _lag_server.py LAG_FILE [server options]`.

A callback scheduled every 5 ms notes how late it ran. Each lateness over 10 ms is appended to LAG_FILE
as `unix-time milliseconds`: the time the loop could not run anything else. The benchmark reads the
lines that fall inside its burst.
"""

from __future__ import annotations

import asyncio
import sys
import time

from jupyter_server.serverapp import ServerApp

PERIOD = 0.005


def _watch(path: str) -> None:
    loop = asyncio.get_event_loop()
    out = open(path, "a", buffering=1)
    expected = [time.monotonic() + PERIOD]

    def beat() -> None:
        now = time.monotonic()
        late = now - expected[0]
        if late > 0.010:
            out.write(f"{time.time():.3f} {late * 1000:.1f}\n")
        expected[0] = now + PERIOD
        loop.call_later(PERIOD, beat)

    loop.call_later(PERIOD, beat)


def main() -> None:
    path = sys.argv.pop(1)
    original = ServerApp.start_ioloop

    def start_ioloop(self: ServerApp) -> None:
        _watch(path)
        original(self)

    ServerApp.start_ioloop = start_ioloop  # type: ignore[method-assign]
    sys.exit(ServerApp.launch_instance())


if __name__ == "__main__":
    main()
