"""Reading a file that someone else's code may have made: a job's folder, a file a user names.

Such a path may be a FIFO (``open`` waits for a writer for ever, holding a worker thread), a link to
``/dev/zero`` or a device (a read never ends), or a regular file of any size. Opened without following
a final symlink and without blocking, checked on the open descriptor (no stat-then-open race), read up
to a bound: anything else is refused with the reason in words.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC


class RefusedFile(Exception):
    """The file is not a regular file, or is larger than the reader accepts."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(f"{path.name} {why}")
        self.path = path
        self.why = why


@contextmanager
def open_regular(path: Path) -> Iterator[tuple[BinaryIO, int]]:
    """``path`` opened for reading in binary, with its size; FileNotFoundError when it is missing,
    :class:`RefusedFile` when it is a link, a FIFO, a device or a folder."""
    try:
        fd = os.open(path, _FLAGS)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise RefusedFile(path, "is a symbolic link, not a file") from None
        if e.errno == errno.EISDIR:
            raise RefusedFile(path, "is a folder, not a file") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise RefusedFile(path, f"is {_kind(st.st_mode)}, not a regular file")
        os.set_blocking(fd, True)  # a regular file: reads never wait, and buffered reads want blocking
        f = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with f:
        yield f, st.st_size


def read_regular(path: Path, limit: int) -> bytes:
    """The bytes of ``path`` when it is a regular file of at most ``limit`` bytes."""
    with open_regular(path) as (f, size):
        if size > limit:
            raise RefusedFile(path, f"is {size:,} bytes; at most {limit:,} are read")
        data = f.read(limit + 1)
    if len(data) > limit:  # it grew between the fstat and the read
        raise RefusedFile(path, f"is over {limit:,} bytes; at most {limit:,} are read")
    return data


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"
