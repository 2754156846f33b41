"""Environments from a file and shared with the team, through the REST API of a real server."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os

import pytest
from helpers import body, clone, error, wait_task

from jupyter_gpu_env import proc


@pytest.fixture
def jp_server_config(jp_server_config, demo_app_config, tmp_path):
    team = tmp_path / "team"
    team.mkdir()
    return {
        **jp_server_config,
        "GpuEnvApp": {
            **demo_app_config,
            "image_dir": str(tmp_path / "images"),
            "shared_env_dirs": [str(team)],
            "max_concurrent_plans": 2,
        },
    }


async def _post(api, payload):
    resp = await api("environments", method="POST", body=json.dumps(payload))
    assert resp.code == 202
    return await wait_task(api, (await body(resp))["id"])


async def test_from_file_plan_then_create(api, jp_root_dir, tmp_path):
    (jp_root_dir / "env").mkdir()
    (jp_root_dir / "env" / "environment.yml").write_text("dependencies:\n  - python\n  - tabulate\n")
    planned = await _post(api, {"from_file": "env/environment.yml", "name": "tab", "dry_run": True})
    assert planned["state"] == "succeeded" and planned["kind"] == "plan", planned
    assert "tabulate" in {c["name"] for c in planned["result"]["changes"]}
    assert not (tmp_path / "user-envs" / "tab").exists()

    made = await _post(api, {"from_file": "env/environment.yml", "name": "tab"})
    assert made["state"] == "succeeded" and made["kind"] == "create", made
    assert made["result"]["environment"]["kind"] == "own"
    assert made["result"]["report"]["file_kind"] == "environment.yml"
    history = await body(await api("environments", "tab", "history"))
    assert history["changes"][0]["kind"] == "create"


async def test_plans_run_a_few_at_a_time(api, jp_root_dir, monkeypatch):
    """Plans are limited as GPU checks and packs are: of six asked at once, at most
    c.GpuEnvApp.max_concurrent_plans (2 here) have a solver running; the others wait their turn (24 at
    once had started 12 solvers, 430 MB). Counted at the one subprocess seam, on the real solver."""
    running, most = 0, 0
    finish = proc.Started.finish

    async def counted(self, **kwargs):
        nonlocal running, most
        solver = "jupyter_gpu_env.envs.rattler.worker" in self.args
        running += solver
        most = max(most, running)
        try:
            return await finish(self, **kwargs)
        finally:
            running -= solver

    monkeypatch.setattr(proc.Started, "finish", counted)
    (jp_root_dir / "environment.yml").write_text("dependencies:\n  - python\n  - tabulate\n")
    asked = [
        api(
            "environments",
            method="POST",
            body=json.dumps({"from_file": "environment.yml", "name": f"p{i}", "dry_run": True}),
        )
        for i in range(6)
    ]
    started = [await body(resp) for resp in await asyncio.gather(*asked)]
    ended = [await wait_task(api, task["id"]) for task in started]
    assert [t["state"] for t in ended] == ["succeeded"] * 6, ended
    assert all("tabulate" in {c["name"] for c in t["result"]["changes"]} for t in ended)
    assert 1 <= most <= 2, f"{most} solvers ran at once"


async def test_from_file_refusals_are_4xx_before_any_task(api, jp_root_dir):
    (jp_root_dir / "bad.yml").write_text("dependencies:\n  - 'numpy; rm'\n")
    err = await error(
        api("environments", method="POST", body=json.dumps({"from_file": "bad.yml", "name": "x"})), 400
    )
    assert "bad.yml, dependency 1" in err["message"]
    err = await error(
        api("environments", method="POST", body=json.dumps({"from_file": "../../etc/passwd", "name": "x"})),
        403,
    )
    assert "outside the server's root" in err["message"]
    err = await error(
        api("environments", method="POST", body=json.dumps({"from_file": "none.yml", "name": "x"})), 404
    )
    assert "There is no file" in err["message"]
    both = {"from_file": "bad.yml", "source": "demo", "name": "x"}
    err = await error(api("environments", method="POST", body=json.dumps(both)), 400)
    assert "either `source`" in err["message"]
    err = await error(
        api("environments", method="POST", body=json.dumps({"source": "demo", "name": "x", "dry_run": True})),
        400,
    )
    assert "a clone needs no plan" in err["message"]
    tasks = await body(await api("tasks"))
    assert tasks["tasks"] == []


async def test_publish_list_and_unpublish(api, tmp_path):
    assert (await body(await api("environments")))["sharing"] is True
    assert (await clone(api, "mine"))["state"] == "succeeded"
    resp = await api(
        "environments",
        "mine",
        "publish",
        method="POST",
        body=json.dumps({"description": "for the team", "name": "team-env"}),
    )
    assert resp.code == 202
    task = await wait_task(api, (await body(resp))["id"])
    assert task["state"] == "succeeded" and task["kind"] == "publish", task
    shared = task["result"]["environment"]
    assert (shared["name"], shared["kind"], shared["description"], shared["can_unpublish"]) == (
        "team-env", "shared", "for the team", True,
    )  # fmt: skip
    listed = {e["name"]: e for e in (await body(await api("environments")))["environments"]}
    assert listed["team-env"]["kind"] == "shared"
    assert (await clone(api, "copy", source="team-env"))["state"] == "succeeded"
    err = await error(
        api("environments", "team-env", "packages", method="POST", body=json.dumps({"add": ["tabulate"]})),
        403,
    )
    assert "shared with the team" in err["message"]
    err = await error(
        api(
            "environments",
            "mine",
            "publish",
            method="POST",
            body=json.dumps({"description": "again", "name": "team-env"}),
        ),
        409,
    )
    assert "already shared" in err["message"]
    err = await error(
        api("environments", "mine", "publish", method="POST", body=json.dumps({"description": "two\nlines"})),
        400,
    )

    gone = await body(await api("environments", "team-env", method="DELETE"))
    assert gone["name"] == "team-env"
    assert "team-env" not in {e["name"] for e in (await body(await api("environments")))["environments"]}
    assert not (tmp_path / "team" / "team-env").exists()


@pytest.fixture
def fifos(jp_root_dir):
    """``fifos(n)``: n named pipes under the server's root, each unblocked at the end (opened for writing
    without waiting), so that a reader stuck on one (the bug these tests guard against) lets go."""
    made: list = []

    def make(n: int) -> list[str]:
        for i in range(n):
            path = jp_root_dir / f"pipe{i}.yml"
            os.mkfifo(path)
            made.append(path)
        return [p.name for p in made]

    yield make
    for path in made:
        with contextlib.suppress(OSError):
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


async def test_a_named_pipe_is_refused_at_once_and_ties_up_no_worker(api, jp_root_dir, fifos):
    """More pipes than the default pool has threads (32 at most): each is a 400 at once, and the server
    still reads files afterwards. Each open() of a pipe used to wait for a writer for ever, holding a
    worker of the default pool; seven of them stopped history, export and clone until a restart."""
    (jp_root_dir / "bad.yml").write_text("dependencies:\n  - 'numpy; rm'\n")
    for name in fifos(40):
        call = api("environments", method="POST", body=json.dumps({"from_file": name, "name": "x"}))
        err = await asyncio.wait_for(error(call, 400), 30)
        assert err["reason"] == "not_a_regular_file", err
        assert f"'{name}' is a named pipe (FIFO), not a regular file" in err["message"]
    # The default pool's threads are free: a regular file is read (and refused for its content).
    call = api("environments", method="POST", body=json.dumps({"from_file": "bad.yml", "name": "x"}))
    assert "bad.yml, dependency 1" in (await asyncio.wait_for(error(call, 400), 30))["message"]


def _expanding_aliases(names: int, copies: int) -> str:
    """A small file whose aliases stand for names x copies requirements."""
    listed = ", ".join(f"p{i}" for i in range(names))
    return f"x: &p [{listed}]\ndependencies:\n" + "".join("  - pip: *p\n" for _ in range(copies))


async def test_yaml_aliases_and_deep_nesting_are_400s_that_say_why(api, jp_root_dir):
    (jp_root_dir / "laughs.yml").write_text(_expanding_aliases(900, 900))
    assert (jp_root_dir / "laughs.yml").stat().st_size < 16 << 10
    (jp_root_dir / "deep.yml").write_text("dependencies:\n  - " + "[" * 1000 + "]" * 1000 + "\n")
    for name, says in (("laughs.yml", "aliases"), ("deep.yml", "nested deeper than")):
        call = api("environments", method="POST", body=json.dumps({"from_file": name, "name": "x"}))
        err = await asyncio.wait_for(error(call, 400), 30)
        assert err["reason"] == "invalid_file" and says in err["message"], err
        assert err["message"].startswith(f"{name}, ")
