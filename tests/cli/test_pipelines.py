"""`jupyter gpu-env pipeline|pipelines` on the real local backend and store."""

from __future__ import annotations

import json

import pytest
from helpers import run_cli
from pipeline_notebooks import diamond


@pytest.fixture
def cli(batch_terminal):
    return batch_terminal(LocalBackend={"kill_grace": 3.0, "max_concurrent": 3})


def test_a_pipeline_file_runs_to_its_end_with_wait_and_can_be_run_again_from_a_node(cli, capsys):
    diamond(cli.root, "work")
    (cli.root / "work" / "two.pipeline.yaml").write_text(
        "nodes:\n  prepare: prepare.ipynb\n  check: {notebook_path: check.ipynb, after: [prepare]}\n"
    )
    code, out, err = run_cli(capsys, "pipeline", "run", "work/two.pipeline.yaml", "--wait")
    assert code == 0, err
    pipeline_id = out.strip()
    assert "check: waiting" in err and "check: succeeded" in err and f"{pipeline_id}  two: succeeded" in err

    code, out, _ = run_cli(capsys, "pipeline", "list")
    assert code == 0 and pipeline_id in out and "✓✓" in out and "work/two.pipeline.yaml" in out

    code, out, err = run_cli(capsys, "pipeline", "rerun", pipeline_id, "--from", "check", "--json")
    assert code == 0, err
    shown = json.loads(out)
    assert [n["attempts"] for n in shown["nodes"]] == [1, 2]

    code, out, err = run_cli(capsys, "pipeline", "rerun", pipeline_id)
    assert code == 2 and "--from NODE" in err


def test_a_broken_file_is_refused_saying_where(cli, capsys):
    (cli.root / "bad.pipeline.yaml").write_text("nodes:\n  a: {notebook_path: a.ipynb, after: [b]}\n")
    code, out, err = run_cli(capsys, "pipeline", "run", "bad.pipeline.yaml")
    assert code != 0 and out == ""
    assert "Node 'a' waits for 'b', which is no node of the pipeline." in err


def test_a_pipeline_file_is_scheduled_like_a_notebook(cli, capsys):
    diamond(cli.root, "work")
    (cli.root / "work" / "two.pipeline.yaml").write_text(
        "nodes:\n  prepare: prepare.ipynb\n  check: {notebook_path: check.ipynb, after: [prepare]}\n"
    )
    code, out, err = run_cli(
        capsys, "schedule", "create", "work/two.pipeline.yaml", "--cron", "@daily", "--name", "nightly"
    )
    assert code == 0, err
    assert "nightly: every day at 00:00" in err and "the server starts each run of a pipeline" in err
    code, out, err = run_cli(capsys, "schedule", "list", "--json")
    listed = json.loads(out)["items"]
    assert [s["pipeline_path"] for s in listed] == ["work/two.pipeline.yaml"]
