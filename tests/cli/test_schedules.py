"""`jupyter gpu-env schedule|schedules` on the real local backend and store."""

from __future__ import annotations

import json

import pytest
from helpers import run_cli


@pytest.fixture
def cli(batch_terminal, monkeypatch):
    monkeypatch.setenv("TZ", "Europe/Rome")
    return batch_terminal(LocalBackend={"kill_grace": 3.0})


def test_schedule_list_pause_run_now_and_delete(cli, capsys):
    cli.notebook("report.ipynb", ["print('n is', n)"], parameters="n = 1")
    code, out, err = run_cli(
        capsys, "schedule", "create", "report.ipynb", "--cron", "30 6 * * 1-5", "-p", "n", "4"
    )
    assert code == 0, err
    schedule_id = out.strip()
    assert len(schedule_id) == 12
    assert "every weekday at 06:30" in err and "only while this Jupyter server runs" in err
    assert err.count("  next: ") == 3 and "06:30 Europe/Rome" in err.split("next: ", 1)[1]

    code, out, err = run_cli(capsys, "schedule", "list")
    assert code == 0 and schedule_id in out and "report" in out

    code, out, err = run_cli(capsys, "schedule", "pause", schedule_id)
    assert code == 0 and "paused" in out and "next:" not in out
    code, out, err = run_cli(capsys, "schedule", "list", "--json")
    [shown] = json.loads(out)["items"]
    assert shown["active"] is False and shown["parameters"] == {"n": 4}

    code, out, err = run_cli(capsys, "schedule", "run", schedule_id)
    assert code == 0, err
    job_id = out.strip()
    code, out, err = run_cli(capsys, "job", "list", "--json")
    assert [(j["id"], j["schedule_id"]) for j in json.loads(out)["items"]] == [(job_id, schedule_id)]

    code, out, err = run_cli(capsys, "schedule", "delete", schedule_id)
    assert code == 0 and "its runs stay" in err
    # Several values make a scheduled sweep: each due time runs every combination.
    code, out, err = run_cli(
        capsys, "schedule", "create", "report.ipynb", "--cron", "@daily", "-p", "n", "1,2,3"
    )
    assert code == 0, err
    sweep_id = out.strip()
    code, out, err = run_cli(capsys, "schedule", "list", "--json")
    assert [(s["id"], s["sweep_size"]) for s in json.loads(out)["items"]] == [(sweep_id, 3)]
    assert run_cli(capsys, "schedule", "delete", sweep_id)[0] == 0
    code, out, err = run_cli(capsys, "schedule", "list")
    assert out == "" and "No schedules." in err


@pytest.mark.parametrize(
    ("argv", "code", "words"),
    [
        (["schedule", "report.ipynb", "--cron", "61 * * * *"], 1, "minute 61"),
        (["schedule", "report.ipynb", "--every", "R/not-a-date/PT1H"], 1, "not-a-date"),
        (["schedule", "report.ipynb"], 2, "--cron"),
        (["schedule", "report.ipynb", "--cron", "@daily", "-p", "n", "1,x"], 1, "n"),
        (["schedule", "pause", "0123456789ab"], 1, "No schedule"),
    ],
)
def test_bad_schedules_say_what_is_wrong(cli, capsys, argv, code, words):
    cli.notebook("report.ipynb", ["print(n)"], parameters="n = 1")
    got, out, err = run_cli(capsys, *argv)
    assert got == code and words in err
