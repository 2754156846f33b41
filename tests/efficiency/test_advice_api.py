"""`GET jobs/advice` over a real server and a job history in its store."""

from __future__ import annotations

import time

import pytest
from helpers import body, error

from jupyter_gpu_env.models.jobs import Job, JobGpuDevice, JobGpuUsage
from jupyter_gpu_env.models.resources import JobResources

GB = 10**9
H100 = "NVIDIA H100 80GB HBM3"
H100_BYTES = 85520809984  # as nvidia-smi reports it (../shared/fixtures/gpu)
SLICE_BYTES = 10468982784  # an H100's 1g.10gb, as recorded


@pytest.fixture
def jp_server_config(jp_server_config, tmp_path):
    return {
        **jp_server_config,
        "GpuEnvApp": {"state_dir": str(tmp_path / "state"), "job_advice_headroom": 0.2},
        # the machine as the local backend hands it out: one whole H100 and two 1g.10gb slices of another
        "LocalBackend": {
            "gpus": ["GPU-0b1c:whole", "MIG-11aa:1g.10gb", "MIG-22bb:1g.10gb"],
        },
    }


def _run(
    notebook: str, peak: int, mean: float, *, ago: float, mig: str | None = None, state="succeeded"
) -> Job:
    now = time.time()
    device = JobGpuDevice(name=H100, mig_profile=mig, memory_total_bytes=SLICE_BYTES if mig else H100_BYTES)
    return Job(
        id=f"{int(ago):012x}",
        name="train",
        backend="local",
        state=state,
        notebook_path=notebook,
        job_dir=f"jobs/train-{int(ago)}",
        input_path="x",
        output_path="y",
        log_path="z",
        created_at=now - ago,
        started_at=now - ago + 1,
        finished_at=now - ago + 60,
        resources=JobResources(mig_profile=mig) if mig else JobResources(gpus=1),
        gpu=JobGpuUsage(
            available=True,
            devices=[device],
            peak_memory_bytes=peak,
            memory_total_bytes=device.memory_total_bytes,
            mean_utilization_percent=None if mig else mean,
            peak_utilization_percent=None if mig else mean + 10,
        ),
    )


async def test_the_last_runs_peak_gives_the_smallest_slice_with_one_line_why(api, jp_serverapp):
    store = jp_serverapp.web_app.settings["gpu_env_services"].jobs.store
    for job in (
        _run("train.ipynb", int(2.6 * GB), 20, ago=300),
        _run("train.ipynb", int(3.1 * GB), 26, ago=200),
        _run("train.ipynb", int(2.9 * GB), 23, ago=100),
        _run("other.ipynb", 60 * GB, 90, ago=50),  # another notebook's run counts for nothing here
    ):
        await store.insert(job)

    advice = await body(await api("jobs", "advice", params={"notebook_path": "train.ipynb"}))
    assert advice["based_on"] == "runs" and [r["job_id"] for r in advice["runs"]] == [
        f"{100:012x}",
        f"{200:012x}",
        f"{300:012x}",
    ]
    assert advice["peak_memory_bytes"] == int(3.1 * GB)
    assert advice["suggestion"] == {"mig_profile": "1g.10gb", "gpus": None, "memory_bytes": 10 * GB}
    assert advice["current"]["gpus"] == 1 and advice["idle_percent"] == 77.0
    assert advice["sentence"] == (
        "The last 3 runs peaked at 3.1 GB and used 23 % of an H100: a 1g.10gb slice fits; "
        "a whole GPU would sit idle 77 % of the time."
    )
    (local,) = advice["soonest"]
    assert (
        local["backend"] == "local"
        and local["free"] == 2
        and "2 free 1g.10gb slices now" in local["sentence"]
    )


async def test_a_peak_no_slice_holds_gets_a_whole_gpu_and_nothing_measured_says_so(api, jp_serverapp):
    store = jp_serverapp.web_app.settings["gpu_env_services"].jobs.store
    await store.insert(_run("big.ipynb", 20 * GB, 80, ago=100))
    big = await body(await api("jobs", "advice", params={"notebook_path": "big.ipynb", "backend": "local"}))
    assert big["suggestion"]["gpus"] == 1 and big["suggestion"]["mig_profile"] is None
    assert big["current"] is None  # it had one whole GPU already
    assert "one whole GPU is already the smallest that fits" in big["sentence"]

    fresh = await body(await api("jobs", "advice", params={"notebook_path": "new.ipynb"}))
    assert fresh["based_on"] == "nothing" and fresh["suggestion"] is None and fresh["runs"] == []
    assert fresh["sentence"].startswith("No run of this notebook has measured its GPU use yet")

    # Runs that saw no GPU: said so, with the runner's reason, not "send it once".
    for ago in (300, 200):
        run = _run("cpu.ipynb", 0, 0, ago=ago)
        gone = JobGpuUsage(available=False, reason="no NVIDIA GPU is visible to this job")
        await store.insert(run.model_copy(update={"gpu": gone, "resources": JobResources()}))
    cpu = await body(await api("jobs", "advice", params={"notebook_path": "cpu.ipynb"}))
    assert cpu["based_on"] == "nothing"
    assert cpu["sentence"] == (
        "The 2 earlier runs of this notebook measured no GPU use: they saw no GPU (no NVIDIA GPU is visible "
        "to this job). Ask for a GPU or a MIG slice under Resources, and the next time this suggests the "
        "smallest one that fits."
    )


async def test_bad_questions_get_4xx_that_say_what_to_do(api):
    e = await error(api("jobs", "advice"), 400)
    assert "notebook_path" in e["message"]
    e = await error(api("jobs", "advice", params={"notebook_path": "a.ipynb", "backend": "nope"}), 404)
    assert "Unknown backend 'nope'" in e["message"]
    await error(api("jobs", "advice", params={"notebook_path": "a.txt"}), 400)
