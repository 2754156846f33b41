"""Sweeps and reruns through the REST API of a real server (local backend, real papermill)."""

from __future__ import annotations

import csv
import io
import json

import pytest
from helpers import body, error, wait_job, wait_until, write_notebook


@pytest.fixture
def jp_server_config(jp_server_config, demo_app_config):
    return {
        **jp_server_config,
        "GpuEnvApp": {
            **demo_app_config,
            "job_refresh_interval": 0.2,
            "max_sweep_runs": 4,
            "sweep_result_value_bytes": 1000,
        },
    }


def _notebook(root) -> str:
    return write_notebook(root, "sq.ipynb", [], parameters="alpha = 1", results="{'square': alpha ** 2}")


async def test_sweep_results_and_rerun(api, jp_root_dir):
    path = _notebook(jp_root_dir)
    resp = await api(
        "jobs", method="POST", body=json.dumps({"notebook_path": path, "sweep": {"alpha": [2, 3]}})
    )
    assert resp.code == 201
    group = await body(resp)
    assert resp.headers["Location"].endswith(f"/gpu-env/api/sweeps/{group['id']}")
    assert group["size"] == 2 and group["varied"] == ["alpha"]

    async def ended():
        g = await body(await api("sweeps", group["id"]))
        return g if g["state"] not in ("queued", "running") else None

    group = await wait_until(ended, within=90, every=0.2, what="the sweep ending")
    assert group["state"] == "succeeded" and group["counts"]["succeeded"] == 2
    runs = (await body(await api("jobs", params={"group": group["id"]})))["items"]
    assert [r["parameters"] for r in runs] == [{"alpha": 2}, {"alpha": 3}]

    table = await body(await api("sweeps", group["id"], "results"))
    assert [(r["parameters"], r["values"]) for r in table["rows"]] == [
        ({"alpha": 2}, {"square": 4}),
        ({"alpha": 3}, {"square": 9}),
    ]
    resp = await api("sweeps", group["id"], "results", params={"format": "csv"})
    assert resp.headers["Content-Type"].startswith("text/csv")
    # named after the sweep (its notebook's name here), not by its id alone
    disposition = resp.headers["Content-Disposition"]
    assert disposition == f'attachment; filename="{group["name"].lower()}-{group["id"]}.csv"', disposition
    assert resp.body.decode().splitlines()[1].startswith("1,2,4,succeeded,")

    # "Run again": one run again, a value changed; a new run of the sweep, after its runs.
    resp = await api(
        "jobs", runs[1]["id"], "rerun", method="POST", body=json.dumps({"parameters": {"alpha": 5}})
    )
    assert resp.code == 201
    again = await wait_job(api, (await body(resp))["id"])
    assert again["state"] == "succeeded" and again["parameters"] == {"alpha": 5}
    assert (again["group_id"], again["group_index"]) == (group["id"], 2)
    assert again["name"] == "sq [alpha=5]"  # named after its own values, not the run's it came from

    # A listing of sweeps beside the jobs that are no sweep's run: the sweep once, not its runs.
    groups = (await body(await api("sweeps")))["items"]
    assert [(g["id"], g["counts"]["succeeded"], g["size"]) for g in groups] == [(group["id"], 3, 3)]
    alone = (await body(await api("jobs", params={"group": "none"})))["items"]
    assert alone == []
    table = await body(await api("sweeps", group["id"], "results"))
    assert [(r["index"], r["values"]) for r in table["rows"]][-1] == (2, {"square": 25})
    # what "Run again…" edits: the snapshot's parameters cell
    declared = await body(await api("jobs", again["id"], "parameters"))
    assert [(p["name"], p["kind"]) for p in declared["parameters"]] == [("alpha", "int")]
    await error(api("jobs", "0123456789ab", "parameters"), 404)
    await error(
        api("jobs", again["id"], "rerun", method="POST", body=json.dumps({"kernel": "a", "image": "b"})), 400
    )

    series = await body(await api("jobs", again["id"], "gpu"))
    assert series["points"] == [] and series["summary"]["available"] is False  # no GPU on this machine
    assert series["summary"]["reason"]

    err = await error(api("sweeps", group["id"], "rerun", method="POST", body=b"{}"), 409)
    assert "No run of sweep" in err["message"]
    await error(api("sweeps", "0123456789ab"), 404)
    await error(api("jobs", params={"group": "0123456789ab"}), 404)


async def test_sweeps_beyond_the_limit_or_ill_typed_are_refused_whole(api, jp_root_dir):
    path = _notebook(jp_root_dir)
    err = await error(
        api(
            "jobs",
            method="POST",
            body=json.dumps({"notebook_path": path, "sweep": {"alpha": [1, 2, 3, 4, 5]}}),
        ),
        409,
    )
    assert "5 runs; at most 4" in err["message"]
    err = await error(
        api("jobs", method="POST", body=json.dumps({"notebook_path": path, "sweep": {"alpha": [1, "x"]}})),
        409,
    )
    assert "Run 2 of the sweep (alpha=x)" in err["message"]
    err = await error(
        api("jobs", method="POST", body=json.dumps({"notebook_path": path, "max_concurrent": 2})), 400
    )
    assert "max_concurrent applies to a sweep" in err["message"]
    assert (await body(await api("jobs")))["total"] == 0
    # What the submit dialog shows beside the GPU choice: the local backend cannot tell, and says so.
    capacity = await body(await api("backends", "local", "capacity"))
    assert capacity["available"] is False and "has no GPU to hand out" in capacity["message"]
    await error(api("backends", "nowhere", "capacity"), 404)
    assert (await body(await api("backends")))["gpu_idle_seconds"] == 600


async def test_results_are_bounded_and_their_csv_runs_nothing_in_a_spreadsheet(api, jp_root_dir):
    """Runs that record 300 KB each answer a few KB: each large value cut, saying so and where the whole is.
    (Through the older paths, `jobs/groups/...`, which are still served.)"""
    path = write_notebook(
        jp_root_dir, "big.ipynb", [], parameters="alpha = 1",
        results="{'square': alpha ** 2, 'big': str(alpha) * 300_000, 'formula': '=1+1', 'after': -alpha}",
    )  # fmt: skip
    resp = await api(
        "jobs", method="POST", body=json.dumps({"notebook_path": path, "sweep": {"alpha": [2, 3]}})
    )
    group = await body(resp)

    async def ended():
        g = await body(await api("jobs", "groups", group["id"]))
        return g if g["state"] not in ("queued", "running") else None

    assert (await wait_until(ended, within=90, every=0.2, what="the sweep ending"))["state"] == "succeeded"
    resp = await api("jobs", "groups", group["id"], "results")
    assert len(resp.body) < 10_000
    table = json.loads(resp.body)
    assert table["cut"] is True
    for row, alpha in zip(table["rows"], (2, 3), strict=True):
        assert row["values"] == {
            "square": alpha**2,
            "big": str(alpha) * 1000,
            "formula": "=1+1",
            "after": -alpha,
        }
        assert row["cut"] == ["big"]
        assert "sweep_result_value_bytes" in row["note"] and row["output_path"] in row["note"]

    resp = await api("jobs", "groups", group["id"], "results", params={"format": "csv"})
    assert len(resp.body) < 10_000
    header, first, _ = list(csv.reader(io.StringIO(resp.body.decode())))
    cells = dict(zip(header, first, strict=True))
    assert (cells["formula"], cells["after"], cells["big"]) == ("'=1+1", "-2", "2" * 1000)
    assert "sweep_result_value_bytes" in cells["note"]
