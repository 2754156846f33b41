"""Reading a file someone else controls: one a user names (an environment.yml), or one inside a folder a
user may write (an environment's ``conda-meta/``, a job's folder).

Such a file may be a named pipe, whose ``open()`` waits for a writer for ever (and with it the thread
that called it: seven of them once held every worker of the default pool), a device that never ends, or
far larger than what it claims to be. :func:`open_regular_file` opens without waiting (``O_NONBLOCK``: a
FIFO's open returns at once), then asks the descriptor it got what it is (``fstat``, so nothing can be
swapped in between a check and the open) and refuses anything but a regular file;
:func:`read_regular_file` reads at most ``limit`` bytes of it, :func:`copy_regular_file` copies it
without holding it in memory, :func:`append_regular_file` appends to it (opening a named pipe to write
waits for a reader as long). Refusals are
:class:`~jupyter_gpu_env.errors.FileRefused`, a 400 that says what the file is; the OS's own errors
(no such file, permission denied) pass through unchanged. Kept free of heavy imports: the batch runner
may use it on the node.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO

from ..errors import FileRefused

_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
_APPEND = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
_CHUNK = 1 << 20


def _what(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a plain file"


def _size(n: int) -> str:
    if n and n % (1 << 20) == 0:
        return f"{n >> 20} MiB"
    return f"{n >> 10} KiB" if n and n % (1 << 10) == 0 else f"{n} bytes"


def _not_regular(path: str | os.PathLike[str], name: str | None, mode: int) -> FileRefused:
    return FileRefused(
        f"'{name or os.fspath(path)}' is {_what(mode)}, not a regular file; only regular files are read.",
        reason="not_a_regular_file",
    )


@contextmanager
def open_regular_file(path: str | os.PathLike[str], *, name: str | None = None) -> Iterator[BinaryIO]:
    """``path`` opened for reading in binary, if it is a regular file (symbolic links followed); else
    FileRefused, naming it ``name`` (default: the path). Never waits on the file's kind."""
    fd = os.open(path, _FLAGS)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _not_regular(path, name, mode)
        os.set_blocking(fd, True)
        f = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with f:
        yield f


def read_regular_file(path: str | os.PathLike[str], limit: int, *, name: str | None = None) -> bytes:
    """The bytes of the regular file ``path``; FileRefused when it is no regular file or holds more than
    ``limit`` bytes (at most ``limit + 1`` are read to tell)."""
    with open_regular_file(path, name=name) as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise FileRefused(
            f"'{name or os.fspath(path)}' is larger than {_size(limit)}, more than such a file can be.",
            reason="file_too_large",
        )
    return data


def read_regular_head(path: str | os.PathLike[str], limit: int, *, name: str | None = None) -> bytes:
    """The first ``limit`` bytes of the regular file ``path`` (all of a smaller one); FileRefused when it
    is no regular file. For what is read from a file's start only (a package's metadata headers)."""
    with open_regular_file(path, name=name) as f:
        return f.read(limit)


def copy_regular_file(
    src: str | os.PathLike[str], dst: str | os.PathLike[str], *, name: str | None = None
) -> None:
    """Copy the regular file ``src`` to ``dst`` (replaced if there) with its mode and times, as
    ``shutil.copy2`` does; FileRefused when ``src`` is no regular file. Any size: it is streamed."""
    with open_regular_file(src, name=name) as f, open(dst, "wb") as out:
        _stream(f, out)
    shutil.copystat(src, dst)


def _stream(src: BinaryIO, dst: BinaryIO) -> None:
    """In the kernel (``sendfile``) where it can, as ``shutil.copyfile`` does, else through a buffer."""
    block = min(max(os.fstat(src.fileno()).st_size, 1 << 23), 1 << 30)
    offset = 0
    try:
        while sent := os.sendfile(dst.fileno(), src.fileno(), offset, block):
            offset += sent
    except OSError as e:
        if offset or e.errno not in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):
            raise  # a full disk among them
        shutil.copyfileobj(src, dst, _CHUNK)


def append_regular_file(path: str | os.PathLike[str], data: bytes, *, name: str | None = None) -> None:
    """Append ``data`` to the regular file ``path``, made if missing; FileRefused when something else is
    there. Never waits on a named pipe (with no reader, opening it to write fails at once: ENXIO)."""
    try:
        fd = os.open(path, _APPEND, 0o644)
    except OSError as e:
        if e.errno != errno.ENXIO:
            raise
        raise _not_regular(path, name, stat.S_IFIFO) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _not_regular(path, name, mode)
        os.set_blocking(fd, True)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
