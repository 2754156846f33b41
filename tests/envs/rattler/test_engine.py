"""The engine's child-process protocol, with stand-in workers (the real one is used everywhere else)."""

import os
import stat

import pytest
from helpers import Recorder

from jupyter_gpu_env.envs.engine import EngineError
from jupyter_gpu_env.envs.rattler.engine import RattlerEngine, channel_url
from jupyter_gpu_env.errors import Conflict, Unavailable


def _fake_python(tmp_path, body):
    script = tmp_path / "fake-python"
    script.write_text("#!/bin/sh\ncat > /dev/null\n" + body)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


async def test_progress_is_forwarded_and_a_result_counts_even_if_the_child_aborts(tmp_path):
    python = _fake_python(
        tmp_path,
        """echo '{"progress": 0.5, "message": "half"}'
echo 'some stray line'
echo '{"log": "a log line"}'
echo '{"result": {"packages": ["a-1-0"]}}'
kill -ABRT $$
""",
    )
    told = Recorder()
    engine = RattlerEngine([], tmp_path / "pkgs", python=python)
    assert await engine.create(tmp_path / "env", ["a"], report=told) == ["a-1-0"]
    assert told.seen == [(0.5, "half")]
    assert told.lines == ["some stray line", "a log line"]


@pytest.mark.parametrize(
    ("reason", "cls", "status"), [("unsolvable", Conflict, 409), ("channel_unavailable", Unavailable, 503)]
)
async def test_errors_map_to_api_errors(tmp_path, reason, cls, status):
    python = _fake_python(tmp_path, f"""echo '{{"error": "it went wrong", "reason": "{reason}"}}'\n""")
    with pytest.raises(cls) as e:
        await RattlerEngine([], tmp_path / "pkgs", python=python).install(tmp_path, ["x"], [])
    assert e.value.status == status and e.value.reason == reason and e.value.message == "it went wrong"


async def test_a_crash_without_answer_is_an_engine_error(tmp_path):
    python = _fake_python(tmp_path, "echo 'Fatal: boom' >&2\nexit 3\n")
    with pytest.raises(EngineError, match="exit status 3.*boom") as e:
        await RattlerEngine([], tmp_path / "pkgs", python=python).install(tmp_path, ["x"], [])
    assert e.value.status == 502


def test_channel_urls(tmp_path):
    assert channel_url("conda-forge") == "conda-forge"
    assert channel_url("https://example.org/ch") == "https://example.org/ch"
    assert channel_url(str(tmp_path)) == tmp_path.as_uri()
    assert channel_url("~/ch").startswith("file://" + os.path.expanduser("~"))
