"""Pipelines through the REST API, on a real server with the local backend and its pipelines loop."""

from __future__ import annotations

import json

import pytest
from helpers import body, error, wait_until
from pipeline_notebooks import diamond


@pytest.fixture
def jp_server_config(jp_server_config, demo_app_config):
    return {**jp_server_config, "GpuEnvApp": {**demo_app_config, "job_refresh_interval": 0.2}}


async def test_a_pipeline_is_sent_followed_by_the_server_and_listed_as_one(api, jp_root_dir):
    request = diamond(jp_root_dir)
    request["nodes"] = request["nodes"][:1] + request["nodes"][2:3]  # prepare -> check
    resp = await api("pipelines", method="POST", body=json.dumps(request))
    assert resp.code == 201
    made = await body(resp)
    assert resp.headers["Location"].endswith(f"/gpu-env/api/pipelines/{made['id']}")
    assert [(n["id"], n["kind"]) for n in made["nodes"]] == [("prepare", "job"), ("check", "job")]
    assert made["nodes"][1]["state"] == "waiting"

    async def ended():
        got = await body(await api("pipelines", made["id"]))
        return got if got["state"] in ("succeeded", "failed", "cancelled") else None

    done = await wait_until(ended, within=90, what="the server moving the pipeline on to its end")
    assert done["state"] == "succeeded" and done["counts"] == {"succeeded": 2}
    listed = await body(await api("pipelines"))
    assert [p["id"] for p in listed["items"]] == [made["id"]] and listed["total"] == 1
    alone = await body(await api("jobs", params={"pipeline": "none"}))
    assert alone["total"] == 0
    of_it = await body(await api("jobs", params={"pipeline": made["id"]}))
    assert {j["pipeline_node"] for j in of_it["items"]} == {"prepare", "check"}
    again = await body(
        await api("pipelines", made["id"], "rerun", method="POST", body=json.dumps({"from": "check"}))
    )
    assert [n["attempts"] for n in again["nodes"]] == [1, 2]
    err = await error(
        api("pipelines", made["id"], "rerun", method="POST", body=json.dumps({"from": "zz"})), 404
    )
    assert err["reason"] == "node_not_found"


async def test_refusals_are_4xx_naming_the_node(api, jp_root_dir):
    request = diamond(jp_root_dir)
    request["nodes"][1]["after"] = ["prepare", "nowhere"]
    err = await error(api("pipelines", method="POST", body=json.dumps(request)), 400)
    assert err["message"] == "Node 'train' waits for 'nowhere', which is no node of the pipeline."
    request = diamond(jp_root_dir)
    request["nodes"][2]["notebook_path"] = "gone.ipynb"
    err = await error(api("pipelines", method="POST", body=json.dumps(request)), 400)
    assert err["message"].startswith("Node 'check': There is no notebook at 'gone.ipynb'")
    assert err["reason"] == "notebook_not_found"
    request["nodes"][2]["notebook_path"] = "check.ipynb"
    request["nodes"][0]["parameters"] = {"size": "big"}
    err = await error(api("pipelines", method="POST", body=json.dumps(request)), 400)
    assert err["message"].startswith("Node 'prepare': ") and "size" in err["message"]
    request["nodes"][0]["parameters"] = {}
    request["nodes"][1]["backend"] = "slurm"
    err = await error(api("pipelines", method="POST", body=json.dumps(request)), 400)
    assert err["message"].startswith("Node 'train': Unknown backend 'slurm'")
    request["nodes"][2]["when"] = "sometimes"
    err = await error(api("pipelines", method="POST", body=json.dumps(request)), 400)
    assert "when" in err["message"]
    err = await error(
        api("pipelines", "file", method="POST", body=json.dumps({"path": "none.pipeline.yaml"})), 404
    )
    assert "no pipeline file" in err["message"]
    assert (await error(api("pipelines", "0123456789ab"), 404))["reason"] == "pipeline_not_found"
    assert (await body(await api("pipelines")))["total"] == 0
