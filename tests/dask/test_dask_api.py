"""Dask clusters through the REST API and the dashboard through this server, on a real server whose
local backend runs real schedulers and workers."""

from __future__ import annotations

import json
import re

import pytest
from helpers import body, error, wait_until
from tornado.httpclient import HTTPClientError


@pytest.fixture
def jp_server_config(jp_server_config):
    return {
        **jp_server_config,
        "GpuEnvApp": {"gpu_sample_interval": 0.5, "job_refresh_interval": 0.2, "job_dir": "jobs"},
    }


async def test_a_cluster_through_the_api_with_its_dashboard(api, jp_fetch, jp_ws_fetch, jp_base_url):
    request = {"kernel": "python3", "workers": 1, "resources": {"time_limit": "0:10:00"}}
    resp = await api("dask/clusters", method="POST", body=json.dumps(request))
    assert resp.code == 201
    made = await body(resp)
    assert made["walltime_seconds"] == 600  # a worker's time limit is said as a job's is
    assert resp.headers["Location"].endswith(f"/gpu-env/api/dask/clusters/{made['id']}")
    assert made["state"] == "starting" and made["workers"]["requested"] == 1, made["message"]

    async def running():
        got = await body(await api("dask/clusters", made["id"]))
        return got if got["state"] == "running" and got["workers"]["running"] == 1 else None

    up = await wait_until(running, within=60, what="the cluster running with its worker")
    assert up["dashboard"] == f"{jp_base_url}gpu-env/dask/{made['id']}/status"
    # the scheduler speaks TLS only; the dashboard answers only this server's proxy, which holds the
    # cluster's certificate (tests/dask/test_dask_local.py shows another user refused at its port)
    assert up["scheduler_address"].startswith("tls://127.0.0.1:")
    assert up["tls"]["key_file"].endswith("/tls/cluster.key") and "connect(" in up["client_code"]
    listed = await body(await api("dask/clusters"))
    assert [c["id"] for c in listed["items"]] == [made["id"]] and listed["total"] == 1

    # the dashboard's page through this server, its relative links kept behind it
    page = await jp_fetch("gpu-env", "dask", made["id"], "status")
    html = page.body.decode()
    assert page.code == 200 and "bokeh" in html and 'src="static/js/bokeh.min.js' in html
    script = re.search(r'src="(static/js/bokeh\.min\.js[^"]*)"', html)
    assert script is not None
    static = await jp_fetch("gpu-env", "dask", made["id"], script.group(1).split("?")[0])
    assert static.code == 200 and len(static.body) > 100_000
    with pytest.raises(HTTPClientError) as e:  # its root redirects to its status page, here
        await jp_fetch("gpu-env", "dask", made["id"], "", follow_redirects=False)
    assert e.value.code in (301, 302)
    assert e.value.response.headers["Location"] == f"{jp_base_url}gpu-env/dask/{made['id']}/status"

    # its live plots' websocket, relayed both ways with Bokeh's session token as the subprotocol
    token = re.search(r'"token":"([^"]+)"', html)
    assert token is not None
    ws = await jp_ws_fetch(
        "gpu-env", "dask", made["id"], "status", "ws", subprotocols=["bokeh", token.group(1)]
    )
    first = await ws.read_message()
    assert first is not None and "ACK" in str(first)
    ws.close()

    # scaled, then shut down: stopping at once, stopped once nothing is left
    scaled = await body(
        await api(
            "dask/clusters", made["id"], "scale", method="POST", body=json.dumps({"adapt": {"maximum": 2}})
        )
    )
    assert scaled["adapt"] == {"minimum": 0, "maximum": 2}
    gone = await body(await api("dask/clusters", made["id"], "cancel", method="POST", body=b""))
    assert gone["state"] in ("stopping", "stopped")

    async def stopped():
        got = await body(await api("dask/clusters", made["id"]))
        return got if got["state"] == "stopped" else None

    done = await wait_until(stopped, within=60, what="the cluster stopped")
    assert done["dashboard"] is None and done["workers"]["running"] == 0
    with pytest.raises(HTTPClientError) as e:
        await jp_fetch("gpu-env", "dask", made["id"], "status")
    assert e.value.code == 409
    err = await error(
        api("dask/clusters", made["id"], "scale", method="POST", body=json.dumps({"workers": 2})), 409
    )
    assert err["reason"] == "cluster_ended"


async def test_bad_requests_are_4xx(api, jp_fetch):
    both = {"kernel": "python3", "workers": 1, "adapt": {"maximum": 2}}
    err = await error(api("dask/clusters", method="POST", body=json.dumps(both)), 400)
    assert "not both" in err["message"]
    err = await error(api("dask/clusters", method="POST", body=json.dumps({"workers": 1})), 400)
    assert "environment (or kernel, or packed image)" in err["message"]
    low = {"kernel": "python3", "adapt": {"minimum": 3, "maximum": 2}}
    err = await error(api("dask/clusters", method="POST", body=json.dumps(low)), 400)
    assert "minimum (3) is above maximum (2)" in err["message"]
    err = await error(api("dask/clusters", method="POST", body=json.dumps({"kernel": "nope"})), 404)
    assert err["reason"] == "kernel_not_found"
    err = await error(api("dask/clusters/0123456789ab"), 404)
    assert err["reason"] == "cluster_not_found"
    # DELETE is the older spelling of its cancel, still served
    err = await error(api("dask/clusters/0123456789ab", method="DELETE"), 404)
    assert err["reason"] == "cluster_not_found"
    two = {"kernel": "python3", "resources": {"time_limit": 10}, "walltime": 20}
    err = await error(api("dask/clusters", method="POST", body=json.dumps(two)), 400)
    assert "the time limit (10) and walltime (20) differ" in err["message"]
    with pytest.raises(HTTPClientError) as e:
        await jp_fetch("gpu-env", "dask", "0123456789ab", "status")
    assert e.value.code == 404


async def test_the_dashboard_needs_a_logged_in_user(jp_fetch):
    with pytest.raises(HTTPClientError) as e:
        await jp_fetch("gpu-env", "dask", "0123456789ab", "status", headers={"Authorization": ""})
    assert e.value.code == 403
