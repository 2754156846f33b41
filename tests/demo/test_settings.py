"""The demo's settings (``python -m jupyter_gpu_env.demo build --configure``, as scripts/lab.sh runs it)
reach the server and `jupyter gpu-env` alike.

pytest-jupyter's ``jp_environ`` points every folder of the Jupyter config path, this installation's own
(``{sys.prefix}/etc/jupyter``) included, at temporary ones, so the file is written there and nowhere real.
"""

from __future__ import annotations

import json

import pytest

from jupyter_gpu_env.cli import main
from jupyter_gpu_env.demo.__main__ import main as demo_main
from jupyter_gpu_env.demo.settings import FILENAME, remove_settings, write_settings
from jupyter_gpu_env.errors import Conflict


@pytest.fixture
def demo_settings(jp_environ, jp_env_config_path, demo, tmp_path):
    """The demo's settings written where lab.sh writes them, with the user's own environments in tmp_path."""
    path = write_settings(demo.managed_dir, demo.channel, demo.pkgs)
    assert path == jp_env_config_path / FILENAME
    # Not the demo's business: keeps this test's clones and kernels out of the real home.
    (jp_env_config_path / "jupyter_server_config.json").write_text(
        json.dumps({"GpuEnvApp": {"user_env_dir": str(tmp_path / "envs")}})
    )
    return path


def listed(capsys) -> list[str]:
    assert main(["envs", "--json"]) == 0
    return [e["name"] for e in json.loads(capsys.readouterr().out)]


def test_the_cli_reads_the_settings_and_unconfigure_removes_them(demo_settings, capsys):
    assert "demo" in listed(capsys)
    assert demo_main(["unconfigure"]) == 0
    assert capsys.readouterr().out == f"removed {demo_settings}\n"
    assert not demo_settings.exists()
    assert "demo" not in listed(capsys)


async def test_the_server_reads_the_same_settings(demo_settings, api):
    answer = json.loads((await api("environments")).body)
    assert [(e["name"], e["kind"]) for e in answer["environments"]] == [("demo", "managed")]


def test_a_file_the_builder_did_not_write_is_left_alone(jp_environ, jp_env_config_path, demo):
    own = jp_env_config_path / FILENAME
    own.write_text("c.GpuEnvApp.managed_env_dirs = ['/srv/envs']\n")
    with pytest.raises(Conflict, match="was not written by the demo builder"):
        write_settings(demo.managed_dir, demo.channel)
    assert remove_settings() is None
    assert own.read_text() == "c.GpuEnvApp.managed_env_dirs = ['/srv/envs']\n"


def test_the_labs_terminals_find_this_venvs_jupyter_first(tmp_path):
    """A terminal runs a login shell, whose profile resets PATH: the setting puts the venv first after it."""
    import json
    import subprocess

    from jupyter_gpu_env.demo.settings import write_terminal_settings

    venv_bin = tmp_path / "venv bin"  # a space, as a home folder may have
    venv_bin.mkdir()
    (venv_bin / "jupyter").write_text("#!/bin/sh\necho venv-jupyter\n")
    (venv_bin / "jupyter").chmod(0o755)
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "jupyter_server_config.json").write_text('{"ServerApp": {"port": 9999}}')
    written = write_terminal_settings(venv_bin, tmp_path / "etc")
    assert written == tmp_path / "etc" / "jupyter_server_config.json"
    assert json.loads(written.read_text())["ServerApp"]["port"] == 9999  # the file's own settings kept
    argv = json.loads(written.read_text())["ServerApp"]["terminado_settings"]["shell_command"]
    env = {"PATH": "/usr/bin:/bin", "SHELL": "/bin/sh", "HOME": str(tmp_path), "ENV": ""}
    out = subprocess.run(
        argv, input="command -v jupyter; jupyter\n", env=env, capture_output=True, text=True, timeout=30
    )
    assert out.stdout.splitlines()[-2:] == [str(venv_bin / "jupyter"), "venv-jupyter"], out


def test_the_server_applies_the_terminal_setting(tmp_path):
    """What `jupyter server` loads from the config path: the setting reaches ServerApp.terminado_settings
    (a jupyter_server_config.d/ file would not: only its extensions are read)."""
    import os
    import subprocess
    import sys

    from jupyter_gpu_env.demo.settings import write_terminal_settings

    write_terminal_settings(tmp_path / "venv-bin", tmp_path / "etc")
    env = {
        **os.environ,
        "JUPYTER_CONFIG_PATH": str(tmp_path / "etc"),
        "JUPYTER_CONFIG_DIR": str(tmp_path / "user"),
    }
    code = (
        "from jupyter_server.serverapp import ServerApp\n"
        "app = ServerApp(); app.load_config_file()\n"
        "print(app.terminado_settings['shell_command'][-1])"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert str(tmp_path / "venv-bin") in out.stdout, out.stderr


def test_a_config_file_that_is_not_ours_to_merge_is_left_alone(tmp_path):
    from jupyter_gpu_env.demo.settings import write_terminal_settings
    from jupyter_gpu_env.errors import Conflict

    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "jupyter_server_config.json").write_text("[1, 2]")
    with pytest.raises(Conflict, match="not a Jupyter JSON configuration"):
        write_terminal_settings(tmp_path / "venv-bin", tmp_path / "etc")
    assert (tmp_path / "etc" / "jupyter_server_config.json").read_text() == "[1, 2]"
