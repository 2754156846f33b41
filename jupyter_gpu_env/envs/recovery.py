"""After a crash: what an interrupted operation left in the environment folders, and what can be told of
a package change the server died in. Read at a server's start."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from ..models.tasks import Task
from ..system.trees import remove_tree
from ..tasks import Outcome
from .changes import history
from .claims import drop_marker, worked_on
from .transaction import PREVIOUS, previous_states, recover

log = logging.getLogger(__name__)

# .<name>.<kind>-<hex>: a clone or creation being built, a deletion, a transaction's copy, a swap's;
# with ".lock", the marker of one being worked on (see .claims.working_on)
_TEMPORARY = re.compile(r"^\.(?P<name>.+)\.(?P<kind>partial|deleting|txn|swap)-[0-9a-f]+(?P<marker>\.lock)?$")


def _mine(path: Path) -> bool:
    try:
        return path.lstat().st_uid == os.getuid()
    except OSError:
        return False


def sweep(
    user_env_dir: Path, shared_dirs: Sequence[Path], locked_elsewhere: Callable[[str], bool]
) -> list[Path]:
    """Put back an environment caught between the two renames of a swap, and remove temporaries
    (``.<name>.partial-*``, ``.txn-*``, ``.deleting-*``, ``.swap-*``) that no live process works on (its
    marker is not held, see :func:`.claims.worked_on`) and whose name no operation holds, in this process
    or another; and the markers they leave. Then states kept for undo that belong to no environment
    there. In a shared folder, only what this user left (a teammate's may be in progress). Blocking."""
    found: list[Path] = []
    for d in [user_env_dir, *shared_dirs]:
        try:
            found += [p for p in d.iterdir() if d == user_env_dir or _mine(p)]
        except OSError:
            continue
    gone = []
    for p in sorted(found):
        m = _TEMPORARY.match(p.name)
        if not m or locked_elsewhere(m.group("name")):
            continue
        if m.group("marker"):
            temporary = p.with_name(p.name.removesuffix(".lock"))
            if not (temporary.exists() or temporary.is_symlink()):
                drop_marker(temporary)  # its temporary is gone: left by a process that died after it
            continue
        if worked_on(p):
            continue
        if m.group("kind") == "swap" and recover(p.parent / m.group("name")):
            log.warning("put back %s, caught between the two renames of a swap", m.group("name"))
            continue
        remove_tree(p)
        drop_marker(p)
        gone.append(p)
    # Once every environment is back in place: states kept of one deleted since (a delete killed
    # halfway), or of another made earlier under the same name, are no one's to undo to.
    for p in found:
        m = PREVIOUS.match(p.name)
        if m is None or p.parent != user_env_dir or locked_elsewhere(m.group("name")):
            continue
        live = p.parent / m.group("name")
        if not live.is_dir() or history.identity(p) != history.identity(live):
            remove_tree(p)
            gone.append(p)
    return gone


def interrupted_note(user_env_dir: Path, task: Task) -> Outcome | None:
    """What is on disk of a package change or an undo the server died in (blocking): applied when the
    environment's history holds it, which the swap that applies it makes true in one rename."""
    what = {"install": "change", "undo": "undo"}.get(task.kind)
    if what is None or not (task.target or "").startswith("environments/"):
        return None
    prefix = user_env_dir / task.target.split("/", 1)[1]  # type: ignore[union-attr]
    if history.holds(prefix, task.id):
        return Outcome(f"The {what} had been applied: the environment holds it.", applied=True)
    for kept in previous_states(prefix):  # an undo's entry written for a swap that never came
        history.drop(kept, task.id)
    return Outcome(f"The environment was left exactly as it was before the {what}.")
