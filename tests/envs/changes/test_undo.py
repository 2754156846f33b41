"""History and undo: the changes an environment holds; undo swaps the earlier state back, and again redoes."""

from __future__ import annotations

import subprocess

import pytest

from jupyter_gpu_env.envs.transaction import previous_states
from jupyter_gpu_env.errors import Conflict


def _imports(prefix, module) -> bool:
    code = f"import {module}"
    return subprocess.run([str(prefix / "bin" / "python"), "-c", code], capture_output=True).returncode == 0


async def test_undo_restores_the_state_before_the_last_change_and_again_redoes_it(service):
    await service.clone("demo", "undoable")
    prefix = service.user_env_dir / "undoable"
    fresh = await service.history("undoable")
    assert fresh.changes == [] and fresh.undo is None
    with pytest.raises(Conflict, match="nothing to undo") as e:
        await service.undo("undoable")
    assert e.value.reason == "nothing_to_undo"
    with pytest.raises(Conflict, match="nothing to undo"):  # a request's claim fails fast, and lets go
        await service.undoing("undoable")
    assert not service.busy("undoable")

    await service.change_packages("undoable", ["tabulate"], [], change_id="add-tabulate")
    assert _imports(prefix, "tabulate")
    held = await service.history("undoable")
    assert [(c.id, c.kind, c.summary) for c in held.changes] == [("add-tabulate", "packages", "+tabulate")]
    assert any(i.startswith("tabulate-") for i in held.changes[0].installed)
    assert held.undo == "Undo the last change (+tabulate): back to the state before it."

    result = await service.undo("undoable", change_id="undo-1")
    assert result.restored == held.undo
    assert result.done == "Undid +tabulate"
    assert not _imports(prefix, "tabulate") and _imports(prefix, "ipykernel")
    after = await service.history("undoable")
    assert [(c.id, c.kind, c.summary) for c in after.changes] == [("undo-1", "undo", "undo of +tabulate")]
    assert after.undo == "Redo +tabulate."
    assert len(previous_states(prefix)) == 1  # the state undone is the one kept

    redo = await service.undo("undoable", change_id="redo-1")
    assert redo.done == "Redid +tabulate"
    assert _imports(prefix, "tabulate")
    redone = await service.history("undoable")
    assert [c.summary for c in redone.changes] == ["redo of +tabulate", "+tabulate"]


async def test_a_managed_environment_offers_no_undo(service):
    managed = await service.history("demo")
    assert managed.undo is None
    assert not await service.can_undo("demo")


async def test_undo_applies_only_to_the_environment_that_made_the_kept_state(service):
    """An environment deleted (here: a delete killed halfway, by the command line while the server ran,
    which leaves the kept state behind) and another made under its name: the state kept for the first
    one is never swapped into the second."""
    await service.clone("demo", "again")
    prefix = service.user_env_dir / "again"
    await service.change_packages("again", ["tabulate"], [], change_id="first-life")
    (kept,) = previous_states(prefix)
    # What a delete killed after its first step left: the environment renamed out of the way.
    prefix.rename(prefix.with_name(".again.deleting-0badc0de"))
    await service.clone("demo", "again")
    made = prefix.stat().st_ino

    assert (await service.history("again")).undo is None
    assert not await service.can_undo("again")
    with pytest.raises(Conflict, match="belongs to an earlier environment named 'again'") as e:
        await service.undoing("again")
    assert e.value.reason == "nothing_to_undo" and not service.busy("again")
    with pytest.raises(Conflict, match="undo applies only to the environment that made it"):
        await service.undo("again")
    assert prefix.stat().st_ino == made and kept.is_dir()  # nothing was swapped

    # The next start removes what the first environment left; the second one's own changes undo.
    await service.cleanup_stale()
    assert previous_states(prefix) == []
    await service.change_packages("again", ["tabulate"], [], change_id="second-life")
    await service.undo("again")
    assert not _imports(prefix, "tabulate") and prefix.stat().st_ino == made  # as it was made


async def test_a_delete_takes_the_kept_states_with_it(service):
    await service.clone("demo", "gone")
    prefix = service.user_env_dir / "gone"
    await service.change_packages("gone", ["tabulate"], [])
    assert previous_states(prefix)
    await service.delete("gone")
    assert [p.name for p in service.user_env_dir.iterdir() if p.name.startswith(".gone.")] == []
    await service.clone("demo", "gone")
    assert (await service.history("gone")).undo is None
