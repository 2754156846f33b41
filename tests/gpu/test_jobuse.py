"""The runner's GPU-use sampler against a fake NVML built from recorded captures (a whole H100 under
load and idle, an H100 in MIG slices): the series it writes, and the summary the job record shows."""

from __future__ import annotations

import json

import pytest

from jupyter_gpu_env.gpu.jobuse import MIG_NOTE, SERIES, SUMMARY, GpuUseSampler, read_series
from jupyter_gpu_env.gpu.sources.nvml import NvmlReader
from jupyter_gpu_env.models.jobs import JobGpuUsage

from .fake_nvml import DRIVER_NOT_LOADED
from .fixture_files import H100, H100_MIG, MIB


class Clock:
    def __init__(self) -> None:
        self.t = 1_000_000.0

    def __call__(self) -> float:
        return self.t


def test_a_whole_gpu_under_load_then_idle(fake, tmp_path):
    nv = fake(H100, "load")
    clock = Clock()
    s = GpuUseSampler(tmp_path, NvmlReader(nv, env={}).read, interval=10, gpu_units=1, env={}, clock=clock)
    for _ in range(6):  # a minute under load (the capture's figures: 100 %, 19,818 MiB of 81,559)
        assert s.sample()
        clock.t += 10
    nv.f["util"], nv.f["used"] = 0.0, 0  # then the GPU sits idle for 40 s
    for _ in range(4):
        s.sample()
        clock.t += 10
    summary = JobGpuUsage.model_validate(s.stop())
    assert summary.available and summary.samples == 10 and summary.notes == []
    assert [d.name for d in summary.devices] == ["NVIDIA H100 80GB HBM3"]
    assert summary.mean_utilization_percent == 60.0 and summary.peak_utilization_percent == 100.0
    assert (summary.peak_memory_bytes, summary.memory_total_bytes) == (19818 * MIB, 81559 * MIB)
    assert summary.idle_fraction == 0.4 and summary.idle_seconds == 40.0
    assert summary.gpu_hours_allocated == pytest.approx(100 / 3600, abs=1e-6)  # 100 s of one GPU
    assert summary.gpu_hours_used == pytest.approx(0.6 * 100 / 3600, abs=1e-6)
    assert json.loads((tmp_path / SUMMARY).read_text())["samples"] == 10  # what the server reads

    lines = (tmp_path / SERIES).read_text().splitlines()
    assert len(lines) == 11 and json.loads(lines[1]) == [0.0, [100.0], [19818 * MIB]]
    assert sum(len(x) for x in lines[1:]) / 10 < 40  # compact: under 40 bytes a sample of one device
    devices, points = read_series(tmp_path, max_points=4)
    assert devices[0]["uuid"] == nv.f["uuid"] and len(points) == 4 and points[0][0] == 0.0


def test_a_mig_slice_has_memory_and_says_why_no_utilization(fake, tmp_path):
    nv = fake(H100_MIG, "load")
    slice_uuid = nv.f["migs"][0]["uuid"]
    env = {"CUDA_VISIBLE_DEVICES": slice_uuid}
    clock = Clock()
    s = GpuUseSampler(tmp_path, NvmlReader(nv, env=env).read, interval=5, env=env, clock=clock)
    for _ in range(3):
        s.sample()
        clock.t += 5
    summary = JobGpuUsage.model_validate(s.stop())
    [device] = summary.devices
    assert device.uuid == slice_uuid and device.mig_profile == nv.f["migs"][0]["profile"]
    assert summary.peak_memory_bytes == nv.f["migs"][0]["used"] * MIB
    assert summary.memory_total_bytes == nv.f["migs"][0]["total"] * MIB
    assert summary.mean_utilization_percent is None and summary.gpu_hours_used is None
    assert summary.notes == [MIG_NOTE]
    # Given no GPU count, the slice it sees is what it was allocated: its share of the GPU.
    assert summary.gpu_hours_allocated == pytest.approx(int(device.mig_profile[0]) / 7 * 15 / 3600, abs=1e-6)


def test_no_gpu_is_said_once(fake, tmp_path):
    nv = fake(H100, "load")
    nv.init_error = DRIVER_NOT_LOADED
    s = GpuUseSampler(tmp_path, NvmlReader(nv, env={}, driver_file=tmp_path / "none").read, env={})
    assert s.sample() is False
    summary = JobGpuUsage.model_validate(json.loads((tmp_path / SUMMARY).read_text()))
    assert not summary.available and summary.reason and "GPU" in summary.reason
    assert not (tmp_path / SERIES).exists()
    assert s.stop()["available"] is False


def test_hidden_devices_are_not_sampled(fake, tmp_path):
    nv = fake(H100, "load")
    env = {"CUDA_VISIBLE_DEVICES": ""}
    s = GpuUseSampler(tmp_path, NvmlReader(nv, env=env).read, env=env)
    assert s.sample() is False
    reason = json.loads((tmp_path / SUMMARY).read_text())["reason"]
    assert reason == "No GPU visible: CUDA_VISIBLE_DEVICES='' hides the 1 GPU(s) on this machine."
