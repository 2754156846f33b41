"""Removing a folder whole, whatever its modes: what is left of a failed build, a deleted environment.

A tree copied from a managed environment may hold read-only folders (and an unreadable one, mode 0),
whose entries a plain ``shutil.rmtree`` cannot remove: it would fail halfway, or, told to ignore
errors, leave them behind unsaid. Kept free of heavy imports: the conda worker uses it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from pathlib import Path


def _make_writable(top: Path) -> None:
    """u+rwx on every folder under ``top`` (symbolic links not followed), top first."""
    stack = [os.fspath(top)]
    while stack:
        here = stack.pop()
        with contextlib.suppress(OSError):
            st = os.lstat(here)
            if stat.S_ISDIR(st.st_mode):
                os.chmod(here, stat.S_IMODE(st.st_mode) | stat.S_IRWXU)
                with os.scandir(here) as entries:
                    stack.extend(e.path for e in entries if e.is_dir(follow_symlinks=False))


def remove_tree(path: Path) -> bool:
    """Remove a file or a tree, read-only and unreadable folders included, as far as it can be; True when
    nothing is left. Never raises: what is left is for the caller to mention (a clean-up must not hide the
    failure it cleans up after)."""
    path = Path(path)
    with contextlib.suppress(OSError):
        if path.is_symlink() or not path.is_dir():
            path.unlink(missing_ok=True)
            return True
        try:
            shutil.rmtree(path)
        except OSError:
            # Entries that could not be removed (or listed): every folder made writable, once more.
            _make_writable(path)
            shutil.rmtree(path, ignore_errors=True)
    return not (path.exists() or path.is_symlink())
