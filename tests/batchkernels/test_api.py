"""Batch kernels through a real Jupyter server: registered with `POST batch-kernels`, listed by Jupyter's
own `api/kernelspecs`, started with Jupyter's own `POST api/kernels` (the provisioner submits a job on the
real local backend), listed with where they stand, ended from outside (seen dead, with why), and
unregistered; refusals leave nothing written."""

from __future__ import annotations

import json

import pytest
from helpers import body, error, wait_until


@pytest.fixture
def jp_server_config(jp_server_config, demo_app_config):
    return {
        **jp_server_config,
        "GpuEnvApp": {**demo_app_config, "job_refresh_interval": 0.2},
        "LocalBackend": {"kill_grace": 3.0},
        "BatchKernels": {"launch_timeout": 120},
        # the restarter's look at the kernel: how soon a kernel whose job ended is reported dead
        "MappingKernelManager": {"kernel_info_timeout": 60},
    }


async def _register(api, **fields) -> dict:
    resp = await api("batch-kernels", method="POST", body=json.dumps(fields))
    assert resp.code == 201
    made = await body(resp)
    assert resp.headers["Location"].endswith(f"/gpu-env/api/batch-kernels/{made['kernel_name']}")
    return made


async def _session(api, name: str, kernel_id: str) -> dict:
    listed = await body(await api("batch-kernels", name))
    found = [s for s in listed["sessions"] if s["kernel_id"] == kernel_id]
    assert found, listed
    return found[0]


async def test_register_start_list_and_unregister_through_jupyter(api, jp_fetch, jp_serverapp, jp_root_dir):
    made = await _register(api, environment="demo", walltime=90, display_name=None)
    name = made["kernel_name"]
    assert name.startswith("gpu-env-batch-demo-local")
    assert made["display_name"] == "Python (demo) · this machine · 1 h 30 min"
    assert made["resources"]["time_limit_seconds"] == 5400 and made["sessions"] == []

    specs = await body(await jp_fetch("api", "kernelspecs"))
    spec = specs["kernelspecs"][name]["spec"]
    assert spec["display_name"] == made["display_name"]
    assert spec["metadata"]["kernel_provisioner"]["provisioner_name"] == "gpu-env-batch"

    # The same one again is refused, naming the first; nothing else is written.
    await error(
        api("batch-kernels", method="POST", body=json.dumps({"environment": "demo", "walltime": 90})), 409
    )
    listed = await body(await api("batch-kernels"))
    assert [k["kernel_name"] for k in listed["items"]] == [name]

    # Jupyter's own start: the provisioner submits a job and waits for its kernel.
    started = await body(await jp_fetch("api", "kernels", method="POST", body=json.dumps({"name": name})))
    kid = started["id"]
    session = await _session(api, name, kid)
    assert session["state"] == "running" and session["job_id"]
    assert session["ends_at"] == pytest.approx(session["started_at"] + 5400)
    assert session["words"].startswith("running") and "1 h 29 min left" in session["words"]
    job = await body(await api("jobs", session["job_id"]))
    assert job["kind"] == "kernel" and job["environment"] == "demo" and job["state"] == "running"

    km = jp_serverapp.kernel_manager.get_kernel(kid)
    client = km.client()
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=60)
        out: list[str] = []
        await client.execute_interactive(
            "import sys, os; print(sys.prefix, os.environ.get('JUPYTER_GPU_ENV_JOB_ID', ''))",
            timeout=60,
            output_hook=lambda m: out.append(m["content"].get("text", "")),
        )
    finally:
        client.stop_channels()
    assert "demo" in "".join(out)

    # Unregistering while it runs is refused, naming it; asked to, its kernels end first.
    refused = await error(api("batch-kernels", name, method="DELETE"), 409)
    assert refused["reason"] == "kernels_running" and refused["details"][0]["kernel_id"] == kid
    gone = await body(await api("batch-kernels", name, method="DELETE", params={"shutdown_kernels": "true"}))
    assert [s["state"] for s in gone["sessions"]] == ["ended"]
    ended = await wait_until(
        lambda: _ended_job(api, session["job_id"]), within=30, what="the kernel's job ended"
    )
    assert ended["state"] == "succeeded" and ended["reason"] == "shut_down"
    assert kid not in {k["id"] for k in await body(await jp_fetch("api", "kernels"))}
    assert name not in (await body(await jp_fetch("api", "kernelspecs")))["kernelspecs"]
    await error(api("batch-kernels", name), 404)
    again = await _register(api, environment="demo", walltime=90)
    assert again["kernel_name"] == name and again["sessions"] == []  # the old one's sessions are not its


async def _ended_job(api, job_id: str) -> dict | None:
    job = await body(await api("jobs", job_id))
    return job if job["state"] in ("succeeded", "failed", "cancelled") else None


async def test_a_kernel_whose_job_is_cancelled_from_outside_is_dead_with_why(api, jp_fetch, jp_root_dir):
    name = (await _register(api, kernel="python3", walltime=30))["kernel_name"]
    (jp_root_dir / "work").mkdir()
    # What opening a notebook does: a session for its path, whose kernel is the batch kernel.
    opened = {"path": "work/fit.ipynb", "name": "fit.ipynb", "type": "notebook", "kernel": {"name": name}}
    made = await body(await jp_fetch("api", "sessions", method="POST", body=json.dumps(opened)))
    kid = made["kernel"]["id"]
    session = await _session(api, name, kid)
    assert session["notebook_path"] == "work/fit.ipynb"
    job_id = session["job_id"]
    job = await body(await api("jobs", job_id))
    assert (job["name"], job["notebook_path"]) == ("kernel: fit", "work/fit.ipynb")

    await api("jobs", job_id, "cancel", method="POST", body=b"{}")

    async def gone() -> bool:
        return kid not in {k["id"] for k in await body(await jp_fetch("api", "kernels"))}

    # Jupyter's restarter looks every few seconds; it reports the kernel dead, and restarts nothing.
    await wait_until(gone, within=45, what="Jupyter reporting the kernel dead")
    session = await _session(api, name, kid)
    assert session["state"] == "ended" and session["reason"] == "cancelled"
    assert session["words"].startswith("ended: ")
    jobs = await body(await api("jobs", params={"limit": "50"}))
    assert [j["id"] for j in jobs["items"] if j["kind"] == "kernel"] == [job_id]  # no job started again


@pytest.mark.parametrize(
    ("fields", "status", "words"),
    [
        ({"walltime": 60}, 400, "environment (or kernel, or packed image)"),
        ({"environment": "demo", "kernel": "python3"}, 400, "not environment and kernel"),
        ({"environment": "demo", "walltime": 60, "resources": {"time_limit": "2:00:00"}}, 400, "differ"),
        ({"environment": "no-such-env"}, 404, "no-such-env"),
        ({"kernel": "no-such-kernel"}, 404, "no-such-kernel"),
        ({"environment": "demo", "backend": "moon"}, 404, "moon"),
        ({"environment": "demo", "resources": {"gpus": 8}}, 409, "GPU"),
    ],
)
async def test_refusals_say_why_and_write_nothing(api, jp_fetch, fields, status, words):
    refused = await error(api("batch-kernels", method="POST", body=json.dumps(fields)), status)
    assert words in refused["message"]
    assert (await body(await api("batch-kernels")))["items"] == []
    specs = (await body(await jp_fetch("api", "kernelspecs")))["kernelspecs"]
    assert not [n for n in specs if n.startswith("gpu-env-batch-")]


async def test_a_batch_kernel_cannot_run_in_a_batch_kernel(api):
    name = (await _register(api, kernel="python3"))["kernel_name"]
    refused = await error(api("batch-kernels", method="POST", body=json.dumps({"kernel": name})), 409)
    assert refused["reason"] == "batch_kernel_nested"
