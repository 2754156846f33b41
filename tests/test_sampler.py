import asyncio

from jupyter_gpu_env.gpu.memory import HostSample
from jupyter_gpu_env.gpu.readers import GpuReaders
from jupyter_gpu_env.gpu.reading import GpuReading
from jupyter_gpu_env.gpu.sampler import Sampler
from jupyter_gpu_env.models import GpuStatus


def fake_host(cpu_per_call: float):
    state = {"cpu": 0.0}

    def read(now: float) -> HostSample:
        state["cpu"] += cpu_per_call
        return HostSample("cgroup2", 100, 1000, True, 2.0, True, state["cpu"], now)

    return read


async def no_gpu() -> GpuReading:
    return GpuReading([], GpuStatus(available=False, reason="no_driver", message="No GPU visible: test"))


async def test_usage_is_a_rate_between_samples():
    s = Sampler(no_gpu, interval=0.1, host_reader=fake_host(0.05))
    first = await s.sample_once()
    assert first.host.cpu.usage_cores is None
    await asyncio.sleep(0.1)
    second = await s.sample_once()
    assert 0 < second.host.cpu.usage_cores <= 0.6


async def test_history_is_bounded_ring():
    s = Sampler(no_gpu, interval=0.1, history_seconds=0.3, host_reader=fake_host(0.0))
    for _ in range(6):
        await s.sample_once()
    assert len(s.history()) == 3
    assert [h.sampled_at for h in s.history()] == sorted(h.sampled_at for h in s.history())


async def test_background_loop_samples_once_per_interval():
    s = Sampler(no_gpu, interval=0.1, host_reader=fake_host(0.0))
    await s.snapshot()
    await asyncio.sleep(0.55)
    await s.stop()
    assert 4 <= s.samples_taken <= 8


async def test_broken_gpu_reader_keeps_memory_alive():
    async def broken() -> GpuReading:
        raise OSError("NVML exploded")

    s = Sampler(broken, interval=0.1, host_reader=fake_host(0.0))
    snap = await s.sample_once()
    assert snap.host.memory.used_bytes == 100
    assert snap.gpu_status.available is False
    assert "NVML exploded" in snap.gpu_status.message


async def test_this_machine_says_why_no_gpu():
    readers = GpuReaders()
    try:
        reading = await readers.read()
    finally:
        readers.close()
    assert reading.devices == []
    assert reading.status.reason in {"no_driver", "no_nvml", "no_device"}
    assert reading.status.message.startswith("No GPU visible")
