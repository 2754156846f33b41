"""Environments and kernels through the REST API of a real server, on the real demo environment."""

import asyncio
import json
import os

import pytest
from helpers import body, clone, error, run_code, start_session, wait_task
from tornado.httpclient import HTTPClientError


@pytest.fixture
def user_envs(tmp_path):
    return tmp_path / "user-envs"


@pytest.fixture
def jp_server_config(jp_server_config, demo_app_config, user_envs, tmp_path):
    return {
        **jp_server_config,
        "GpuEnvApp": {
            **demo_app_config,
            "user_env_dir": str(user_envs),
            "image_dir": str(tmp_path / "images"),
        },
    }


async def test_lists_the_managed_environment_with_details(api, demo):
    envs = (await body(await api("environments")))["environments"]
    managed = next(e for e in envs if e["name"] == "demo")
    assert managed["kind"] == "managed"
    assert managed["prefix"] == str(demo.env)
    assert managed["has_ipykernel"] is True
    assert managed["python_version"].startswith("3.")
    detail = await body(await api("environments", "demo"))
    names = {p["name"]: p["kind"] for p in detail["packages"]}
    assert names["ipykernel"] == "conda"
    assert names["six"] == "pypi"  # installed with pip into the managed env: untracked by conda
    assert len(detail["packages"]) == managed["package_count"]


async def test_clone_register_kernel_and_run_in_the_clone(api, jp_fetch, jp_serverapp, user_envs, demo):
    task = await clone(api, "mine")
    assert task["state"] == "succeeded", task
    clone_prefix = user_envs / "mine"
    env = task["result"]["environment"]
    assert env["kind"] == "own" and env["source_name"] == "demo" and env["prefix"] == str(clone_prefix)
    # Packages are hard-linked from the package cache, not copied.
    src, dst = demo.env / "bin" / "python3", clone_prefix / "bin" / "python3"
    real = os.path.realpath(dst)
    assert os.stat(real).st_nlink > 1
    assert os.stat(os.path.realpath(src)).st_ino == os.stat(real).st_ino
    # The pip-installed package (untracked by conda) came along.
    assert any((clone_prefix / "lib").glob("python3*/site-packages/six.py"))

    resp = await api("environments", "mine", "kernel", method="POST", body=json.dumps({}))
    assert resp.code == 201
    kernel = await body(resp)
    specs = await body(await jp_fetch("api", "kernelspecs"))
    assert kernel["kernel_name"] in specs["kernelspecs"]

    code = "import sys, six, os; print(sys.prefix, os.environ['CONDA_PREFIX'])"
    out = await run_code(jp_fetch, jp_serverapp, kernel["kernel_name"], code)
    assert out.split() == [str(clone_prefix), str(clone_prefix)]

    listed = next(e for e in (await body(await api("environments")))["environments"] if e["name"] == "mine")
    assert listed["kernel_name"] == kernel["kernel_name"]

    deleted = await body(await api("environments", "mine", method="DELETE"))
    assert deleted["kernel_removed"] == kernel["kernel_name"]
    assert not clone_prefix.exists()
    specs = await body(await jp_fetch("api", "kernelspecs"))
    assert kernel["kernel_name"] not in specs["kernelspecs"]


@pytest.mark.parametrize(
    "name", ["../x", "/abs", "", "bad\x07name", "x" * 65, ".hidden", "-dash", "with space"]
)
async def test_bad_names_are_400_and_create_nothing(env_dir_entries, api, user_envs, name):
    err = await error(
        api("environments", method="POST", body=json.dumps({"source": "demo", "name": name})), 400
    )
    assert "name" in err["message"]
    assert env_dir_entries(user_envs) == []


async def test_unknown_source_is_404_and_taken_name_is_409(api):
    err = await error(
        api("environments", method="POST", body=json.dumps({"source": "nope", "name": "a"})), 404
    )
    assert "nope" in err["message"]
    err = await error(
        api("environments", method="POST", body=json.dumps({"source": "demo", "name": "demo"})), 409
    )
    assert "demo" in err["message"]


async def test_managed_environments_are_read_only(api, demo):
    err = await error(api("environments", "demo", method="DELETE"), 403)
    assert "Clone it" in err["message"]
    err = await error(
        api("environments", "demo", "packages", method="POST", body=json.dumps({"add": ["tabulate"]})), 403
    )
    assert err["reason"] == "managed_env"
    assert (demo.env / "conda-meta").is_dir()


async def test_cancelled_clone_leaves_nothing(env_dir_entries, api, user_envs):
    resp = await api("environments", method="POST", body=json.dumps({"source": "demo", "name": "halfway"}))
    task_id = (await body(resp))["id"]
    cancelled = await body(await api("tasks", task_id, method="DELETE"))
    assert cancelled["state"] == "cancelled"
    names = env_dir_entries(user_envs)
    assert names == [], names
    envs = (await body(await api("environments")))["environments"]
    assert "halfway" not in {e["name"] for e in envs}


async def test_customise_export_and_kernel_without_ipykernel(api, user_envs):
    assert (await clone(api, "custom"))["state"] == "succeeded"
    planned = json.dumps({"remove": ["ipykernel"], "dry_run": True})
    resp = await api("environments", "custom", "packages", method="POST", body=planned)
    assert resp.code == 202
    task = await wait_task(api, (await body(resp))["id"])
    assert task["state"] == "succeeded" and task["kind"] == "plan", task
    plan = task["result"]
    assert plan["runs_notebooks"] is False and "no longer run notebooks" in plan["warnings"][0]
    assert {"name": "ipykernel", "kind": "conda", "action": "remove"}.items() <= plan["changes"][0].items()
    detail = await body(await api("environments", "custom"))
    assert detail["has_ipykernel"]  # the plan changed nothing
    resp = await api(
        "environments", "custom", "packages", method="POST", body=json.dumps({"remove": ["ipykernel"]})
    )
    assert resp.code == 202
    task = await wait_task(api, (await body(resp))["id"])
    assert task["state"] == "succeeded", task
    assert any(r.startswith("ipykernel-") for r in task["result"]["report"]["removed"])
    err = await error(api("environments", "custom", "kernel", method="POST", body=b"{}"), 409)
    assert "ipykernel" in err["message"] and "add" in err["message"]

    resp = await api(
        "environments", "custom", "packages", method="POST", body=json.dumps({"add": ["tabulate"]})
    )
    task = await wait_task(api, (await body(resp))["id"])
    assert task["state"] == "succeeded", task
    detail = await body(await api("environments", "custom"))
    assert "tabulate" in {p["name"] for p in detail["packages"]}

    resp = await api(
        "environments", "custom", "packages", method="POST", body=json.dumps({"add": ["no-such-pkg"]})
    )
    task = await wait_task(api, (await body(resp))["id"])
    assert task["state"] == "failed" and "no-such-pkg" in task["message"]

    history = await body(await api("environments", "custom", "history"))
    assert [c["summary"] for c in history["changes"]] == ["+tabulate", "−ipykernel"]
    assert history["undo"].startswith("Undo the last change (+tabulate)")
    resp = await api("environments", "custom", "undo", method="POST", body=b"")
    assert resp.code == 202 and resp.headers["Location"].endswith((await body(resp))["id"])
    task = await wait_task(api, (await body(resp))["id"])
    assert task["state"] == "succeeded" and task["kind"] == "undo", task
    detail = await body(await api("environments", "custom"))
    assert "tabulate" not in {p["name"] for p in detail["packages"]}
    redo = await api("environments", "custom", "undo", method="POST", body=b"")  # for what follows
    assert (await wait_task(api, (await body(redo))["id"]))["state"] == "succeeded"

    yml = await body(await api("environments", "custom", "export", params={"format": "yaml"}))
    assert yml["filename"].endswith(".yml") and "tabulate" in yml["content"]
    explicit = await body(await api("environments", "custom", "export", params={"format": "explicit"}))
    assert explicit["content"].startswith("@EXPLICIT") or "@EXPLICIT" in explicit["content"]
    await error(api("environments", "custom", "export", params={"format": "zip"}), 400)


async def test_unknown_environment_is_404(api):
    await error(api("environments", "ghost"), 404)
    await error(api("environments", "ghost", "kernel", method="POST", body=b"{}"), 404)


async def test_gpu_check_runs_in_the_environment(api, demo):
    resp = await api("environments", "demo", "gpu-check", method="POST", body=b"{}")
    assert resp.code == 202
    task = await wait_task(api, (await body(resp))["id"])
    assert task["state"] == "succeeded", task
    check = task["result"]
    assert check["details"]["prefix"] == str(demo.env)  # it ran with the environment's own Python
    # The verdict follows what the environment saw, on a machine with a GPU or without one.
    assert check["details"]["framework"] is None  # the demo environment has neither torch nor cupy
    driver = check["details"]["driver"]
    if not driver["loaded"]:
        assert check["ok"] is False and "libcuda" in check["message"]
    elif driver["count"]:
        assert check["ok"] is True and all(name in check["message"] for name in driver["names"])
    else:
        assert check["ok"] is False and "no device is visible" in check["message"]
    if not os.path.exists("/proc/driver/nvidia/version"):
        assert check["ok"] is False
        assert "libcuda" in check["message"] or "driver" in check["message"]


async def test_twenty_concurrent_clones_to_one_name_give_one_202_and_nineteen_409s(api, user_envs):
    async def attempt():
        try:
            resp = await api(
                "environments", method="POST", body=json.dumps({"source": "demo", "name": "race"})
            )
        except HTTPClientError as e:
            return e.code, json.loads(e.response.body)
        return resp.code, await body(resp)

    answers = await asyncio.gather(*(attempt() for _ in range(20)))
    codes = sorted(code for code, _ in answers)
    assert codes == [202] + [409] * 19, codes
    (task,) = [b for code, b in answers if code == 202]
    refusals = {b["reason"] for code, b in answers if code == 409}
    assert refusals <= {"busy", "env_exists"}, refusals
    assert (await wait_task(api, task["id"]))["state"] == "succeeded"
    assert [e["name"] for e in (await body(await api("environments")))["environments"]].count("race") == 1


async def test_deleting_an_environment_whose_kernels_run_is_409_naming_them(api, jp_fetch, user_envs):
    assert (await clone(api, "inuse"))["state"] == "succeeded"
    kernel = await body(await api("environments", "inuse", "kernel", method="POST", body=b"{}"))
    kernel_id = await start_session(jp_fetch, kernel["kernel_name"], "analysis.ipynb")
    refused = await error(api("environments", "inuse", method="DELETE"), 409)
    assert refused["reason"] == "kernels_running" and "analysis.ipynb" in refused["message"]
    assert refused["details"] == [
        {"kernel_id": kernel_id, "name": kernel["kernel_name"], "notebook_path": "analysis.ipynb"}
    ]
    assert (user_envs / "inuse").is_dir()  # nothing was touched
    deleted = await body(
        await api("environments", "inuse", method="DELETE", params={"shutdown_kernels": "true"})
    )
    assert deleted["kernel_removed"] == kernel["kernel_name"]
    running = {k["id"] for k in await body(await jp_fetch("api", "kernels"))}
    assert kernel_id not in running and not (user_envs / "inuse").exists()


async def test_package_search(api):
    found = await body(await api("packages", params={"q": "ipyk"}))
    assert [(p["name"], p["kind"]) for p in found["packages"]] == [("ipykernel", "conda")]
    assert found["packages"][0]["versions"]
    await error(api("packages", params={"q": "../x"}), 400)
    await error(api("packages"), 400)  # q is required


async def _answer(call) -> tuple[int, dict]:
    try:
        resp = await call
    except HTTPClientError as e:
        return e.code, json.loads(e.response.body)
    return resp.code, await body(resp)


async def test_an_undo_a_change_and_a_delete_at_once_one_proceeds_the_others_are_409(api, user_envs):
    """Round after round, the three sent together (each first in turn): exactly one is accepted, the
    others are refused at once as busy; nothing proceeds behind the one that runs."""
    tabulate = False  # whether the environment has it now
    for round_ in range(9):
        if not (user_envs / "race").exists():
            assert (await clone(api, "race"))["state"] == "succeeded"
            tabulate = False
        if (await body(await api("environments", "race", "history")))["undo"] is None:
            change = {"remove": ["tabulate"]} if tabulate else {"add": ["tabulate"]}
            code, task = await _answer(
                api("environments", "race", "packages", method="POST", body=json.dumps(change))
            )
            assert code == 202 and (await wait_task(api, task["id"]))["state"] == "succeeded"
            tabulate = not tabulate
        change = {"remove": ["tabulate"]} if tabulate else {"add": ["tabulate"]}
        requests = [
            ("undo", lambda: api("environments", "race", "undo", method="POST", body=b"")),
            (
                "change",
                lambda c=change: api("environments", "race", "packages", method="POST", body=json.dumps(c)),
            ),
            ("delete", lambda: api("environments", "race", method="DELETE")),
        ]
        requests = requests[round_ % 3 :] + requests[: round_ % 3]
        sent = await asyncio.gather(*(_answer(request()) for _, request in requests))
        answers = {name: answer for (name, _), answer in zip(requests, sent, strict=True)}
        accepted = [n for n, (code, _) in answers.items() if code < 300]
        assert len(accepted) == 1, answers
        refused = [b for n, (code, b) in answers.items() if n not in accepted]
        assert [b["reason"] for b in refused] == ["busy", "busy"], answers
        (won,) = accepted
        if won != "delete":
            task = await wait_task(api, answers[won][1]["id"])
            assert task["state"] == "succeeded", task
            tabulate = not tabulate
        else:
            assert not [p.name for p in user_envs.iterdir() if p.name.startswith(("race", ".race."))]
