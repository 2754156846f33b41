"""Environments made from a file under the server's root, with the real engine and installer: planned
first (nothing made), then built aside and renamed into place, or nothing at all."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

import pytest
from helpers import Recorder

from jupyter_gpu_env.envs.catalog.prefix import read_origin, read_records
from jupyter_gpu_env.envs.changes.undo import read as read_history
from jupyter_gpu_env.envs.pip.tool import PipSettings
from jupyter_gpu_env.errors import Forbidden, InvalidRequest, NotFound


def _py(prefix: Path, code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(prefix / "bin" / "python"), "-c", code], capture_output=True, text=True)


@pytest.fixture
def svc(demo, tmp_path, make_service, wheelhouse):
    root = tmp_path / "root"
    (root / "project").mkdir(parents=True)
    return make_service(
        demo, tmp_path / "home", pip=PipSettings(find_links=(str(wheelhouse),), no_index=True), root=root
    )


def _write(svc, rel: str, text: str) -> str:
    (svc.files.root_dir / rel).write_text(text)
    return rel


async def test_environment_yml_is_planned_then_made(svc, env_dir_entries):
    rel = _write(
        svc,
        "project/environment.yml",
        "name: analysis\nchannels: [conda-forge]\ndependencies:\n  - python\n  - ipykernel\n  - tabulate\n"
        "  - pip:\n    - gpuenvmini==1.0\n",
    )
    plan = await svc.plan_from_file("analysis", rel)
    by_name = {c.name: c for c in plan.changes}
    assert {"python", "ipykernel", "tabulate", "pip", "gpuenvmini"} <= by_name.keys()
    assert all(c.action == "install" for c in plan.changes)
    assert by_name["gpuenvmini"].kind == "pypi" and by_name["gpuenvmini"].version_after == "1.0"
    assert by_name["tabulate"].requested and not by_name["pyzmq"].requested
    assert plan.runs_notebooks and any("conda-forge" in w for w in plan.warnings)
    assert env_dir_entries(svc.user_env_dir) == []  # a plan makes nothing

    told = Recorder()
    res = await svc.create_from_file("analysis", rel, report=told)
    progress = told.fractions
    prefix = svc.user_env_dir / "analysis"
    assert res.environment.name == "analysis" and res.environment.has_ipykernel
    assert res.report.file_kind == "environment.yml" and "gpuenvmini==1.0" in res.report.installed
    assert progress == sorted(progress) and progress[-1] == 1.0
    assert _py(prefix, "import tabulate, gpuenvmini; print(gpuenvmini.VALUE)").stdout.strip() == "one"
    # Its scripts name its own path, not the folder it was built in.
    assert (prefix / "bin" / "gpuenvmini-hello").read_text().splitlines()[0] == f"#!{prefix}/bin/python"
    assert read_origin(prefix)["source"] == str(svc.files.root_dir / rel)
    assert res.environment.made_from == "file" and res.environment.source_name == "environment.yml"
    history = read_history("analysis", prefix)
    assert [(c.kind, c.summary) for c in history.changes] == [("create", f"created from {rel}")]
    assert history.undo is None
    assert env_dir_entries(svc.user_env_dir) == ["analysis"]


async def test_requirements_txt_gets_a_python_and_its_packages(svc, demo):
    rel = _write(svc, "requirements.txt", "gpuenvmini>=2  # the newest\nsix\n")
    plan = await svc.plan_from_file("reqs", rel)
    assert {c.name for c in plan.changes if c.kind == "pypi"} == {"gpuenvmini", "six"}
    assert not plan.runs_notebooks and any("no ipykernel" in w for w in plan.warnings)
    res = await svc.create_from_file("reqs", rel)
    six = next(demo.extra_wheels.glob("six-*.whl")).name.split("-")[1]
    assert sorted(r for r in res.report.installed if "==" in r) == ["gpuenvmini==2.0", f"six=={six}"]
    assert _py(svc.user_env_dir / "reqs", "import gpuenvmini, six").returncode == 0


async def test_an_explicit_lock_makes_the_same_packages(svc, demo):
    await svc.clone("demo", "source")
    lock = await svc.export("source", "explicit")
    rel = _write(svc, "source.lock", lock.content)
    res = await svc.create_from_file("again", rel)
    assert res.report.file_kind == "explicit"

    def builds(prefix: Path) -> set[tuple[str, str, str]]:
        return {(r["name"], r["version"], r["build"]) for r in read_records(prefix)}

    assert builds(svc.user_env_dir / "again") == builds(demo.env)
    # The demo's pip-installed six came along from the lock's comment lines.
    assert _py(svc.user_env_dir / "again", "import six").returncode == 0


async def test_a_failure_leaves_nothing(svc, env_dir_entries):
    rel = _write(svc, "requirements.txt", "gpuenvmini\ngpuenvmissing\n")
    with pytest.raises(NotFound, match="gpuenvmissing"):
        await svc.create_from_file("broken", rel)
    assert env_dir_entries(svc.user_env_dir) == []
    assert not (svc.user_env_dir / "broken").exists()


async def test_files_are_checked_before_anything(svc, tmp_path):
    (tmp_path / "outside.yml").write_text("dependencies: [python]\n")
    with pytest.raises(Forbidden, match="outside the server's root"):
        await svc.check_file("../outside.yml")
    with pytest.raises(NotFound, match="There is no file at 'nope.yml'"):
        await svc.check_file("nope.yml")
    with pytest.raises(InvalidRequest, match="is a folder"):
        await svc.check_file("project")
    (svc.files.root_dir / "bin.txt").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(InvalidRequest, match="not a text file"):
        await svc.check_file("bin.txt")


async def test_a_file_is_parsed_off_the_event_loop(svc, monkeypatch):
    from jupyter_gpu_env.envs.fromfile import specfile

    parsed_on: list[threading.Thread] = []
    parse = specfile.parse

    def recording(*args, **kwargs):
        parsed_on.append(threading.current_thread())
        return parse(*args, **kwargs)

    monkeypatch.setattr(specfile, "parse", recording)
    await svc.check_file(_write(svc, "environment.yml", "dependencies:\n  - python\n"))
    assert parsed_on and threading.current_thread() not in parsed_on


@pytest.mark.parametrize(
    "channel",
    [
        "https://elsewhere.example.org/channel",  # any http channel
        "file:///etc",  # a folder outside the configured ones
        "CONFIGURED/../elsewhere",  # out of a configured folder by `..`
        "https://conda.anaconda.org/conda-forge",  # a known channel, but not this server's
    ],
)
async def test_an_explicit_lock_fetches_only_from_the_configured_channels(svc, demo, channel):
    configured = demo.channel.resolve().as_uri()
    url = f"{channel.replace('CONFIGURED', configured)}/linux-64/python-3.11.7-h_local_0.conda"
    good = f"{configured}/noarch/tabulate-0.9.0-py_0.conda"
    rel = _write(svc, "env.lock", f"# platform: linux-64\n@EXPLICIT\n{good}\n{url}#sha256:00\n")
    with pytest.raises(InvalidRequest) as e:
        await svc.check_file(rel)
    assert e.value.reason == "channel_not_allowed"
    assert e.value.message.startswith(f"env.lock, line 4: '{url}' comes from ")
    assert configured in e.value.message  # the channels it may come from


async def test_an_explicit_lock_from_the_configured_channel_is_read(svc, demo):
    configured = demo.channel.resolve().as_uri()
    rel = _write(svc, "env.lock", f"@EXPLICIT\n{configured}/noarch/tabulate-0.9.0-py_0.conda#sha256:00\n")
    await svc.check_file(rel)
