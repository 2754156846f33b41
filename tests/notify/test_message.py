"""The pure builders of what is sent when something ends."""

from __future__ import annotations

from helpers import job_record

from jupyter_gpu_env.models.jobs import JobGpuUsage
from jupyter_gpu_env.models.sweeps import JobGroup
from jupyter_gpu_env.notify import message

BASE = "https://hub.example.org/user/alice/"


def test_a_job_message_says_what_ended_how_long_it_took_its_gpu_use_and_where_its_output_is():
    gpu = JobGpuUsage(
        available=True,
        peak_memory_bytes=3 << 30,
        memory_total_bytes=40 << 30,
        mean_utilization_percent=57.4,
        gpu_hours_allocated=0.25,
        gpu_hours_used=0.14,
    )
    job = job_record(
        "abc",
        name="train",
        state="succeeded",
        started_at=1000.0,
        finished_at=1185.0,
        gpu=gpu,
        parameters={"lr": 0.1},
        output_path="jobs/train-abc/train lr=0.1.ipynb",
    )
    msg = message.job_message(job, BASE)
    assert msg.subject == 'Job "train" succeeded after 3 min 05 s'
    link = f"{BASE}lab/tree/jobs/train-abc/train%20lr%3D0.1.ipynb"
    assert f"Output notebook: {link}" in msg.text and "Parameters: lr=0.1" in msg.text
    gpu_words = "peak memory 3.0 GiB of 40.0 GiB, mean utilization 57 %, 0.25 GPU-hours (0.14 used)"
    assert f"GPU use: {gpu_words}" in msg.text
    (card,) = msg.payload["attachments"]
    assert msg.payload["text"] == msg.subject and card["color"] == message.COLOURS["succeeded"]
    assert (
        card["title_link"] == link
        and {"title": "GPU use", "value": gpu_words, "short": False} in card["fields"]
    )


def test_what_a_message_cannot_link_or_measure_it_says_plainly():
    job = job_record("abc", name="x", state="cancelled", output_path="/scratch/x/out.ipynb")
    msg = message.job_message(job, "")
    assert msg.subject == 'Job "x" cancelled'  # it never started: no duration
    assert "Duration: did not start" in msg.text and "Output notebook: /scratch/x/out.ipynb" in msg.text
    assert "title_link" not in msg.payload["attachments"][0]
    assert message.gpu_text(None) == "not measured"
    assert (
        message.gpu_text(JobGpuUsage(available=False, reason="No GPU was visible.")) == "No GPU was visible."
    )
    assert [message.duration_text(s) for s in (0, 59.6, 3725, 90000)] == [
        "0 s",
        "1 min 00 s",
        "1 h 02 min",
        "1 d 01 h",
    ]


def test_a_batch_kernels_end_is_an_interactive_session_with_its_gpu_use_and_no_output():
    gpu = JobGpuUsage(
        available=True, mean_utilization_percent=12.0, gpu_hours_allocated=2.0, gpu_hours_used=0.3
    )
    job = job_record(
        "k1",
        name="kernel: fit",
        kind="kernel",
        state="succeeded",
        started_at=1000.0,
        finished_at=8200.0,
        gpu=gpu,
        notebook_path="work/fit.ipynb",
        output_path="",
    )
    msg = message.job_message(job, BASE)
    assert msg.subject == 'Interactive session "kernel: fit" ended after 2 h 00 min'
    assert "Notebook: work/fit.ipynb" in msg.text and "Output notebook" not in msg.text
    assert "mean utilization 12 %, 2.00 GPU-hours (0.30 used)" in msg.text
    assert "title_link" not in msg.payload["attachments"][0]
    walltime = job_record(
        "k2", name="kernel", kind="kernel", state="failed", output_path="", notebook_path=""
    )
    assert message.job_message(walltime, BASE).subject == 'Interactive session "kernel" failed'


def test_a_sweep_message_counts_its_runs_and_links_its_results():
    sweep = JobGroup(
        id="0123456789ab",
        name="grid",
        backend="local",
        notebook_path="grid.ipynb",
        size=3,
        max_concurrent=3,
        varied=["alpha"],
        counts={"succeeded": 2, "failed": 1},
        state="failed",
        created_at=100.0,
        finished_at=160.0,
    )
    msg = message.sweep_message(sweep, BASE)
    assert msg.subject == 'Sweep "grid" failed after 1 min 00 s: 3 runs: 2 succeeded, 1 failed'
    assert f"Results (CSV): {BASE}gpu-env/api/sweeps/0123456789ab/results?format=csv" in msg.text
    assert msg.payload["props"]["jupyter-gpu-env"]["counts"] == {"succeeded": 2, "failed": 1}


def test_the_public_base_of_links():
    hub = {"JUPYTERHUB_PUBLIC_URL": "https://hub.example.org/", "JUPYTERHUB_SERVICE_PREFIX": "/user/alice/"}
    assert (
        message.public_base("https://lab.example.org", hub, "http://10.0.0.5:8888/")
        == "https://lab.example.org/"
    )
    assert message.public_base("", hub, "http://10.0.0.5:8888/user/alice/") == BASE
    assert message.public_base("", {}, "http://node7:8888/lab-base") == "http://node7:8888/lab-base/"
