import io
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from jupyter_gpu_env.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]


def test_gpu_json_reports_memory(capsys):
    assert main(["gpu", "--json"]) == 0
    snap = json.loads(capsys.readouterr().out)
    assert snap["host"]["memory"]["used_bytes"] > 0
    assert snap["host"]["cpu"]["usage_cores"] is not None
    # This machine as it is, with or without GPUs: the list and the status never contradict.
    if snap["gpus"]:
        assert snap["gpu_status"]["available"] is True
    else:
        assert snap["gpu_status"]["available"] is False
        assert snap["gpu_status"]["message"].startswith("No GPU visible")


def test_gpu_text_says_why_no_gpu(without_gpu_driver, capsys):
    assert main(["gpu"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Memory: ")
    assert "GiB" in out
    assert "No GPU visible: this machine has no NVIDIA driver loaded." in out


def test_no_command_prints_help(capsys):
    assert main([]) == 2
    assert "gpu" in capsys.readouterr().out


def test_runs_as_jupyter_subcommand():
    out = subprocess.run(
        [sys.executable, "-m", "jupyter", "gpu-env", "openapi"], capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(out)["info"]["title"] == "jupyter-gpu-env"


# -- the parser ----------------------------------------------------------------------------------

COMMANDS = ["gpu", "check", "openapi", "envs", "clone", "install", "remove-env", "kernel", "export", "pack"]
COMMANDS += ["images", "job", "sweep", "schedule", "pipeline", "dask", "history", "undo"]
# What runs is a noun with the same verbs where they apply; each of these parses.
VERBS = {
    "job": ["run x.ipynb", "list", "show J", "logs J", "cancel J", "rerun J"],
    "sweep": ["list", "show S", "cancel S", "rerun S", "results S"],
    "schedule": ["create x.ipynb --cron @daily", "list", "show S", "run S", "pause S", "delete S"],
    "pipeline": ["run x.pipeline.yaml", "list", "show P", "cancel P", "rerun P --from a"],
    "dask": ["start --env e", "list", "show D", "scale D 2", "cancel D"],
}
# The spellings of before, still served: (old, what it is now).
OLDER = [
    ("submit x.ipynb", "job run"),
    ("jobs", "job list"),
    ("logs J", "job logs"),
    ("cancel J", "job cancel"),
    ("rerun J", "job rerun"),
    ("results S", "sweep results"),
    ("schedules", "schedule list"),
    ("pipelines", "pipeline list"),
]


def test_every_command_has_help(capsys):
    assert main(["--help"]) == 0
    top = capsys.readouterr().out
    for command in COMMANDS:
        assert command in top
        assert main([command, "--help"]) == 0
        out = capsys.readouterr().out
        assert out.startswith(f"usage: jupyter gpu-env {command}")


def test_no_help_shows_rest_markup():
    """Docstrings become help: reST's ``literal`` and :func:`roles` read as plain `quotes`."""
    import argparse

    from jupyter_gpu_env.cli import build_parser

    seen, todo = 0, [build_parser()]
    while todo:
        parser = todo.pop()
        text = parser.format_help()
        assert "``" not in text and ":func:" not in text and ":class:" not in text, text
        seen += 1
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                todo.extend(action.choices.values())
    assert seen > 40  # every noun, verb and older spelling


def documented_command_lines() -> list[list[str]]:
    """The `jupyter gpu-env ...` command lines of docs/cli.md's blocks, as argv."""
    section = (ROOT / "docs" / "cli.md").read_text()
    block = section.split("```bash", 1)[1].split("```", 1)[0]
    return [
        shlex.split(found)
        for line in block.splitlines()
        for found in re.findall(r"jupyter gpu-env ([^#;)]*)", line)
    ]


def test_the_documented_terminal_examples_are_valid_command_lines():
    """Each one runs against the demo (tried by hand after scripts/lab.sh; the commands themselves are
    tested in test_envs.py and test_jobs.py): here, each still parses, and what it names exists."""
    lines = documented_command_lines()
    assert {argv[0] for argv in lines} >= set(COMMANDS)  # every command is shown
    parser = build_parser()
    for argv in lines:
        try:
            args = parser.parse_args(argv)
        except SystemExit:
            pytest.fail(f"docs/cli.md: `jupyter gpu-env {shlex.join(argv)}` is not a valid command line")
        if argv[:2] == ["job", "run"]:
            assert (ROOT / args.notebook).is_file(), (
                f"docs/cli.md submits {args.notebook}, which is not in the checkout"
            )


def test_everything_that_runs_takes_the_same_verbs_noun_first():
    parser = build_parser()
    for noun, lines in VERBS.items():
        for line in lines:
            args = parser.parse_args([noun, *shlex.split(line)])
            assert callable(args.func), (noun, line)


def test_the_older_spellings_still_parse_and_say_what_they_are_now(capsys):
    parser = build_parser()
    for old, now in OLDER:
        parser.parse_args([*shlex.split(now), *shlex.split(old)[1:]])  # what it is now takes the same
        older = parser.parse_args(shlex.split(old))
        assert older.func.__wrapped__ is not None, old  # the command, behind the note
        assert main([*shlex.split(old), "--help"]) == 0
        assert f"(older spelling of `{now}`)" in capsys.readouterr().out


def test_usage_errors_exit_2(capsys):
    assert main(["no-such-command"]) == 2
    assert main(["clone", "only-source"]) == 2
    assert main(["job", "run", "x.ipynb", "--gpus", "many"]) == 2
    assert "invalid int value" in capsys.readouterr().err
    assert main(["job"]) == 2  # a noun wants its verb
    assert main(["schedule", "create"]) == 2
    assert "schedule create takes the notebook" in capsys.readouterr().err
    assert main(["pipeline", "list", "0123456789ab"]) == 2
    assert "pipeline list takes no id" in capsys.readouterr().err


# -- configuration -------------------------------------------------------------------------------


def test_config_files_are_read_like_the_server_reads_them(tmp_path):
    from jupyter_gpu_env.cli.config import load_file_config, make_app, override_config

    high, low = tmp_path / "high", tmp_path / "low"
    high.mkdir()
    low.mkdir()
    (low / "jupyter_server_config.json").write_text(
        json.dumps({"GpuEnvApp": {"job_dir": "low-jobs", "conda_timeout": 5.0}})
    )
    (high / "jupyter_server_config.py").write_text("c.GpuEnvApp.job_dir = 'high-jobs'\n")
    # The extension's own file loses against the server's files, as on the server.
    (high / "jupyter_jupyter_gpu_env_config.json").write_text(
        json.dumps({"GpuEnvApp": {"job_dir": "own-file", "image_threads": 3}})
    )
    (high / "jupyter_config.py").write_text("this is not python\n")  # warned about, then skipped
    config = load_file_config([str(high), str(low)])
    config.merge(override_config(["LocalBackend.max_concurrent=4", "GpuEnvApp.backends=local"]))
    app = make_app(config)
    assert (app.job_dir, app.conda_timeout, app.image_threads) == ("high-jobs", 5.0, 3)
    assert app.backends == ["local"]
    from jupyter_gpu_env.backends.local import LocalBackend

    assert LocalBackend(parent=app).max_concurrent == 4


def test_bad_overrides_are_errors(capsys):
    from jupyter_gpu_env.cli.config import override_config
    from jupyter_gpu_env.errors import InvalidRequest

    for bad in ["job_dir=x", "GpuEnvApp.nope=1", "ServerApp.port=1"]:
        with pytest.raises(InvalidRequest):
            override_config([bad])
    assert main(["job", "list", "--config", "GpuEnvApp.conda_timeout=soon"]) == 1
    assert "error: Invalid configuration" in capsys.readouterr().err


# -- the progress bar ----------------------------------------------------------------------------


def test_progress_bar_redraws_one_line_on_a_terminal():
    from jupyter_gpu_env.cli.progress import ProgressBar

    stream = io.StringIO()
    with ProgressBar("clone x", stream, tty=True) as bar:
        bar.progress(0.0, "Solving")
        bar.progress(0.5, "Linking packages (3/6)")
        bar.log("a tool's line")  # not shown without verbose
    text = stream.getvalue()
    assert text.count("\n") == 1 and text.endswith("\n")
    assert "\r\x1b[K" in text and "a tool's line" not in text
    assert text.rstrip("\n").rsplit("\r\x1b[K", 1)[1].startswith("clone x [########################] 100%")
    assert len(bar.render(30)) == 30


def test_progress_bar_prints_plain_lines_elsewhere():
    from jupyter_gpu_env.cli.progress import ProgressBar

    stream = io.StringIO()
    bar = ProgressBar("clone x", stream, tty=False, verbose=True)
    for i in range(1, 51):  # counters in a message make no new line; steps of a tenth do
        bar.progress(0.2 + i / 500, f"Linking packages ({i}/50)")
    bar.log("tool output")
    bar.progress(0.05, "going backwards is ignored")
    bar.close("Failed")
    assert stream.getvalue().splitlines() == [
        "[ 20%] Linking packages (1/50)",
        "[ 30%] Linking packages (50/50)",
        "  | tool output",
        "[ 30%] going backwards is ignored",
        "[ 30%] Failed",
    ]
