"""The recorded-output source: the sampler's GPU reader over files recorded on real GPUs."""

from __future__ import annotations

import os

import pytest

from jupyter_gpu_env.gpu.sources.recorded import RecordedSource, parse_capture

from .. import fixture_files
from ..fixture_files import (
    A100_XML,
    H100,
    H100_MIG,
    H100X8_QUERY,
    H100X8_TABLE,
    H200_MIG,
    L_7X1G,
    L_BALANCED,
    LGI_A100,
    MIB,
)


def test_every_fixture_is_read_by_some_test(gpu_fixtures):
    known = {v for k, v in vars(fixture_files).items() if k.isupper() and isinstance(v, str)}
    assert {p.name for p in gpu_fixtures.iterdir()} - {"SOURCES.md"} == known


def test_capture_sections(fixture_text):
    sections = parse_capture(fixture_text(H100_MIG))
    commands = [(s.phase, s.command) for s in sections]
    assert ("capabilities", "nvidia-smi -L") in commands
    assert [c for c in commands if c[1] in ("nvidia-smi", "nvidia-smi -q")] == [
        ("idle", "nvidia-smi"),
        ("idle", "nvidia-smi -q"),
        ("load", "nvidia-smi"),
        ("load", "nvidia-smi -q"),
    ]
    version = next(s for s in sections if s.command == "nvidia-smi --version")
    assert "DRIVER version      : 590.48.01" in version.body


def test_capture_file_reads_its_load_phase(gpu_fixtures):
    reading = RecordedSource(gpu_fixtures / H100_MIG, env={}).read()
    assert (reading.status.reason, reading.status.available) == ("recorded", True)
    assert "not a live reading" in reading.status.message
    [gpu] = reading.devices
    assert gpu.memory_used_bytes == 11125 * MIB
    assert [(m.profile, m.uuid) for m in gpu.mig_devices][2] == (
        "1g.10gb",
        "MIG-00000002-0000-0000-0000-000000000002",
    )
    assert [p.pid for p in gpu.mig_devices[0].processes] == [21180, 21181, 21198]


def test_phase_fragment(gpu_fixtures):
    reading = RecordedSource(f"{gpu_fixtures / H200_MIG}#idle", env={}).read()
    [gpu] = reading.devices
    assert gpu.memory_used_bytes == 55 * MIB
    assert [m.memory_used_bytes // MIB for m in gpu.mig_devices] == [22, 22, 17, 9, 9]
    assert not any(m.processes for m in gpu.mig_devices)
    assert "(idle)" in reading.status.message


@pytest.mark.parametrize(
    ("name", "gpus", "migs"),
    [
        (A100_XML, 1, 4),
        (H100_MIG, 1, 4),
        (H200_MIG, 1, 5),
        (H100, 1, 0),
        (H100X8_QUERY, 8, 0),
        (H100X8_TABLE, 8, 0),
        (L_7X1G, 1, 7),
        (L_BALANCED, 1, 4),
    ],
)
def test_any_recorded_output_is_recognised(gpu_fixtures, name, gpus, migs):
    reading = RecordedSource(gpu_fixtures / name, env={}).read()
    assert reading.status.available, reading.status.message
    assert len(reading.devices) == gpus
    assert sum(len(d.mig_devices) for d in reading.devices) == migs


def test_unrecognised_or_missing(gpu_fixtures, tmp_path):
    for source in (gpu_fixtures / LGI_A100, tmp_path / "nothing-here"):
        reading = RecordedSource(source).read()
        assert (reading.status.reason, reading.status.available, reading.devices) == ("recorded", False, [])
        assert "could not be read" in reading.status.message


def test_folder_convention(tmp_path, section):
    (tmp_path / "nvidia-smi-q.txt").write_text(section(H100_MIG, "load", "nvidia-smi -q"))
    reading = RecordedSource(tmp_path, env={}).read()
    [gpu] = reading.devices
    assert [m.profile_inferred for m in gpu.mig_devices] == [True] * 4 and gpu.mig_devices[0].uuid is None
    (tmp_path / "nvidia-smi-L.txt").write_text(section(H100_MIG, "capabilities", "nvidia-smi -L"))
    [gpu] = RecordedSource(tmp_path, env={}).read().devices
    assert [m.profile for m in gpu.mig_devices] == ["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"]
    assert not any(m.profile_inferred for m in gpu.mig_devices)
    assert gpu.mig_devices[3].uuid == "MIG-00000003-0000-0000-0000-000000000003"


def test_folder_prefers_xml(tmp_path, fixture_text, section):
    (tmp_path / "nvidia-smi.txt").write_text(section(H100, "load", "nvidia-smi"))
    (tmp_path / "nvidia-smi-q.xml").write_text(fixture_text(A100_XML))
    [gpu] = RecordedSource(tmp_path, env={}).read().devices
    assert gpu.name == "NVIDIA A100-SXM4-80GB"
    (tmp_path / "nvidia-smi-q.xml").unlink()
    [gpu] = RecordedSource(tmp_path, env={}).read().devices
    assert (gpu.name, gpu.utilization_percent) == ("NVIDIA H100 80GB HBM3", 100.0)


def test_folder_with_captures(tmp_path, fixture_text):
    (tmp_path / "h200.txt").write_text(fixture_text(H200_MIG))
    [gpu] = RecordedSource(tmp_path, env={}).read().devices
    assert gpu.name == "NVIDIA H200"
    (tmp_path / "h100.txt").write_text(fixture_text(H100_MIG))
    reading = RecordedSource(tmp_path, env={}).read()
    assert not reading.status.available and "2 capture files" in reading.status.message


def test_rereads_only_on_change(tmp_path, fixture_text, section):
    target = tmp_path / "nvidia-smi-q.txt"
    target.write_text(section(H100, "idle", "nvidia-smi -q"))
    source = RecordedSource(tmp_path, env={})
    first = source.read().devices[0]
    first.processes.clear()
    first.memory_used_bytes = 1  # callers may annotate what they get; the cache stays intact
    assert source.read().devices[0].memory_used_bytes == 0
    target.write_text(section(H100, "load", "nvidia-smi -q"))
    os.utime(target, ns=(target.stat().st_atime_ns, target.stat().st_mtime_ns + 10**9))
    assert source.read().devices[0].memory_used_bytes == 19818 * MIB


def test_visibility_applies(gpu_fixtures):
    env = {"CUDA_VISIBLE_DEVICES": "MIG-00000001-0000-0000-0000-000000000001"}
    [gpu] = RecordedSource(gpu_fixtures / H100_MIG, env=env).read().devices
    assert [m.visible for m in gpu.mig_devices] == [False, True, False, False]


def test_all_hidden_says_why(gpu_fixtures):
    reading = RecordedSource(gpu_fixtures / H100X8_QUERY, env={"NVIDIA_VISIBLE_DEVICES": "none"}).read()
    assert len(reading.devices) == 8 and not any(d.visible for d in reading.devices)
    assert (reading.status.available, reading.status.reason) == (False, "recorded")
    assert "NVIDIA_VISIBLE_DEVICES='none'" in reading.status.message
