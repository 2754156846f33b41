import asyncio
import json

import psutil
import pytest
from helpers import body, wait_until
from tornado.httpclient import HTTPClientError


async def test_gpu_reports_real_host_memory(api):
    resp = await api("gpu")
    assert resp.code == 200
    snap = json.loads(resp.body)
    host = snap["host"]
    assert host["source"] in {"cgroup2", "cgroup1", "host"}
    mem = host["memory"]
    assert 0 < mem["used_bytes"] <= mem["limit_bytes"]
    if not mem["limited"]:
        assert mem["limit_bytes"] == psutil.virtual_memory().total
    assert host["cpu"]["limit_cores"] > 0
    assert snap["interval_seconds"] == pytest.approx(0.2)


async def test_gpu_says_why_no_gpu_is_visible(without_gpu_driver, api):
    snap = await body(await api("gpu"))
    status = snap["gpu_status"]
    # Without an NVIDIA driver the status must say so rather than show an empty list silently.
    assert snap["gpus"] == []
    assert status["available"] is False
    assert status["reason"] == "no_driver"
    assert status["message"].startswith("No GPU visible")


async def test_gpu_status_agrees_with_the_gpus_this_machine_shows(api):
    """This machine as it is, with or without GPUs: the list and the status never contradict."""
    snap = await body(await api("gpu"))
    status = snap["gpu_status"]
    if snap["gpus"]:
        assert status["available"] is True
    else:
        assert status["available"] is False
        assert status["reason"] in {"no_driver", "no_nvml", "no_device"}
        assert status["message"].startswith("No GPU visible")


async def test_many_callers_share_one_sample(api, jp_serverapp):
    sampler = jp_serverapp.web_app.settings["gpu_env_services"].gpu.sampler
    await api("gpu")
    before = sampler.samples_taken
    bodies = await asyncio.gather(*(api("gpu") for _ in range(20)))
    stamps = {json.loads(b.body)["sampled_at"] for b in bodies}
    # 20 concurrent callers within one 0.2 s interval see at most a couple of distinct samples.
    assert sampler.samples_taken - before <= 3
    assert len(stamps) <= 3


async def test_cpu_usage_appears_after_second_sample(api, jp_serverapp):
    sampler = jp_serverapp.web_app.settings["gpu_env_services"].gpu.sampler
    first = await body(await api("gpu"))
    taken = sampler.samples_taken
    # The first sample has nothing to make a rate from; the background loop's next one does.
    await wait_until(lambda: sampler.samples_taken > taken, within=10, what="another sample")
    snap = await body(await api("gpu"))
    assert snap["sampled_at"] > first["sampled_at"]
    assert snap["host"]["cpu"]["usage_cores"] is not None
    assert snap["host"]["cpu"]["usage_cores"] >= 0


async def test_unknown_api_path_is_json_404(api):
    with pytest.raises(HTTPClientError) as e:
        await api("no-such-thing")
    assert e.value.code == 404
    err = json.loads(e.value.response.body)
    assert err["reason"] == "not_found"
    assert "openapi.json" in err["message"]


async def test_kernels_are_listed_with_their_memory_and_notebook(api, jp_fetch):
    resp = await jp_fetch(
        "api",
        "sessions",
        method="POST",
        body=json.dumps({"path": "analysis.ipynb", "type": "notebook", "kernel": {"name": "python3"}}),
    )
    kernel_id = json.loads(resp.body)["kernel"]["id"]
    try:
        seen = []

        async def kernel_row():
            rows = (await body(await api("gpu")))["kernels"]
            row = next((r for r in rows if r["kernel_id"] == kernel_id), None)
            seen[:] = [row]
            # A live ipykernel holds tens of megabytes; staying under 10 MB means we measured the wrong process.
            return row if row and row["host_memory_bytes"] > 10 * 1024 * 1024 else None

        # The row appears as soon as the process exists; ipykernel reaches its working size a moment later.
        row = await wait_until(
            kernel_row, within=20, every=0.2, what=lambda: f"the kernel's row at its working size ({seen})"
        )
        assert row["notebook_path"] == "analysis.ipynb"
        assert row["kernel_name"] == "python3"
        assert row["processes"] >= 1
        assert row["gpu_memory_bytes"] is None
    finally:
        await jp_fetch("api", "kernels", kernel_id, method="DELETE")


async def test_history_grows_and_filters(api):
    await api("gpu")

    async def grown():
        hist = await body(await api("gpu", "history"))
        return hist if len(hist["points"]) >= 4 else None

    hist = await wait_until(grown, within=10, what="four samples in the history")
    assert hist["interval_seconds"] == pytest.approx(0.2)
    points = hist["points"]
    assert len(points) >= 3
    assert [p["t"] for p in points] == sorted(p["t"] for p in points)
    assert all(0 < p["host_memory_used_bytes"] <= p["host_memory_limit_bytes"] for p in points)
    recent = json.loads((await api("gpu", "history", params={"seconds": "0.3"})).body)["points"]
    assert 1 <= len(recent) < len(points)


@pytest.mark.parametrize("bad", ["abc", "-1", "0"])
async def test_history_rejects_bad_window(api, bad):
    with pytest.raises(HTTPClientError) as e:
        await api("gpu", "history", params={"seconds": bad})
    assert e.value.code == 400
    assert "seconds" in json.loads(e.value.response.body)["message"]


async def test_release_shuts_down_only_kernels_holding_gpu_memory(api, jp_fetch, jp_serverapp):
    """A GPU source reporting one kernel's PID as a GPU process: release stops that kernel, not the other."""
    from jupyter_gpu_env.gpu.sources.reading import GpuReading
    from jupyter_gpu_env.models import GpuDevice, GpuProcess, GpuStatus

    async def start():
        resp = await jp_fetch("api", "kernels", method="POST", body=json.dumps({"name": "python3"}))
        return json.loads(resp.body)["id"]

    holder, bystander = await start(), await start()
    km = jp_serverapp.kernel_manager
    pid = km.get_kernel(holder).provisioner.process.pid

    async def fake_gpu():
        proc = GpuProcess(pid=pid, used_memory_bytes=2 << 30)
        gpu = GpuDevice(index=0, name="NVIDIA H100", utilization_percent=0.0, processes=[proc])
        return GpuReading([gpu], GpuStatus(available=True, reason="ok", message="1 GPU"))

    services = jp_serverapp.web_app.settings["gpu_env_services"]
    services.gpu.sampler._gpu_reader = fake_gpu

    async def attributed():
        snap = await body(await api("gpu"))
        rows = {k["kernel_id"]: k for k in snap["kernels"]}
        return (snap, rows) if rows.get(holder, {}).get("gpu_memory_bytes") else None

    snap, rows = await wait_until(attributed, within=10, every=0.2, what="the GPU memory reaching its kernel")
    assert rows[holder]["gpu_memory_bytes"] == 2 << 30
    assert snap["gpus"][0]["processes"][0]["kernel_id"] == holder
    assert snap["idle"]["kernels"] == [holder]

    released = json.loads((await api("gpu", "release", method="POST", body=b"{}")).body)
    assert released["shut_down"] == [holder]
    running = set(km.list_kernel_ids())
    assert holder not in running and bystander in running
    await jp_fetch("api", "kernels", bystander, method="DELETE")
