"""The child end of a tether (``proc.run(..., tethered=True)``): run a command, and end it, with all it
started, as soon as the process that started it dies, ``kill -9`` included.

``python -I -S tether.py PARENT_PID -- ARGV...``, started by :mod:`.proc` as the leader of a process
group of its own: it asks the kernel for a signal when its parent dies (``PR_SET_PDEATHSIG``), runs ARGV
in the same group, and ends as ARGV ends. On that signal it kills the whole group, itself included: an
installer killed with its server does not leave behind the build backend it started, still writing into
a copy of an environment that the next start removes. (``PR_SET_PDEATHSIG`` on the command alone would
end the command only; what it started would go on.) A SIGTERM to the group (a cancel) is the command's
to answer; the tether ends when the command does.

Standard library only, and run without site-packages (``-S``), so it starts in a few milliseconds.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1
ORPHANED = signal.SIGUSR1  # what the kernel sends when the parent dies


def _end_group(signum: int = 0, frame: object = None) -> None:
    os.killpg(0, signal.SIGKILL)


def main(argv: list[str]) -> int:
    parent, command = int(argv[1]), argv[3:]  # argv[2] is "--"
    signal.signal(ORPHANED, _end_group)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, ORPHANED, 0, 0, 0) != 0:
        os.write(2, f"tether: prctl failed: {os.strerror(ctypes.get_errno())}\n".encode())
        return 125
    if os.getppid() != parent:  # it died before the kernel was asked to tell
        _end_group()
    tether = os.getpid()
    child = os.fork()
    if child == 0:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(ORPHANED, signal.SIG_DFL)
        # The tether itself may be killed alone (asyncio kills only the child it started when its
        # transport is dropped): the command then ends too, never left holding its caller's pipes.
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != tether:  # killed between the fork and the prctl: nobody would say so
            os._exit(128 + signal.SIGKILL)
        try:
            os.execvp(command[0], command)
        except OSError as e:
            os.write(2, f"{command[0]}: {e.strerror}\n".encode())
        os._exit(127)
    for fd in (0, 1, 2):  # the command's output ends when the command's does
        os.close(fd)
    _, status = os.waitpid(child, 0)
    code = os.waitstatus_to_exitcode(status)
    if code < 0:  # ended by a signal: end so too, so the caller reads the same
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
