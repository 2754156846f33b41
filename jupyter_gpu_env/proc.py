"""The one subprocess seam: asyncio, argv lists only, timeouts, cancellation, line callbacks; no child
gets the site's secrets (:data:`SECRET_VARIABLES`).

Nothing else in the package starts processes. A shell string is refused outright, so no
request value can ever reach a shell. A child ``tethered`` ends, with everything it started, when this
process dies, ``kill -9`` included (:mod:`.tether`): for work that only makes sense while its
server lives, such as an installer writing into a copy of an environment.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import psutil

from . import tether
from .errors import CommandFailed, CommandTimeout, Conflict

LineCallback = Callable[[str], Awaitable[None] | None]

# Output kept in memory per stream; long-running tools (conda-pack, sbatch) can print a lot.
_MAX_CAPTURE = 1 << 20


@dataclass(frozen=True)
class Result:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return (self.stdout + self.stderr).strip()


_PACKAGE_ROOT = str(Path(__file__).resolve().parents[1])

# The site's secrets, which the server may be given in its environment. The server takes them into its
# configuration when it starts and removes them from its environment (app.py); should one be set again,
# or be in an environment a caller hands in, no child gets it all the same.
SECRET_VARIABLES = frozenset({"GPU_ENV_SMTP_PASSWORD"})


def child_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """What a child's environment is: ``env`` (by default this process's) without the site's secrets."""
    return {k: v for k, v in (os.environ if env is None else env).items() if k not in SECRET_VARIABLES}


def own_package_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """``env`` (by default this process's) with this package's folder first on PYTHONPATH: a child
    ``python -m jupyter_gpu_env...`` then runs this very copy, installed or not."""
    out = child_env(env)
    out["PYTHONPATH"] = os.pathsep.join(filter(None, [_PACKAGE_ROOT, out.get("PYTHONPATH")]))
    return out


def _check_argv(argv: Sequence[str]) -> list[str]:
    if isinstance(argv, str | bytes):
        raise TypeError("proc.run takes an argv list, never a shell string")
    out = [os.fspath(a) for a in argv]
    if not out or not out[0]:
        raise ValueError("empty argv")
    return out


async def _pump(stream: asyncio.StreamReader | None, sink: list[str], on_line: LineCallback | None) -> None:
    """Read a stream to its end, handing each line to ``on_line``.

    A carriage return also ends a line: progress bars (conda-pack, mksquashfs) redraw themselves
    with ``\r`` and their updates would otherwise arrive only when the whole bar is done.
    """
    if stream is None:
        return
    size = 0
    pending = b""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")  # a read may end inside a character
    while True:
        chunk = await stream.read(65536)
        if not chunk:
            break
        if size < _MAX_CAPTURE:
            sink.append(decoder.decode(chunk))
            size += len(chunk)
        if on_line is None:
            continue
        pending += chunk
        *lines, pending = pending.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
        for raw in lines:
            await _deliver(on_line, raw)
    if on_line is not None and pending:
        await _deliver(on_line, pending)


async def _deliver(on_line: LineCallback, raw: bytes) -> None:
    res = on_line(raw.decode("utf-8", "replace"))
    if asyncio.iscoroutine(res):
        await res


async def _terminate(proc: asyncio.subprocess.Process, grace: float) -> None:
    """SIGTERM the process group, then SIGKILL after ``grace`` seconds."""
    if proc.returncode is not None:
        # Its leader has ended (a tether killed alone): what it started may still hold our pipes.
        await asyncio.to_thread(_kill_orphans, proc.pid)
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            await asyncio.wait_for(proc.wait(), grace)
            return
        except TimeoutError:
            continue


def _kill_orphans(pgid: int) -> None:
    """SIGKILL the members left in the group of a leader that has ended. Only members that are not
    leaders themselves: the leader's pid, once reaped, may name an unrelated new group."""
    for p in psutil.process_iter(["pid"]):
        with contextlib.suppress(psutil.Error, OSError):
            if p.pid != pgid and os.getpgid(p.pid) == pgid:
                os.kill(p.pid, signal.SIGKILL)


# Background work (packing, solving, GPU checks) yields the CPU to the server and to kernels: on a
# two-core notebook server, a packer on every core would otherwise make the sidebar wait.
BACKGROUND = 10


_PRLIMIT_OPTIONS = {
    resource.RLIMIT_FSIZE: "--fsize",
    resource.RLIMIT_AS: "--as",
    resource.RLIMIT_CPU: "--cpu",
}


def _limiter(rlimits: Mapping[int, tuple[int, int]] | None, nice: int) -> Callable[[], None]:
    def apply() -> None:  # runs in the child between fork and exec
        if nice:
            os.nice(nice)
        for which, (soft, hard) in (rlimits or {}).items():
            resource.setrlimit(which, (soft, hard))

    return apply


def _launch(
    args: list[str], rlimits: Mapping[int, tuple[int, int]] | None, nice: int
) -> tuple[list[str], Callable[[], None] | None]:
    """The argv to start and the preexec function, if any, for a child with these limits.

    ``nice`` and ``prlimit`` set them where they exist, in front of the program: then the child is
    started with vfork, which costs the same whatever this process's size. A preexec function forces
    a full fork of the server, tens of milliseconds for a large one, on the event loop's thread.
    """
    if not rlimits and not nice:
        return args, None
    prefix: list[str] = []
    if nice:
        tool = shutil.which("nice")
        if tool is None:
            return args, _limiter(rlimits, nice)
        prefix += [tool, "-n", str(nice)]
    if rlimits:
        tool = shutil.which("prlimit")
        if tool is None or not set(rlimits) <= set(_PRLIMIT_OPTIONS):
            return args, _limiter(rlimits, nice)
        prefix += [tool, *(f"{_PRLIMIT_OPTIONS[w]}={s}:{h}" for w, (s, h) in rlimits.items()), "--"]
    if shutil.which(args[0]) is None:
        raise FileNotFoundError(args[0])
    return prefix + args, None


def _tethered(launched: list[str]) -> list[str]:
    """``launched`` run by a tether to this process (see :mod:`.tether`)."""
    if shutil.which(launched[0]) is None:
        raise FileNotFoundError(launched[0])
    python = sys.executable or "python3"
    return [python, "-I", "-S", tether.__file__, str(os.getpid()), "--", *launched]


@contextlib.contextmanager
def _program_found(args: list[str]) -> Iterator[None]:
    """A program that does not exist is the caller's 409, in words."""
    try:
        yield
    except FileNotFoundError as e:
        raise Conflict(f"'{args[0]}' was not found on this server", reason="tool_missing") from e


async def start(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    rlimits: Mapping[int, tuple[int, int]] | None = None,
    nice: int = 0,
    tethered: bool = False,
) -> Started:
    """Start ``argv`` with a pipe for its input, to be talked to later (:meth:`Started.finish`).

    For a worker started ahead of need: it loads what it needs while nobody waits, then reads its
    request. Raises :class:`Conflict` when the program does not exist.
    """
    args = _check_argv(argv)
    with _program_found(args):
        launched, preexec = _launch(args, rlimits, nice)
        if tethered:
            launched = _tethered(launched)
        process = await asyncio.create_subprocess_exec(
            *launched,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=child_env(env),
            cwd=cwd,
            start_new_session=True,
            preexec_fn=preexec,
        )
    return Started(args, process)


@dataclass
class Started:
    """A child started by :func:`start` in its own process group, so that cancelling (or a timeout)
    takes down everything it started."""

    args: list[str]
    process: asyncio.subprocess.Process

    @property
    def alive(self) -> bool:
        return self.process.returncode is None

    async def finish(
        self,
        *,
        stdin: bytes | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - the seam owns timeouts for every caller
        on_stdout: LineCallback | None = None,
        on_stderr: LineCallback | None = None,
        check: bool = True,
        kill_grace: float = 5.0,
    ) -> Result:
        """Send ``stdin`` (then end of input) and wait for the child; see :func:`run`."""
        proc = self.process
        out: list[str] = []
        err: list[str] = []

        async def communicate() -> int:
            if proc.stdin is not None:
                if stdin is not None:
                    proc.stdin.write(stdin)
                    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                        await proc.stdin.drain()  # a child that ended early says why on stderr
                proc.stdin.close()
            await asyncio.gather(_pump(proc.stdout, out, on_stdout), _pump(proc.stderr, err, on_stderr))
            return await proc.wait()

        try:
            rc = await asyncio.wait_for(communicate(), timeout)
        except TimeoutError as e:
            await _terminate(proc, kill_grace)
            raise CommandTimeout(f"{self.args[0]} did not finish within {timeout:g} s") from e
        except BaseException:
            # Cancellation (or a failing callback) must not leave an orphan behind.
            await asyncio.shield(_terminate(proc, kill_grace))
            raise
        result = Result(self.args, rc, "".join(out), "".join(err))
        if check and rc != 0:
            raise CommandFailed(self.args, rc, result.output)
        return result

    async def stop(self, kill_grace: float = 5.0) -> None:
        """End the child (and its group) unheard: a worker no longer wanted."""
        await _terminate(self.process, kill_grace)


async def run(
    argv: Sequence[str],
    *,
    timeout: float | None = None,  # noqa: ASYNC109 - the seam owns timeouts for every caller
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    stdin: bytes | None = None,
    on_stdout: LineCallback | None = None,
    on_stderr: LineCallback | None = None,
    check: bool = True,
    kill_grace: float = 5.0,
    rlimits: Mapping[int, tuple[int, int]] | None = None,
    nice: int = 0,
    tethered: bool = False,
) -> Result:
    """Run ``argv`` and wait for it.

    The child gets its own process group so that cancelling (``task.cancel()``) or a timeout
    takes down everything it started. Raises :class:`CommandFailed` on a non-zero exit when
    ``check`` is true, :class:`CommandTimeout` past ``timeout``, and :class:`Conflict` when the
    program does not exist. ``rlimits`` (``resource.RLIMIT_*`` to ``(soft, hard)``) bound the child,
    e.g. the size of files it may write; ``nice`` lowers its priority (:data:`BACKGROUND` for work
    nobody waits on interactively); ``tethered`` ends the child and all it started when this process
    dies.
    """
    started = await start(argv, env=env, cwd=cwd, rlimits=rlimits, nice=nice, tethered=tethered)
    return await started.finish(
        stdin=stdin,
        timeout=timeout,
        on_stdout=on_stdout,
        on_stderr=on_stderr,
        check=check,
        kill_grace=kill_grace,
    )


def spawn_detached(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str],
    env: Mapping[str, str] | None,
    stdout_path: str | os.PathLike[str],
    nice: int = 0,
) -> int:
    """Start ``argv`` in its own session, detached from this server, and return its pid at once.

    For batch runners that must outlive a server restart: stdin is /dev/null and stdout and stderr
    are appended to ``stdout_path``, so no pipe ties the child to this process; ``nice`` lowers its
    priority and that of everything it starts. A daemon thread
    reaps it when it ends, so no zombie lingers while the server runs; callers learn how it ended
    from the files it writes, not from the exit status.
    """
    args = _check_argv(argv)
    with open(stdout_path, "ab", buffering=0) as out, _program_found(args):
        launched, preexec = _launch(args, None, nice)
        child = subprocess.Popen(  # noqa: S603 - argv list, never a shell
            launched,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=child_env(env),
            start_new_session=True,
            close_fds=True,
            preexec_fn=preexec,
        )
    threading.Thread(target=child.wait, name=f"reap-{child.pid}", daemon=True).start()
    return child.pid
