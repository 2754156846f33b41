"""Send to batch through the REST API: papermill runs a notebook in a real conda environment."""

import json

import pytest
from helpers import body, error, printed, wait_job, wait_until, write_notebook


@pytest.fixture
def jp_server_config(jp_server_config, demo_app_config):
    return {
        **jp_server_config,
        "GpuEnvApp": {**demo_app_config, "job_refresh_interval": 0.2},
        "LocalBackend": {"kill_grace": 3.0},
    }


ALPHA = "alpha = 1"  # the parameters cell of these tests' notebooks


async def test_notebook_runs_in_the_environment_with_parameters(api, jp_root_dir, demo):
    path = write_notebook(
        jp_root_dir, "train.ipynb", ["import sys\nprint('alpha is', alpha * 2, sys.prefix)"], parameters=ALPHA
    )
    req = {"notebook_path": path, "environment": "demo", "parameters": {"alpha": 21}, "name": "train"}
    resp = await api("jobs", method="POST", body=json.dumps(req))
    assert resp.code == 201
    job = await body(resp)
    assert resp.headers["Location"].endswith(f"/gpu-env/api/jobs/{job['id']}")
    # Editing the notebook after submission does not change the job: it runs the snapshot.
    write_notebook(
        jp_root_dir, "train.ipynb", ["raise SystemExit('edited after submission')"], parameters=ALPHA
    )
    done = await wait_job(api, job["id"])
    assert done["state"] == "succeeded", done
    assert done["progress"]["cells_done"] == done["progress"]["cells_total"] > 0
    assert f"alpha is 42 {demo.env}" in printed(jp_root_dir / done["output_path"])
    log = await body(await api("jobs", job["id"], "log"))
    assert log["eof"] is True and log["next_offset"] > 0

    listed = await body(await api("jobs", params={"state": "succeeded"}))
    assert [j["id"] for j in listed["items"]] == [job["id"]]
    usage = await body(await api("jobs", "usage"))
    assert usage["backends"] or usage


async def test_failing_and_cancelled_jobs(api, jp_root_dir):
    bad = write_notebook(jp_root_dir, "bad.ipynb", ["1 / 0"], parameters=ALPHA)
    job = await body(await api("jobs", method="POST", body=json.dumps({"notebook_path": bad})))
    done = await wait_job(api, job["id"])
    assert done["state"] == "failed" and "ZeroDivisionError" in done["message"]

    slow = write_notebook(jp_root_dir, "slow.ipynb", ["import time\ntime.sleep(120)"], parameters=ALPHA)
    job = await body(await api("jobs", method="POST", body=json.dumps({"notebook_path": slow})))

    async def running():
        return (await body(await api("jobs", job["id"])))["state"] == "running"

    await wait_until(running, within=30, every=0.1, what="the job running")
    cancelled = await body(await api("jobs", job["id"], "cancel", method="POST", body=b"{}"))
    assert cancelled["state"] in ("cancelled", "running")
    assert (await wait_job(api, job["id"], timeout=30))["state"] == "cancelled"
    await error(api("jobs", job["id"], "cancel", method="POST", body=b"{}"), 409)
    resp = await api("jobs", job["id"], method="DELETE")
    assert resp.code == 204
    await error(api("jobs", job["id"]), 404)


@pytest.mark.parametrize(
    ("change", "status", "word"),
    [
        ({"notebook_path": "missing.ipynb"}, 404, "missing.ipynb"),
        ({"notebook_path": "notes.txt"}, 400, "notebook"),
        ({"notebook_path": "../outside.ipynb"}, 403, "outside"),
        ({"backend": "moon"}, 404, "moon"),
        ({"kernel": "no-such-kernel"}, 404, "no-such-kernel"),
        ({"environment": "no-such-env"}, 404, "no-such-env"),
        ({"parameters": {"beta": 1}}, 409, "beta"),
        ({"parameters": {"alpha": "abc"}}, 409, "'alpha' must be a whole number"),
        ({"resources": {"cpus": -1}}, 400, "cpus"),
        ({"resources": {"gpus": 10000}}, 400, "gpus"),
        ({"resources": {"memory": "999P"}}, 400, "memory"),
        ({"resources": {"gpus": 1, "mig_profile": "1g.10gb"}}, 400, "mig"),
    ],
)
async def test_bad_submissions_are_refused_and_record_nothing(api, jp_root_dir, change, status, word):
    write_notebook(jp_root_dir, "ok.ipynb", ["print(alpha)"], parameters=ALPHA)
    (jp_root_dir / "notes.txt").write_text("not a notebook")
    before = (await body(await api("jobs")))["total"]
    err = await error(
        api("jobs", method="POST", body=json.dumps({"notebook_path": "ok.ipynb", **change})), status
    )
    assert word.lower() in err["message"].lower(), err["message"]
    assert (await body(await api("jobs")))["total"] == before


async def test_backends_describe_the_local_runner(api):
    backends = (await body(await api("backends")))["backends"]
    local = next(b for b in backends if b["name"] == "local")
    assert local["kind"] == "local"


async def test_deleting_a_job_keeps_what_it_used_in_the_accounts(api, jp_root_dir):
    path = write_notebook(jp_root_dir, "used.ipynb", ["import time\ntime.sleep(1.5)"], parameters=ALPHA)
    job = await body(await api("jobs", method="POST", body=json.dumps({"notebook_path": path})))
    assert (await wait_job(api, job["id"]))["state"] == "succeeded"
    before = (await body(await api("jobs", "usage")))["total"]
    assert before["cpu_hours"] > 1 / 3600 and before["jobs"] == {"succeeded": 1}
    assert (await api("jobs", job["id"], method="DELETE")).code == 204
    await error(api("jobs", job["id"]), 404)
    assert (await body(await api("jobs")))["total"] == 0
    after = (await body(await api("jobs", "usage")))["total"]
    assert after == before


async def test_the_log_reads_cleanly(api, jp_root_dir):
    code = "import sys\nfor i in range(3):\n    print('line', i, flush=True)\nprint('oops', file=sys.stderr)"
    path = write_notebook(jp_root_dir, "talk.ipynb", [code, "6 * 7"], parameters=ALPHA)
    job = await body(await api("jobs", method="POST", body=json.dumps({"notebook_path": path})))
    assert (await wait_job(api, job["id"]))["state"] == "succeeded"
    text = (await body(await api("jobs", job["id"], "log")))["text"]
    lines = text.splitlines()
    assert "" not in lines, text  # no blank line after each output
    assert "line 0" in text and "line 2" in text and "oops" in text and "42" in text
    assert "without encryption" not in text  # the kernel's own start-up warnings are not the notebook's
    assert not [ln for ln in lines if "WARNING" in ln and not ln.startswith(("[kernel]", "["))]


async def test_large_parameters_are_bounded_and_left_out_of_listings(api, jp_root_dir):
    path = write_notebook(jp_root_dir, "big.ipynb", ["print(len(alpha))"], parameters="alpha = 'x'")
    too_big = {"notebook_path": path, "parameters": {"alpha": "x" * (65 << 10)}}
    refused = await error(api("jobs", method="POST", body=json.dumps(too_big)), 413)
    assert "at most 65536" in refused["message"]
    large = {"notebook_path": path, "parameters": {"alpha": "x" * 10_000}}
    job = await body(await api("jobs", method="POST", body=json.dumps(large)))
    assert job["parameters"] == large["parameters"]
    listed = (await body(await api("jobs")))["items"][0]
    assert listed["id"] == job["id"] and listed["parameters"] == {} and listed["parameters_omitted"] is True
    assert (await body(await api("jobs", job["id"])))["parameters"] == large["parameters"]
    await wait_job(api, job["id"])


async def test_a_notebooks_parameters_as_the_server_reads_them(api, jp_root_dir):
    cell = "alpha = 1  # how much\nrate: float = 0.5\nname = 'adam'\nlayers = [64, 32]\nseed = None\nfrom_env = len('x')"
    write_notebook(jp_root_dir, "params.ipynb", ["print(alpha)"], parameters=cell)
    got = await body(await api("notebooks", "parameters", params={"path": "params.ipynb"}))
    assert got["inspectable"] is True and got["kernel"] == "python3" and got["cell_index"] == 0
    by_name = {p["name"]: p for p in got["parameters"]}
    assert list(by_name) == ["alpha", "rate", "name", "layers", "seed", "from_env"]
    assert by_name["alpha"] == {
        "name": "alpha", "kind": "int", "default": 1, "default_text": "1", "annotation": None, "help": "how much"
    }  # fmt: skip
    assert (by_name["rate"]["kind"], by_name["rate"]["annotation"]) == ("float", "float")
    assert (by_name["name"]["kind"], by_name["name"]["default"]) == ("str", "adam")
    assert (by_name["layers"]["kind"], by_name["layers"]["default"]) == ("literal", [64, 32])
    assert (by_name["seed"]["kind"], by_name["seed"]["default"]) == ("literal", None)
    assert (by_name["from_env"]["kind"], by_name["from_env"]["default_text"]) == ("literal", "len('x')")
    plain = write_notebook(jp_root_dir, "plain.ipynb", ["print(1)"], parameters="x = 1")
    (jp_root_dir / plain).write_text((jp_root_dir / plain).read_text().replace('"parameters"', '"other"'))
    none = await body(await api("notebooks", "parameters", params={"path": plain}))
    assert none["cell_index"] is None and none["parameters"] == []
    await error(api("notebooks", "parameters", params={"path": "missing.ipynb"}), 404)
    await error(api("notebooks", "parameters", params={"path": "../outside.ipynb"}), 403)
    await error(api("notebooks", "parameters"), 400)
