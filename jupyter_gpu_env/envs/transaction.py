"""Changing an environment as a transaction: build the changed copy aside, swap it in with one rename.

A change (packages added or removed, an undo) never writes into the live environment. It works on a
copy in a hidden sibling, ``.<name>.txn-<hex>``, made of hard links (cheap: no file is copied but
those a tool could rewrite in place, see :func:`hardlink_copy`), and swaps it with the live folder in
one ``renameat2(RENAME_EXCHANGE)``. Until that instant the environment is exactly as it was, whatever
is cancelled or killed; from that instant it is exactly the new one. Kernels already running keep the
files they opened. The folder the swap leaves behind is the previous state, kept as
``.<name>.prev-<hex>`` so that "undo" is a swap back.

Where the filesystem cannot exchange two names (NFS), the swap is two renames through
``.<name>.swap-<hex>``; :func:`recover` puts a live environment back if a crash fell between them.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import errno
import logging
import os
import re
import secrets
import shutil
import stat
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from ..errors import GpuEnvError
from ..system.trees import remove_tree
from ..system.untrusted import copy_regular_file
from .claims import working_on
from .clonefiles import Stopped
from .engine import ProgressFn, run_stoppable, scaled, threadsafe

log = logging.getLogger(__name__)
T = TypeVar("T")

RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
_renameat2 = getattr(_libc, "renameat2", None)
# Tools rewrite these in place (conda-meta records, our history, .pth files): never share their inodes.
_COPIED_DIRS = ("conda-meta",)
_COPIED_SUFFIXES = (".pth",)
PREVIOUS = re.compile(r"^\.(?P<name>.+)\.prev-(?P<stamp>[0-9]+)-[0-9a-f]+$")


@dataclass
class CopyStats:
    linked: int = 0
    copied: int = 0
    dirs: int = 0


def hardlink_copy(
    src: Path, dst: Path, *, stop: threading.Event | None = None, tick: Callable[[int], None] | None = None
) -> CopyStats:
    """Recreate ``src`` at ``dst`` (which must not exist) with hard links.

    Files that tools may rewrite in place are copied instead, so that a change in the copy can never
    reach the original through a shared inode: everything under ``conda-meta/``, ``.pth`` files, and
    every file that is the original's alone (one link: written at install time with the prefix
    replaced, or by pip). Files linked from the package cache are immutable by contract. Modes,
    times and symlinks are kept; a named pipe, socket or device is linked, never opened.
    """
    stats = CopyStats()
    src = Path(src)
    os.mkdir(dst)
    shutil.copystat(src, dst)
    stack = [(src, Path(dst), False)]
    done = 0
    while stack:
        here, there, copy_all = stack.pop()
        with os.scandir(here) as entries:
            for entry in entries:
                if stop is not None and stop.is_set():
                    raise Stopped
                target = there / entry.name
                st = entry.stat(follow_symlinks=False)
                if stat.S_ISDIR(st.st_mode):
                    os.mkdir(target)
                    stats.dirs += 1
                    stack.append(
                        (Path(entry.path), target, copy_all or entry.name in _COPIED_DIRS and here == src)
                    )
                    continue
                if stat.S_ISLNK(st.st_mode):
                    os.symlink(os.readlink(entry.path), target)
                elif not stat.S_ISREG(st.st_mode):
                    # a named pipe, socket or device: linked where it can be, else left out (it holds
                    # no content); never opened
                    stats.linked += _link(entry.path, target)
                elif copy_all or st.st_nlink == 1 or entry.name.endswith(_COPIED_SUFFIXES):
                    copy_regular_file(entry.path, target)
                    stats.copied += 1
                elif _link(entry.path, target):
                    stats.linked += 1
                else:
                    copy_regular_file(entry.path, target)
                    stats.copied += 1
                done += 1
                if tick is not None and done % 500 == 0:
                    tick(done)
        # Directory times last: creating entries above changed them.
        shutil.copystat(here, there, follow_symlinks=False)
    return stats


def _link(src: str, dst: Path) -> bool:
    """Hard-link ``src`` as ``dst``; False where no link can be made (another filesystem, a file of
    another user's, too many links)."""
    try:
        os.link(src, dst, follow_symlinks=False)
    except OSError as e:
        if e.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK):
            raise
        return False
    return True


def exchange(a: Path, b: Path) -> None:
    """Swap the names ``a`` and ``b`` atomically; OSError(ENOSYS/EINVAL) where the filesystem cannot."""
    if _renameat2 is None:
        raise OSError(errno.ENOSYS, "renameat2 is not available")
    if _renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), str(a))


def swap_in(build: Path, live: Path) -> None:
    """Make ``build`` the environment at ``live``; afterwards ``build`` holds the previous one."""
    try:
        exchange(build, live)
        return
    except OSError as e:
        if e.errno not in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
            raise
    aside = live.with_name(f".{live.name}.swap-{secrets.token_hex(4)}")
    os.rename(live, aside)
    try:
        os.rename(build, live)
    except BaseException:
        os.rename(aside, live)
        raise
    os.rename(aside, build)


def previous_name(live: Path, stamp: int) -> Path:
    return live.with_name(f".{live.name}.prev-{stamp}-{secrets.token_hex(3)}")


def previous_states(live: Path) -> list[Path]:
    """The kept previous states of ``live``, newest first."""
    try:
        entries = list(live.parent.iterdir())
    except OSError:
        return []
    found = []
    for p in entries:
        m = PREVIOUS.match(p.name)
        if m and m.group("name") == live.name:
            found.append((int(m.group("stamp")), p))
    return [p for _, p in sorted(found, reverse=True)]


def set_aside(live: Path) -> list[Path]:
    """Rename the environment ``live`` and the states kept of it out of the way, to be removed (a
    deletion); returns their new names. The kept states go first, each in one rename: whenever this
    stops, no state kept for undo outlives its environment, only ``.deleting-`` folders are left."""
    states = [*previous_states(live), live]
    trash = [live.with_name(f".{live.name}.deleting-{secrets.token_hex(4)}") for _ in states]
    for state, aside in zip(states, trash, strict=True):
        os.rename(state, aside)
    return trash


def recover(live: Path) -> bool:
    """After a crash between the two renames of a fallback swap, put the environment back. True if it did."""
    if live.exists() or live.is_symlink():
        return False
    for p in live.parent.glob(f".{glob_escape(live.name)}.swap-*"):
        os.rename(p, live)
        return True
    return False


def glob_escape(name: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", name)


# ----- one change, start to end -----

# Previous states kept for undo, per environment.
KEEP_PREVIOUS = 1


async def run(
    live: Path,
    apply: Callable[[Path], Awaitable[T]],
    *,
    progress: ProgressFn | None = None,
    disk_full: Callable[[], Exception] | None = None,
) -> T:
    """Copy ``live`` aside, let ``apply(copy)`` change the copy, swap it in; return what ``apply`` returned.

    Before the swap nothing is visible; the swap is one rename; after it the previous state is kept for
    undo (the newest :data:`KEEP_PREVIOUS`). A failure, a cancel or a full disk (``disk_full()`` is then
    raised) before the swap removes the copy and leaves ``live`` as it was.
    """
    build = live.with_name(f".{live.name}.txn-{secrets.token_hex(4)}")
    report = scaled(progress, 0.0, 0.15)
    report(0.0, "Copying the environment aside (hard links)")
    tick = threadsafe(lambda f, m: report(min(f, 0.99), m))

    def ticked(done: int) -> None:
        if tick is not None:
            tick(done / (done + 2000), f"Copying the environment aside ({done} files)")

    async with working_on(build):  # so that no other server's start sweeps it meanwhile
        swapped = False
        try:
            await run_stoppable(hardlink_copy, live, build, tick=ticked)
            result = await apply(build)
            if progress is not None:
                progress(0.96, "Swapping the changed environment in")
            await _commit(build, live)
            swapped = True
        except BaseException as e:
            if not swapped:
                await asyncio.shield(asyncio.to_thread(remove_tree, build))
                if disk_full is not None and is_disk_full(e):
                    raise disk_full() from e
            raise
        # Committed. What follows only tidies up; its failures must not turn success into an error.
        try:
            await asyncio.to_thread(_keep_previous, build, live)
        except OSError as e:
            log.warning("could not keep the previous state of %s: %s", live, e)
            await asyncio.to_thread(remove_tree, build)
    return result


async def swap_back(kept: Path, live: Path) -> None:
    """Swap a kept previous state in (undo) with the same one-rename exchange; the state it replaces
    becomes the kept one."""
    await _commit(kept, live)
    try:
        await asyncio.to_thread(_keep_previous, kept, live)
    except OSError as e:
        log.warning("could not keep the undone state of %s: %s", live, e)


async def _commit(build: Path, live: Path) -> None:
    """The swap. A cancellation that arrives while it runs comes too late: the swap completes (a thread
    cannot be stopped halfway, and must not be), and so does the change."""
    swap = asyncio.ensure_future(asyncio.to_thread(swap_in, build, live))
    try:
        await asyncio.shield(swap)
    except asyncio.CancelledError:
        await swap  # if it failed, that failure is the outcome
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()


def _keep_previous(old: Path, live: Path) -> None:
    os.rename(old, previous_name(live, time.time_ns()))
    for stale in previous_states(live)[KEEP_PREVIOUS:]:
        remove_tree(stale)


def is_disk_full(e: BaseException) -> bool:
    """Did ``e`` come of a full disk (here, or in the conda worker, which says so as ``disk_full``)?"""
    if isinstance(e, OSError) and not isinstance(e, GpuEnvError):
        return e.errno == errno.ENOSPC
    return isinstance(e, GpuEnvError) and (e.reason == "disk_full" or "No space left on device" in e.message)
