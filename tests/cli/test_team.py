"""`jupyter gpu-env create` from a file (the plan first) and `publish`/`unpublish`, against the real demo."""

from __future__ import annotations

import json

from helpers import run_cli

from jupyter_gpu_env.cli import main


def test_create_from_a_file_plan_first(home, capsys):
    (home / "environment.yml").write_text("dependencies:\n  - python\n  - tabulate\n")
    code, out, _ = run_cli(capsys, "create", "tab", "environment.yml", "--plan")
    assert code == 0 and "Plan for 'tab' from environment.yml:" in out
    assert "install   tabulate" in out and "no ipykernel" in out
    assert not (home / "envs" / "tab").exists()
    # Not on a terminal, creating without --yes is refused rather than left waiting for an answer.
    code, _, err = run_cli(capsys, "create", "tab", "environment.yml")
    assert code == 2 and "--yes" in err
    code, out, err = run_cli(capsys, "create", "tab", "environment.yml", "--yes")
    assert code == 0, err
    assert "Created 'tab' at" in out
    assert list((home / "envs" / "tab" / "conda-meta").glob("tabulate-*.json"))
    (home / "req.txt").write_text("-r other.txt\n")
    code, _, err = run_cli(capsys, "create", "bad", "req.txt", "--plan")
    assert code != 0 and "line 1: '-r' is a pip option" in err


def test_publish_list_unpublish(home, capsys):
    team = home / "team"
    team.mkdir()
    config = home / "config" / "jupyter_server_config.json"
    settings = json.loads(config.read_text())
    settings["GpuEnvApp"]["shared_env_dirs"] = [str(team)]
    config.write_text(json.dumps(settings))
    assert main(["clone", "demo", "mine"]) == 0
    capsys.readouterr()
    code, out, err = run_cli(capsys, "publish", "mine", "-d", "demo for the team", "--name", "team-demo")
    assert code == 0, err
    assert f"Shared 'mine' as 'team-demo' at {team / 'team-demo'}" in out
    code, out, _ = run_cli(capsys, "envs")
    line = next(row for row in out.splitlines() if row.startswith("team-demo"))
    assert "shared" in line and "demo for the team" in line
    code, out, _ = run_cli(capsys, "unpublish", "mine")
    assert code == 2  # an own environment is not unpublished (remove-env deletes it)
    code, out, _ = run_cli(capsys, "unpublish", "team-demo")
    assert code == 0 and not (team / "team-demo").exists()
