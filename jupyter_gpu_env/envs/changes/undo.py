"""History and undo: the changes an environment holds, and the swap back to the state before the last.

A change's transaction keeps the environment it replaced as ``.<name>.prev-<stamp>-<hex>``
(:mod:`..transaction`); undo swaps it back in with the same one-rename exchange, after writing the
undo into its history. The state undone becomes the kept one, so a second undo redoes the change.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from ...errors import Conflict
from ...models.envs.packages import EnvironmentHistory, HistoryEntry
from .. import transaction
from . import history


def summary(entry: dict[str, Any]) -> str:
    if entry.get("kind") == "create":
        return f"created from {entry.get('from_file') or 'a file'}"
    if entry.get("kind") == "undo":
        verb = "redo" if entry.get("redo") else "undo"
        return f"{verb} of {entry.get('undid_summary') or 'the previous change'}"
    parts = [f"+{s}" for s in entry.get("add", [])] + [f"−{s}" for s in entry.get("remove", [])]
    parts += [f"+pip:{s}" for s in entry.get("pip_add", [])] + [
        f"−pip:{s}" for s in entry.get("pip_remove", [])
    ]
    return " ".join(parts) or "a change"


def _entry(raw: dict[str, Any]) -> HistoryEntry | None:
    try:
        return HistoryEntry(
            id=str(raw["id"]),
            at=float(raw.get("at", 0.0)),
            kind=raw["kind"] if raw.get("kind") in ("undo", "create") else "packages",
            summary=summary(raw),
            installed=[str(x) for x in raw.get("installed", [])],
            removed=[str(x) for x in raw.get("removed", [])],
        )
    except (KeyError, TypeError, ValueError):
        return None


# What swapping the kept state in would do (before) and did (after): a redo of the change undone
# last, an undo of the newest change, a redo of one undone before, or a plain swap.
_TO_DO = (
    "Redo {}.",
    "Undo the last change ({}): back to the state before it.",
    "Redo {}, undone before.",
    "Go back to the state kept before the last change.",
)
_DONE = ("Redid {}", "Undid {}", "Redid {}", "Went back to the state kept before the last change")


def _sentence(live: list[dict[str, Any]], kept: list[dict[str, Any]], words: tuple[str, ...]) -> str:
    """What swapping the kept state in does, from both histories, in ``words`` (_TO_DO or _DONE)."""
    held = {e.get("id") for e in kept}
    newer = [e for e in live if e.get("id") not in held]  # in the live state only
    if newer and newer[-1].get("kind") == "undo" and not newer[-1].get("redo"):
        return words[0].format(newer[-1].get("undid_summary") or "the change undone")
    if newer:
        return words[1].format(summary(newer[-1]))
    older = [e for e in kept if e.get("id") not in {x.get("id") for x in live}]
    if older:
        return words[2].format(summary(older[-1]))
    return words[3]


def kept_state(live: Path) -> Path | None:
    """The state undo would swap in (blocking): the newest kept one, if it is a state of this very
    environment (the same identity, see :func:`.history.identity`)."""
    states = transaction.previous_states(live)
    if not states or history.identity(states[0]) != history.identity(live):
        return None
    return states[0]


def check_undoable(live: Path) -> Path:
    """The state undo would swap in, or Conflict(nothing_to_undo) saying why there is none (blocking)."""
    kept = kept_state(live)
    if kept is not None:
        return kept
    if transaction.previous_states(live):
        raise Conflict(
            f"There is nothing to undo in '{live.name}': the earlier state kept under its name belongs to "
            f"an earlier environment named '{live.name}', deleted since, and undo applies only to the "
            "environment that made it.",
            reason="nothing_to_undo",
        )
    raise nothing_to_undo(live.name)


def read(name: str, live: Path) -> EnvironmentHistory:
    """The history of ``live`` (blocking)."""
    entries = history.read(live)
    kept = kept_state(live)
    undo = None if kept is None else _sentence(entries, history.read(kept), _TO_DO)
    changes = [e for e in (_entry(raw) for raw in reversed(entries)) if e is not None]
    return EnvironmentHistory(environment=name, changes=changes, undo=undo)


def nothing_to_undo(name: str) -> Conflict:
    return Conflict(
        f"There is nothing to undo in '{name}': no earlier state of it is kept (it has not been changed "
        "since it was made, or the kept state was removed).",
        reason="nothing_to_undo",
    )


async def undo(live: Path, change_id: str) -> tuple[str, str]:
    """Swap the kept previous state in; returns the sentence that described it and what it did (`Undid
    +tabulate`). Conflict when none of this environment is kept. The caller holds the environment's
    claim."""
    kept = await asyncio.to_thread(check_undoable, live)
    live_entries = await asyncio.to_thread(history.read, live)
    kept_entries = await asyncio.to_thread(history.read, kept)
    sentence = _sentence(live_entries, kept_entries, _TO_DO)
    done = _sentence(live_entries, kept_entries, _DONE)
    held = {k.get("id") for k in kept_entries}
    undone = [e for e in live_entries if e.get("id") not in held]
    last = undone[-1] if undone else {}
    entry: dict[str, Any] = {"id": change_id, "kind": "undo", "undid": last.get("id")}
    if last.get("kind") == "undo":  # undoing an undo: a redo of what that one undid
        entry |= {"redo": True, "undid_summary": last.get("undid_summary")}
    else:
        entry["undid_summary"] = summary(last) if last else None
    before = await asyncio.to_thread(history.snapshot, kept)
    try:
        await asyncio.to_thread(history.append, kept, entry)
        await transaction.swap_back(kept, live)
    except BaseException:
        if not await asyncio.to_thread(history.holds, live, change_id):  # not swapped in: as it was
            await asyncio.shield(asyncio.to_thread(history.restore, kept, before))
        raise
    return sentence, done
