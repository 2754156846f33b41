from jupyter_gpu_env.gpu.idle import IdleTracker
from jupyter_gpu_env.models import (
    CpuUsage,
    GpuDevice,
    GpuSnapshot,
    GpuStatus,
    HostResources,
    KernelUsage,
    MemoryUsage,
)


def snap(t, util, held=True):
    return GpuSnapshot(
        sampled_at=t,
        interval_seconds=1,
        host=HostResources(
            source="host",
            memory=MemoryUsage(used_bytes=1, limit_bytes=2, limited=False),
            cpu=CpuUsage(limit_cores=1, limited=False),
        ),
        gpus=[GpuDevice(index=0, name="H100", utilization_percent=util)],
        gpu_status=GpuStatus(available=True, reason="ok", message="1 GPU"),
        kernels=[
            KernelUsage(
                kernel_id="k1", kernel_name="python3", pid=1, processes=1, host_memory_bytes=1,
                gpu_memory_bytes=1 << 30 if held else None,
            )
        ],
    )  # fmt: skip


def test_idle_after_threshold_and_reset_by_work():
    t = IdleTracker(60)
    assert not t.update(snap(0, 0)).idle
    state = t.update(snap(61, 0))
    assert state.idle and state.kernels == ["k1"] and "idle" in state.message
    assert not t.update(snap(62, 35)).idle  # work resets the clock
    assert not t.update(snap(100, 0)).idle
    assert t.update(snap(163, 0)).idle


def test_not_idle_without_held_memory_or_without_utilization():
    t = IdleTracker(1)
    t.update(snap(0, 0, held=False))
    assert not t.update(snap(10, 0, held=False)).idle
    mig = snap(0, None)
    state = t.update(mig)
    assert not state.idle and "not reported" in state.message


def test_a_short_idle_time_is_told_in_seconds_not_as_zero_minutes():
    t = IdleTracker(10)
    t.update(snap(0, 0))
    assert "idle for 12 s." in t.update(snap(12, 0)).message
    assert "idle for 2 min." in t.update(snap(125, 0)).message
    assert "idle for 1 h 5 min." in t.update(snap(3900, 0)).message
