"""The NVML adapter against a fake NVML whose values come from recorded captures.

The fake is :mod:`fake_nvml`'s.
"""

from __future__ import annotations

import pytest

from jupyter_gpu_env.gpu.sources.nvml import NvmlReader

from ..fake_nvml import (
    DRIVER_NOT_LOADED,
    GPU_IS_LOST,
    LIBRARY_NOT_FOUND,
    NO_PERMISSION,
)
from ..fixture_files import H100, H100_MIG, H200_MIG, MIB


def rows(gpu):
    return [
        (m.index, m.uuid, m.profile, m.gpu_instance_id, m.compute_instance_id, m.sm_count, m.memory_used_bytes // MIB, m.memory_total_bytes // MIB)
        for m in gpu.mig_devices
    ]  # fmt: skip


def procs(items):
    return [
        (p.pid, p.used_memory_bytes // MIB, p.gpu_instance_id, p.compute_instance_id, p.name) for p in items
    ]


def test_h100_mig_under_load(fake):
    reading = NvmlReader(fake(H100_MIG), env={}).read()
    assert reading.status.reason == "ok" and reading.status.available
    [gpu] = reading.devices
    assert (gpu.index, gpu.name, gpu.uuid) == (
        0,
        "NVIDIA H100 80GB HBM3",
        "GPU-00000000-0000-0000-0000-000000000000",
    )
    # 11125 MiB used as nvidia-smi shows it: the v2 figure, without the 479 MiB reserve.
    assert (gpu.memory_used_bytes, gpu.memory_total_bytes) == (11125 * MIB, 81559 * MIB)
    assert gpu.utilization_percent is None and gpu.mig_enabled
    assert rows(gpu) == [
        (0, "MIG-00000000-0000-0000-0000-000000000000", "3g.40gb", 2, 0, 60, 11091, 40448),
        (1, "MIG-00000001-0000-0000-0000-000000000001", "2g.20gb", 3, 0, 32, 17, 20096),
        (2, "MIG-00000002-0000-0000-0000-000000000002", "1g.10gb", 9, 0, 16, 9, 9984),
        (3, "MIG-00000003-0000-0000-0000-000000000003", "1g.10gb", 10, 0, 16, 9, 9984),
    ]
    assert procs(gpu.mig_devices[0].processes) == [
        (21180, 2296, 2, 0, "/root/tools/memhog"),
        (21181, 1272, 2, 0, "/root/tools/memhog"),
        (21198, 7484, 2, 0, "./gpu_burn"),
    ]
    assert gpu.processes == [] and all(not m.processes for m in gpu.mig_devices[1:])
    assert all((m.placement_start, m.placement_size) == (None, None) for m in gpu.mig_devices)


@pytest.mark.parametrize("names_carry_profile", [True, False])
def test_h200_shared_gpu_instance(fake, names_carry_profile):
    [gpu] = NvmlReader(fake(H200_MIG, names_carry_profile=names_carry_profile), env={}).read().devices
    # From the device name, or rebuilt from the attributes' slice counts and memory: the same names.
    assert [m.profile for m in gpu.mig_devices] == [
        "1c.3g.71gb",
        "2c.3g.71gb",
        "2g.35gb",
        "1g.18gb",
        "1g.18gb",
    ]
    assert [(m.gpu_instance_id, m.compute_instance_id, m.sm_count) for m in gpu.mig_devices][:2] == [
        (2, 0, 16),
        (2, 1, 32),
    ]
    assert [m.memory_used_bytes // MIB for m in gpu.mig_devices] == [16925, 16925, 17, 9, 9]
    assert procs(gpu.mig_devices[1].processes) == [
        (12249, 2194, 2, 1, "/root/tools/memhog"),
        (12250, 1170, 2, 1, "/root/tools/memhog"),
        (12267, 13526, 2, 1, "./gpu_burn"),
    ]
    assert gpu.mig_devices[0].processes == []


@pytest.mark.parametrize(
    ("phase", "used", "util", "pids"), [("idle", 0, 0.0, []), ("load", 19818, 100.0, [11327, 11328, 11345])]
)
def test_h100_without_mig(fake, phase, used, util, pids):
    [gpu] = NvmlReader(fake(H100, phase), env={}).read().devices
    assert (gpu.memory_used_bytes, gpu.memory_total_bytes) == (used * MIB, 81559 * MIB)
    assert gpu.utilization_percent == util and not gpu.mig_enabled and gpu.mig_devices == []
    assert [p.pid for p in gpu.processes] == pids
    assert all(
        p.gpu_instance_id is None and p.compute_instance_id is None for p in gpu.processes
    )  # 0xFFFFFFFF
    if pids:
        assert procs(gpu.processes)[2] == (11345, 15690, None, None, "./gpu_burn")


def test_placements_where_nvml_gives_them(fake):
    nv = fake(H100_MIG, placements={2: (0, 4), 3: (4, 2), 9: (6, 1), 10: (7, 1)})
    [gpu] = NvmlReader(nv, env={}).read().devices
    assert [(m.placement_start, m.placement_size) for m in gpu.mig_devices] == [
        (0, 4),
        (4, 2),
        (6, 1),
        (7, 1),
    ]


def test_static_facts_are_read_once(fake):
    nv = fake(H100_MIG)
    reader = NvmlReader(nv, env={})
    for _ in range(3):
        reader.read()
    assert nv.calls["nvmlInit"] == 1
    assert nv.calls["nvmlDeviceGetName"] == 1 + 4  # the GPU, then each MIG device once
    assert nv.calls["nvmlDeviceGetAttributes"] == 4
    assert nv.calls["nvmlDeviceGetMaxMigDeviceCount"] == 1
    assert nv.calls["nvmlDeviceGetComputeRunningProcesses"] == 3 * 4  # live figures: every read
    reader.close()
    assert nv.calls["nvmlShutdown"] == 1


def test_visibility_from_the_environment(fake):
    env = {"NVIDIA_VISIBLE_DEVICES": "MIG-00000002-0000-0000-0000-000000000002"}
    reading = NvmlReader(fake(H100_MIG), env=env).read()
    [gpu] = reading.devices
    assert [m.visible for m in gpu.mig_devices] == [False, False, True, False]
    assert gpu.visible and reading.status.available
    reading = NvmlReader(fake(H100_MIG), env={"CUDA_VISIBLE_DEVICES": ""}).read()
    assert not reading.devices[0].visible and not reading.status.available
    assert reading.status.reason == "no_device"
    assert (
        reading.status.message
        == "No GPU visible: CUDA_VISIBLE_DEVICES='' hides the 1 GPU(s) on this machine."
    )


# --- why there is no GPU ----------------------------------------------------------------------------


def test_real_bindings_without_a_driver(tmp_path):
    pynvml = pytest.importorskip("pynvml")
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError_LibraryNotFound:
        pass
    else:  # a machine with a GPU: nothing to classify
        pynvml.nvmlShutdown()
        pytest.skip("libnvidia-ml loads here")
    reading = NvmlReader(driver_file=tmp_path / "version").read()
    assert (reading.status.reason, reading.status.available, reading.devices) == ("no_driver", False, [])
    (tmp_path / "version").write_text("NVRM version: NVIDIA UNIX x86_64 Kernel Module  590.48.01\n")
    reading = NvmlReader(driver_file=tmp_path / "version").read()
    assert reading.status.reason == "no_nvml"  # a driver, but no libnvidia-ml in this container
    assert "libnvidia-ml" in reading.status.message


@pytest.mark.parametrize(
    ("code", "driver_file", "reason"),
    [(DRIVER_NOT_LOADED, True, "no_driver"), (LIBRARY_NOT_FOUND, False, "no_driver"), (LIBRARY_NOT_FOUND, True, "no_nvml"), (NO_PERMISSION, True, "no_nvml")],
)  # fmt: skip
def test_init_failures_are_classified(fake, tmp_path, code, driver_file, reason):
    nv = fake(H100)
    nv.init_error = code
    if driver_file:
        (tmp_path / "version").write_text("NVRM")
    reading = NvmlReader(nv, driver_file=tmp_path / "version").read()
    assert reading.status.reason == reason and reading.devices == []


def test_failed_init_is_retried_slowly(fake, tmp_path):
    nv = fake(H100)
    nv.init_error = LIBRARY_NOT_FOUND
    reader = NvmlReader(nv, driver_file=tmp_path / "none", retry_seconds=3600)
    reader.read()
    reader.read()
    assert nv.calls["nvmlInit"] == 1
    reader = NvmlReader(nv, driver_file=tmp_path / "none", retry_seconds=0)
    reader.read()
    nv.init_error = None
    assert reader.read().status.reason == "ok"


def test_no_device(fake):
    nv = fake(H100)
    nv.count = 0
    reading = NvmlReader(nv, env={}).read()
    assert reading.status.reason == "no_device" and not reading.status.available


def test_lost_gpu_resets_and_recovers(fake):
    nv = fake(H100)
    reader = NvmlReader(nv, env={})
    assert reader.read().status.reason == "ok"
    nv.fail_next = GPU_IS_LOST
    lost = reader.read()
    assert lost.status.reason == "no_nvml" and "retrying" in lost.status.message
    assert nv.calls["nvmlShutdown"] == 1
    assert reader.read().status.reason == "ok" and nv.calls["nvmlInit"] == 2


def test_missing_bindings(monkeypatch, tmp_path):
    import builtins

    real_import = builtins.__import__

    def no_pynvml(name, *args, **kwargs):
        if name == "pynvml":
            raise ImportError("No module named 'pynvml'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pynvml)
    reading = NvmlReader(driver_file=tmp_path / "version").read()
    assert reading.status.reason == "no_nvml" and "nvidia-ml-py" in reading.status.message
