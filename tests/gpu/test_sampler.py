import time

from helpers import wait_until

from jupyter_gpu_env.gpu.memory import HostSample
from jupyter_gpu_env.gpu.sampler import Sampler
from jupyter_gpu_env.gpu.sources import GpuReaders
from jupyter_gpu_env.gpu.sources.reading import GpuReading
from jupyter_gpu_env.models import GpuStatus


def fake_host(cpu_per_call: float, seconds_per_call: float | None = None):
    """A host whose CPU time grows by ``cpu_per_call`` per reading; with ``seconds_per_call``, its
    readings are stamped by a clock of its own that advances that much per reading (no waiting)."""
    state = {"cpu": 0.0, "t": 0.0}

    def read(now: float) -> HostSample:
        state["cpu"] += cpu_per_call
        if seconds_per_call is not None:
            state["t"] += seconds_per_call
            now = state["t"]
        return HostSample("cgroup2", 100, 1000, True, 2.0, True, state["cpu"], now)

    return read


async def no_gpu() -> GpuReading:
    return GpuReading([], GpuStatus(available=False, reason="no_driver", message="No GPU visible: test"))


async def test_usage_is_a_rate_between_samples():
    # 0.05 s of CPU time per reading, readings 0.1 s apart on the host's clock: half a core busy.
    s = Sampler(no_gpu, interval=0.1, host_reader=fake_host(0.05, seconds_per_call=0.1))
    first = await s.sample_once()
    assert first.host.cpu.usage_cores is None
    second = await s.sample_once()
    assert second.host.cpu.usage_cores == 0.5
    # Idle between readings: no CPU time spent, zero cores (not "unknown").
    idle = Sampler(no_gpu, interval=0.1, host_reader=fake_host(0.0, seconds_per_call=0.1))
    await idle.sample_once()
    assert (await idle.sample_once()).host.cpu.usage_cores == 0.0


async def test_history_is_bounded_ring():
    s = Sampler(no_gpu, interval=0.1, history_seconds=0.3, host_reader=fake_host(0.0))
    for _ in range(6):
        await s.sample_once()
    assert len(s.history()) == 3
    assert [h.sampled_at for h in s.history()] == sorted(h.sampled_at for h in s.history())


async def test_background_loop_samples_once_per_interval():
    """This test measures elapsed time: five more samples take about five intervals, no fewer."""
    s = Sampler(no_gpu, interval=0.1, host_reader=fake_host(0.0))
    try:
        await s.snapshot()  # starts the loop and waits for its first sample
        taken, t0 = s.samples_taken, time.monotonic()
        await wait_until(
            lambda: s.samples_taken >= taken + 5, within=1.0, every=0.01, what="five more samples"
        )
        elapsed = time.monotonic() - t0
    finally:
        await s.stop()
    assert elapsed >= 0.4, f"five samples in {elapsed:.2f} s: faster than one per 0.1 s interval"


async def test_broken_gpu_reader_keeps_memory_alive():
    async def broken() -> GpuReading:
        raise OSError("NVML exploded")

    s = Sampler(broken, interval=0.1, host_reader=fake_host(0.0))
    snap = await s.sample_once()
    assert snap.host.memory.used_bytes == 100
    assert snap.gpu_status.available is False
    assert "NVML exploded" in snap.gpu_status.message


async def read_this_machine():
    readers = GpuReaders()
    try:
        return await readers.read()
    finally:
        readers.close()


async def test_without_a_driver_the_reading_says_why_no_gpu(without_gpu_driver):
    reading = await read_this_machine()
    assert reading.devices == []
    assert (reading.status.available, reading.status.reason) == (False, "no_driver")
    assert reading.status.message.startswith("No GPU visible")


async def test_this_machines_reading_shows_its_gpus_or_says_why_none():
    """This machine as it is, with or without GPUs."""
    reading = await read_this_machine()
    if reading.devices:
        assert reading.status.available is True
    else:
        assert reading.status.available is False
        assert reading.status.reason in {"no_driver", "no_nvml", "no_device"}
        assert reading.status.message.startswith("No GPU visible")
