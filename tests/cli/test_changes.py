"""`jupyter gpu-env install` with the plan first, `history` and `undo`, against the real demo."""

from __future__ import annotations

import json

from helpers import run_cli

from jupyter_gpu_env.cli import main


def test_a_plan_changes_nothing_and_unnamed_removals_need_yes(home, capsys):
    assert main(["clone", "demo", "mine"]) == 0
    capsys.readouterr()
    code, out, _ = run_cli(capsys, "install", "mine", "--remove", "jedi", "--plan")
    assert code == 0
    assert "remove    ipykernel" in out and "(not named: taken along)" in out
    assert "will no longer run notebooks" in out
    assert list((home / "envs" / "mine" / "conda-meta").glob("ipykernel-*.json"))

    # Not on a terminal, a change that takes unnamed packages along is refused without --yes.
    code, _, err = run_cli(capsys, "install", "mine", "--remove", "jedi")
    assert code == 2 and "--yes" in err
    assert list((home / "envs" / "mine" / "conda-meta").glob("jedi-*.json"))


def test_install_history_undo_redo(home, capsys):
    assert main(["clone", "demo", "mine"]) == 0
    capsys.readouterr()
    code, out, err = run_cli(capsys, "install", "mine", "tabulate")
    assert code == 0, err
    assert out.startswith("Installed:") and "tabulate-" in out
    assert list((home / "envs" / "mine" / "conda-meta").glob("tabulate-*.json"))
    code, out, _ = run_cli(capsys, "history", "mine")
    assert code == 0 and "+tabulate" in out and "undo: Undo the last change (+tabulate)" in out
    code, out, _ = run_cli(capsys, "undo", "mine")
    assert code == 0 and out.startswith("Undo the last change (+tabulate)")
    assert not list((home / "envs" / "mine" / "conda-meta").glob("tabulate-*.json"))
    code, out, _ = run_cli(capsys, "history", "mine", "--json")
    assert json.loads(out)["undo"] == "Redo +tabulate."
    assert run_cli(capsys, "undo", "mine")[0] == 0
    assert list((home / "envs" / "mine" / "conda-meta").glob("tabulate-*.json"))
