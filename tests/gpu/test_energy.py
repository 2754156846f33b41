"""A job's GPU energy: the runner's sampler against a fake NVML that answers the recorded captures' power
draw (a whole H100 under load then idle, an H100 and an H200 in MIG slices), with its energy counter, a
counter that restarts, none at all; and the site's carbon and cost arithmetic."""

from __future__ import annotations

import json

import pytest

from jupyter_gpu_env.gpu.energy import (
    EnergyMeter,
    SitePrices,
    compute_share,
    held_shares,
    kwh,
    most_joules,
)
from jupyter_gpu_env.gpu.jobuse import SUMMARY, GpuUseSampler
from jupyter_gpu_env.gpu.sources.nvml import NvmlReader
from jupyter_gpu_env.gpu.sources.reading import PowerReading
from jupyter_gpu_env.models.jobs import JobGpuUsage

from .fake_nvml import DRIVER_NOT_LOADED, capture_facts
from .fixture_files import H100, H100_MIG, H200_MIG

LOAD_W, IDLE_W = 629.45, 69.85  # the H100 capture's average power draw, under load and idle


class Clock:
    def __init__(self) -> None:
        self.t = 1_000_000.0

    def __call__(self) -> float:
        return self.t


def _run(nv, sampler: GpuUseSampler, clock: Clock, seconds: int, step: int = 10) -> None:
    """Sample every ``step`` seconds while the GPU draws its capture's power."""
    for _ in range(seconds // step):
        assert sampler.sample()
        nv.run(step)
        clock.t += step


def _sampler(nv, tmp_path, env, clock, interval=10):
    reader = NvmlReader(nv, env=env)
    return GpuUseSampler(
        tmp_path, reader.read, interval=interval, env=env, clock=clock, energy=reader.read_energy
    )


def test_the_counter_read_at_start_samples_and_end(fake, fixture_text, tmp_path):
    nv = fake(H100, "load")
    clock = Clock()
    s = _sampler(nv, tmp_path, {}, clock)
    _run(nv, s, clock, 60)
    nv.f["power"] = capture_facts(fixture_text(H100), "idle")["power"]
    assert nv.f["power"] == IDLE_W
    _run(nv, s, clock, 40)
    summary = JobGpuUsage.model_validate(s.stop())
    # every joule the counter counted between the first read and the last (at stop), none invented
    assert summary.energy_joules == pytest.approx(LOAD_W * 60 + IDLE_W * 40, abs=0.01)
    assert summary.energy_source == "counter" and summary.energy_note is None
    assert json.loads((tmp_path / SUMMARY).read_text())["energy_source"] == "counter"
    assert summary.co2e_grams is None and summary.cost is None  # the runner prices nothing


def test_a_counter_that_restarts_counts_from_the_restart(fake, tmp_path):
    nv = fake(H100, "load")
    clock = Clock()
    s = _sampler(nv, tmp_path, {}, clock)
    _run(nv, s, clock, 30)  # read at 0, 10 and 20 s; the GPU draws on until 30 s
    nv.energy_mj = 0  # then the driver reloads: the counter starts again from zero ...
    nv.run(4)  # ... and has counted 4 s at the next read (30 s)
    s.sample()
    nv.run(10)
    clock.t += 10
    summary = JobGpuUsage.model_validate(s.stop())
    # 20 s up to the read before the restart, 4 s counted since it, 10 s to the end: the 10 s between
    # that read and the restart are lost (no counter remembers them), never invented
    assert summary.energy_joules == pytest.approx(LOAD_W * (20 + 4 + 10), abs=0.01)
    assert summary.energy_source == "counter"
    assert "restarted once" in summary.energy_note


def test_without_a_counter_the_power_samples_are_integrated(fake, fixture_text, tmp_path):
    nv = fake(H100, "load")
    nv.counter = False
    clock = Clock()
    s = _sampler(nv, tmp_path, {}, clock)
    _run(nv, s, clock, 60)
    nv.f["power"] = IDLE_W
    _run(nv, s, clock, 40)
    summary = JobGpuUsage.model_validate(s.stop())
    # trapezoids between reads: load at 0..50 s, idle at 60..100 s; the switch is seen at the next read
    expected = LOAD_W * 50 + (LOAD_W + IDLE_W) / 2 * 10 + IDLE_W * 40
    assert summary.energy_joules == pytest.approx(expected, abs=0.01)
    assert summary.energy_source == "power samples"
    assert "No energy counter" in summary.energy_note and "every 10 s" in summary.energy_note
    # what sampling misses: the counter would have said LOAD_W * 60 + IDLE_W * 40
    assert summary.energy_joules < LOAD_W * 60 + IDLE_W * 40
    assert nv.calls["nvmlDeviceGetTotalEnergyConsumption"] == 1  # not supported: never asked again


def test_neither_counter_nor_power_says_why(fake, tmp_path):
    nv = fake(H100, "load")
    nv.counter = nv.power_reading = False
    clock = Clock()
    s = _sampler(nv, tmp_path, {}, clock)
    _run(nv, s, clock, 20)
    summary = JobGpuUsage.model_validate(s.stop())
    assert summary.available and summary.energy_joules is None and summary.energy_source is None
    assert summary.energy_note == (
        "GPU energy is not measured: NVML reports neither an energy counter nor a power draw for this GPU."
    )


def test_a_mig_slice_gets_its_share_of_the_whole_gpu(fake, tmp_path):
    nv = fake(H100_MIG, "load")
    slice_ = nv.f["migs"][0]
    assert slice_["profile"] == "3g.40gb"
    env = {"CUDA_VISIBLE_DEVICES": slice_["uuid"]}
    clock = Clock()
    s = _sampler(nv, tmp_path, env, clock, interval=5)
    _run(nv, s, clock, 30, step=5)
    summary = JobGpuUsage.model_validate(s.stop())
    assert summary.energy_joules == pytest.approx(432.21 * 30 * 3 / 7, abs=0.01)  # the capture's 432.21 W
    assert summary.energy_source == "share of a whole GPU"
    assert "An estimate" in summary.energy_note and "3/7" in summary.energy_note
    assert "energy counter" in summary.energy_note


def test_two_slices_of_one_gpu_add_their_shares(fake, tmp_path):
    nv = fake(H100_MIG, "load")
    env = {"CUDA_VISIBLE_DEVICES": ",".join(m["uuid"] for m in nv.f["migs"][2:])}  # the two 1g.10gb
    nv.counter = False  # and by power samples
    clock = Clock()
    s = _sampler(nv, tmp_path, env, clock, interval=5)
    _run(nv, s, clock, 20, step=5)
    summary = JobGpuUsage.model_validate(s.stop())
    assert summary.energy_joules == pytest.approx(432.21 * 20 * 2 / 7, abs=0.01)
    assert summary.energy_source == "share of a whole GPU"
    assert "power draw" in summary.energy_note and "2/7" in summary.energy_note


def test_shares_of_the_recorded_mig_layouts(fake):
    h200 = fake(H200_MIG, "load")
    devices = NvmlReader(h200, env={}).read().devices
    for m in devices[0].mig_devices:
        env = {"CUDA_VISIBLE_DEVICES": m.uuid}
        assert held_shares(devices, env) == {devices[0].uuid: pytest.approx(compute_share(m.profile))}
    # a compute instance counts its own compute slices, not its GPU instance's
    assert [compute_share(m.profile) * 7 for m in devices[0].mig_devices] == pytest.approx([1, 2, 2, 1, 1])
    assert compute_share("7g.80gb") == 1.0 and compute_share("1g.10gb+me") == pytest.approx(1 / 7)
    assert compute_share("H100") is None and compute_share(None) is None


def test_a_job_that_sees_no_gpu_says_so(fake, tmp_path):
    nv = fake(H100, "load")
    nv.init_error = DRIVER_NOT_LOADED
    reader = NvmlReader(nv, env={}, driver_file=tmp_path / "none")
    s = GpuUseSampler(tmp_path, reader.read, env={}, energy=reader.read_energy)
    assert s.sample() is False
    summary = JobGpuUsage.model_validate(s.stop())
    assert summary.energy_joules is None
    assert summary.energy_note == "No GPU energy to measure: the job saw no GPU."


def test_nvml_gone_or_absent_is_said(fake, tmp_path):
    nv = fake(H100, "load")
    clock = Clock()
    reader = NvmlReader(nv, env={})
    s = GpuUseSampler(tmp_path, reader.read, env={}, clock=clock, energy=lambda: {})
    s.sample()
    assert "NVML gave no energy reading for this GPU" in s.stop()["energy_note"]
    without = GpuUseSampler(tmp_path, reader.read, env={}, clock=clock)  # nvidia-smi's readings only
    without.sample()
    assert "no NVML to read it through" in without.stop()["energy_note"]


def test_a_failing_energy_read_is_covered_by_the_next(fake, tmp_path):
    nv = fake(H100, "load")
    clock = Clock()
    reader = NvmlReader(nv, env={})
    failing = iter([True, False, True, True])

    def flaky():
        if not next(failing, True):
            raise OSError("a transient failure")
        return reader.read_energy()

    s = GpuUseSampler(tmp_path, reader.read, interval=10, env={}, clock=clock, energy=flaky)
    _run(nv, s, clock, 30)
    assert s.stop()["energy_joules"] == pytest.approx(LOAD_W * 30, abs=0.01)


def test_meter_of_several_gpus_and_restart_counts():
    meter = EnergyMeter({"GPU-a": 1.0, "GPU-b": 1.0}, interval=5)
    meter.add(0, {"GPU-a": PowerReading(1_000_000, None), "GPU-b": PowerReading(None, 300_000)})
    meter.add(10, {"GPU-a": PowerReading(2_000_000, None), "GPU-b": PowerReading(None, 100_000)})
    meter.add(20, {"GPU-a": PowerReading(500_000, None)})  # GPU-a restarted; GPU-b's read missed
    meter.add(30, {"GPU-a": PowerReading(600_000, None), "GPU-b": PowerReading(None, 100_000)})
    done = meter.summary()
    # a: 1000 J, then 500 J from its restart, then 100 J; b: trapezoids 0-10 s (2000 J), 10-30 s (2000 J)
    assert done["energy_joules"] == pytest.approx(1000 + 500 + 100 + 2000 + 2000)
    assert done["energy_source"] == "power samples"
    assert "restarted once" in done["energy_note"]
    half = EnergyMeter({"GPU-a": 1.0, "GPU-b": 1.0})
    half.add(0, {"GPU-a": PowerReading(1, None), "GPU-b": PowerReading(None, None)})
    assert half.summary()["energy_joules"] is None
    assert "1 of the 2 GPUs" in half.summary()["energy_note"]
    assert EnergyMeter({"GPU-a": 0.0}).summary()["energy_note"].endswith("its share, is unknown.")


def test_carbon_and_cost_are_the_sites_numbers():
    joules = 3.6e6 * 2.5  # 2.5 kWh
    assert kwh(joules) == 2.5
    nothing = SitePrices()
    assert nothing.co2e_grams(joules) is None and nothing.cost(10, joules) is None
    site = SitePrices(carbon_intensity=400, pue=1.5, gpu_hour_price=2.0, energy_price=0.2, currency="EUR")
    assert site.co2e_grams(joules) == 2.5 * 1.5 * 400
    cost = site.cost(10, joules)
    assert cost is not None
    assert (cost.gpu_time, cost.energy, cost.currency, cost.note) == (20.0, 0.75, "EUR", None)
    assert cost.amount == 20.75
    unmeasured = site.cost(10, None)
    assert unmeasured is not None and unmeasured.amount == 20.0 and unmeasured.energy is None
    assert unmeasured.note == "No energy was measured: the amount is the GPU time's only."
    energy_only = SitePrices(energy_price=0.3)
    assert energy_only.cost(10, joules).amount == pytest.approx(0.75)
    assert energy_only.cost(10, joules).currency is None and energy_only.cost(10, None) is None
    for bad in (float("nan"), float("inf"), -1.0):
        assert site.co2e_grams(bad) is None


def test_priced_overwrites_what_the_runner_claimed():
    claimed = JobGpuUsage(available=True, gpu_hours_allocated=1.0, energy_joules=3.6e6, co2e_grams=0.0)
    site = SitePrices(carbon_intensity=50, gpu_hour_price=3)
    priced = site.priced(claimed)
    assert priced.co2e_grams == 50.0 and priced.cost.amount == 3.0
    assert SitePrices().priced(claimed).co2e_grams is None  # a site with no numbers shows none


def test_the_physical_bound():
    assert most_joules(2, 3600) == 2 * 1500 * 3600
    assert most_joules(0, 10) == 15000  # a job counted as holding at least one device
    assert most_joules(1, -5) == 0


def test_sampling_that_stops_says_the_energy_is_not_measured(fake, tmp_path):
    reader = NvmlReader(fake(H100, "load"), env={})
    reads = iter([reader.read])

    def read():
        return next(reads)()  # the first read works; the second raises: the sampler stops, the job runs on

    s = GpuUseSampler(tmp_path, read, interval=0.05, env={}, energy=reader.read_energy)
    s.start()
    s._thread.join(timeout=10)
    written = JobGpuUsage.model_validate_json((tmp_path / SUMMARY).read_text())
    assert not written.available and written.reason == "GPU sampling stopped: StopIteration: "
    assert written.energy_note == "GPU energy is not measured: sampling stopped."
