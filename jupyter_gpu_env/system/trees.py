"""Removing a folder whole, whatever its modes, following no link: what is left of a failed build, a
deleted environment, an entry of the shared folder.

A tree copied from a managed environment may hold read-only folders (and an unreadable one, mode 0),
whose entries a plain ``shutil.rmtree`` cannot remove: it would fail halfway, or, told to ignore
errors, leave them behind unsaid. And a tree in a folder others can write to (the shared folder) may
hold links, or have one swapped in while it is removed: every step here is taken relative to an open
folder (``dir_fd``, ``O_NOFOLLOW``), so nothing outside the tree is ever touched. Kept free of heavy
imports: the conda worker uses it.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import stat
from pathlib import Path

log = logging.getLogger(__name__)

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def remove_tree(path: Path) -> bool:
    """Remove a file, a link (never what it points to) or a tree, read-only and unreadable folders
    included, as far as it can be; True when nothing is left. Never raises: what is left is logged, and
    for the caller to mention (a clean-up must not hide the failure it cleans up after)."""
    path = Path(path)
    try:
        parent = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return not os.path.lexists(path)
    try:
        _remove_at(parent, path.name, path)
        try:
            os.stat(path.name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            return True
        except OSError:
            pass
        return False
    finally:
        os.close(parent)


def remove_trees(paths: list[Path]) -> None:
    for path in paths:
        remove_tree(path)


def _open_folder(dir_fd: int, name: str, mode: int) -> int:
    try:
        return os.open(name, _DIR, dir_fd=dir_fd)
    except PermissionError:
        # An unreadable folder (mode 0) of ours: opened for us after u+rwx. The stat just said it is a
        # folder, not a link; O_NOFOLLOW on the open that follows still refuses one swapped in.
        os.chmod(name, stat.S_IMODE(mode) | stat.S_IRWXU, dir_fd=dir_fd)
        return os.open(name, _DIR, dir_fd=dir_fd)


def _remove_at(dir_fd: int, name: str, shown: Path) -> None:
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if not stat.S_ISDIR(st.st_mode):
            os.unlink(name, dir_fd=dir_fd)
            return
        fd = _open_folder(dir_fd, name, st.st_mode)
    except FileNotFoundError:
        return
    except OSError as e:
        log.warning("could not remove %s: %s", shown, e)
        return
    try:
        if stat.S_IMODE(st.st_mode) & stat.S_IRWXU != stat.S_IRWXU:
            with contextlib.suppress(OSError):  # a read-only folder: ours to empty
                os.fchmod(fd, stat.S_IMODE(st.st_mode) | stat.S_IRWXU)
        for child in os.listdir(fd):
            _remove_at(fd, child, shown / child)
    except OSError as e:
        log.warning("could not empty %s: %s", shown, e)
    finally:
        os.close(fd)
    try:
        os.rmdir(name, dir_fd=dir_fd)
    except OSError as e:
        if e.errno != errno.ENOENT:
            log.warning("could not remove %s: %s", shown, e)
