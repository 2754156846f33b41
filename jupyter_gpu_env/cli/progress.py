"""A progress bar on a terminal: one redrawn line on a TTY, plain lines otherwise.

:class:`ProgressBar` has the two methods a :class:`~jupyter_gpu_env.tasks.TaskContext` has,
``progress(fraction, message)`` and ``log(line)``, so the services that take a context (image packs)
or a progress and a log function (clones, package changes) report to it directly.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import sys
import time
from collections import deque
from types import TracebackType
from typing import TextIO

_WIDTH = 24  # characters of the bar itself
_PLAIN_STEP = 0.1  # without a TTY, a line per message change or per tenth of the way
_REDRAW = 0.08  # seconds between two redraws on a TTY
_DIGITS = re.compile(r"\d+")


class ProgressBar:
    """Report one operation's progress on ``stream`` (default: standard error)."""

    def __init__(
        self,
        title: str,
        stream: TextIO | None = None,
        *,
        tty: bool | None = None,
        verbose: bool = False,
    ) -> None:
        self.title = title
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.verbose = verbose
        self.fraction = 0.0
        self.message = ""
        self.tail: deque[str] = deque(maxlen=20)
        self._drawn = 0.0
        self._line = ""  # last line drawn on a TTY
        self._printed: tuple[int, str] | None = None  # (step, message shape) last printed
        self._closed = False

    # -- what the services call ------------------------------------------------------------------

    def progress(self, fraction: float, message: str | None = None) -> None:
        """Move to ``fraction`` (0..1, never backwards) and show ``message``."""
        self.fraction = min(max(float(fraction), self.fraction), 1.0)
        if message:
            self.message = message
        if self.tty:
            now = time.monotonic()
            if now - self._drawn >= _REDRAW or self.fraction >= 1.0:
                self._draw()
                self._drawn = now
        else:
            # Counters in messages ("Linking packages (12/80)") do not make a new line; steps do.
            shown = (int(self.fraction / _PLAIN_STEP), _DIGITS.sub("#", self.message))
            if shown != self._printed:
                self._write(f"[{self.fraction:4.0%}] {self.message}\n")
                self._printed = shown

    __call__ = progress

    def log(self, line: str) -> None:
        """A line of the operation's own output: kept, and shown with ``verbose``."""
        line = line.rstrip("\n")
        self.tail.append(line)
        if not self.verbose:
            return
        if self.tty:
            self._write(f"\r\x1b[K{line}\n")
            self._draw(again=True)
        else:
            self._write(f"  | {line}\n")

    # -- lifetime --------------------------------------------------------------------------------

    def close(self, final: str | None = None, *, done: bool = False) -> None:
        """End the bar; ``final`` replaces the message, ``done`` completes it (the line stays)."""
        if self._closed:
            return
        self._closed = True
        if final:
            self.message = final
        if done and self.fraction < 1.0:
            self.fraction = 1.0
            final = final or self.message
        if self.tty:
            self._draw()
            self._write("\n")
        elif final:
            self._write(f"[{self.fraction:4.0%}] {final}\n")

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if kind is None:
            self.close(done=True)
        elif issubclass(kind, KeyboardInterrupt | asyncio.CancelledError):
            self.close("Cancelled")
        else:
            self.close("Failed")

    # -- drawing ---------------------------------------------------------------------------------

    def render(self, width: int) -> str:
        """The bar as one line of at most ``width`` characters."""
        filled = round(self.fraction * _WIDTH)
        line = f"{self.title} [{'#' * filled}{'.' * (_WIDTH - filled)}] {self.fraction:4.0%} {self.message}"
        return line if len(line) <= width else line[: max(width - 3, 0)] + "..."

    def _draw(self, *, again: bool = False) -> None:
        line = self.render(shutil.get_terminal_size((80, 24)).columns - 1)
        if line != self._line or again:
            self._write(f"\r\x1b[K{line}")
            self._line = line

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed or broken terminal must not fail the operation
            pass
