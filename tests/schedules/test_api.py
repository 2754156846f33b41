"""Schedules through the REST API, on a real server with the local backend."""

from __future__ import annotations

import json

import pytest
from helpers import body, error, write_notebook


@pytest.fixture
def jp_server_config(jp_server_config, demo_app_config):
    return {**jp_server_config, "GpuEnvApp": {**demo_app_config, "job_refresh_interval": 0.2}}


async def test_make_read_change_run_now_and_delete_a_schedule(api, jp_root_dir):
    nb = write_notebook(jp_root_dir, "report.ipynb", ["print(n)"], parameters="n = 1")
    req = {"notebook_path": nb, "schedule": "0 6 * * 1-5", "timezone": "Europe/Rome", "parameters": {"n": 2}}
    resp = await api("schedules", method="POST", body=json.dumps(req))
    assert resp.code == 201
    made = await body(resp)
    assert resp.headers["Location"].endswith(f"/gpu-env/api/schedules/{made['id']}")
    assert (
        made["keeper"]["kind"] == "server"
        and "only while this Jupyter server runs" in made["keeper"]["message"]
    )
    assert [d["local"][11:19] for d in made["next_runs"]] == ["06:00:00"] * 3
    assert made["overlap"] == "skip" and made["active"] is True and made["parameters"] == {"n": 2}

    listed = await body(await api("schedules"))
    assert [s["id"] for s in listed["items"]] == [made["id"]]
    changed = await body(
        await api(
            "schedules",
            made["id"],
            method="PATCH",
            body=json.dumps({"active": False, "parameters": {"n": 3}}),
        )
    )
    assert changed["active"] is False and changed["next_runs"] == [] and changed["parameters"] == {"n": 3}

    resp = await api("schedules", made["id"], "run", method="POST", body="")
    assert resp.code == 201
    job = await body(resp)
    assert job["schedule_id"] == made["id"] and job["parameters"] == {"n": 3}
    runs = await body(await api("jobs", params={"schedule": made["id"]}))
    assert [j["id"] for j in runs["items"]] == [job["id"]]
    shown = await body(await api("schedules", made["id"]))
    assert shown["last_runs"][0]["job_id"] == job["id"] and shown["last_runs"][0]["outcome"] == "started"

    preview = await body(
        await api("schedules", "preview", params={"schedule": "@daily", "timezone": "Asia/Tokyo"})
    )
    assert preview["description"] and preview["next_runs"][0]["local"].endswith("+09:00")

    resp = await api("schedules", made["id"], method="DELETE")
    assert resp.code == 204
    assert (await error(api("schedules", made["id"]), 404))["reason"] == "schedule_not_found"


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"schedule": "61 * * * *"}, "minute 61"),
        ({"schedule": "R/not-a-date/PT1H"}, "not-a-date"),
        ({"schedule": "R/2030-01-01T00:00:00Z/PT30S"}, "60"),
        ({"timezone": "Mars/Olympus_Mons"}, "Mars/Olympus_Mons"),
        ({"overlap": "sometimes"}, "overlap"),
        ({"schedule": ""}, "schedule"),
    ],
)
async def test_bad_schedules_are_400s_saying_what_is_wrong(api, jp_root_dir, change, words):
    nb = write_notebook(jp_root_dir, "bad.ipynb", ["print(1)"])
    req = {"notebook_path": nb, "schedule": "0 6 * * *", **change}
    err = await error(api("schedules", method="POST", body=json.dumps(req)), 400)
    assert words in err["message"]
    assert (await body(await api("schedules")))["items"] == []
    if "overlap" not in change:  # the preview checks the expression and the zone alike
        params = {"schedule": req["schedule"], "timezone": req.get("timezone", "UTC")}
        err = await error(api("schedules", "preview", params=params), 400)
        assert words in err["message"] or not req["schedule"]


async def test_a_missing_notebook_or_backend_is_refused_before_anything_is_made(api, jp_root_dir):
    err = await error(
        api(
            "schedules",
            method="POST",
            body=json.dumps({"notebook_path": "nope.ipynb", "schedule": "@hourly"}),
        ),
        404,
    )
    assert "nope.ipynb" in err["message"]
    nb = write_notebook(jp_root_dir, "ok.ipynb", ["print(1)"])
    req = {"notebook_path": nb, "schedule": "@hourly", "backend": "htcondor"}
    assert (await error(api("schedules", method="POST", body=json.dumps(req)), 404))[
        "reason"
    ] == "unknown_backend"
    assert (await body(await api("schedules")))["items"] == []


async def test_a_scheduled_sweep_run_now_is_a_sweep_where_its_location_says(api, jp_root_dir):
    nb = write_notebook(jp_root_dir, "grid.ipynb", ["print(lr)"], parameters="lr = 0.1")
    req = {"notebook_path": nb, "schedule": "@daily", "sweep": {"lr": [0.5, 0.25]}, "name": "grid"}
    made = await body(await api("schedules", method="POST", body=json.dumps(req)))
    resp = await api("schedules", made["id"], "run", method="POST", body="")
    assert resp.code == 201
    sweep = await body(resp)
    assert resp.headers["Location"].endswith(
        f"/gpu-env/api/sweeps/{sweep['id']}"
    )  # not the older jobs/groups
    assert (await body(await api("sweeps", sweep["id"])))["size"] == 2
    await api("sweeps", sweep["id"], "cancel", method="POST", body="")
