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
    assert not _imports(prefix, "tabulate") and _imports(prefix, "ipykernel")
    after = await service.history("undoable")
    assert [(c.id, c.kind, c.summary) for c in after.changes] == [("undo-1", "undo", "undo of +tabulate")]
    assert after.undo == "Redo +tabulate."
    assert len(previous_states(prefix)) == 1  # the state undone is the one kept

    await service.undo("undoable", change_id="redo-1")
    assert _imports(prefix, "tabulate")
    redone = await service.history("undoable")
    assert [c.summary for c in redone.changes] == ["redo of +tabulate", "+tabulate"]


async def test_a_managed_environment_offers_no_undo(service):
    managed = await service.history("demo")
    assert managed.undo is None
    assert not await service.can_undo("demo")
