"""CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES against devices from recorded outputs."""

from __future__ import annotations

import pytest

from jupyter_gpu_env.gpu.sources import smi
from jupyter_gpu_env.gpu.visibility import (
    DeviceFilter,
    mark_visible,
    parse_cuda_visible_devices,
    parse_nvidia_visible_devices,
)

from .fixture_files import H100X8_QUERY, H200_MIG

EIGHT_UUIDS = ["GPU-ee7954ec", "GPU-47daa2ad", "GPU-167d8376", "GPU-afe9f2ed"]  # prefixes of gpud's GPUs 0-3


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, DeviceFilter("all")),
        ("", DeviceFilter("none")),
        ("0,2", DeviceFilter("list", ("0", "2"))),
        (" MIG-abc , 1", DeviceFilter("list", ("MIG-abc", "1"))),
        ("-1", DeviceFilter("list", ("-1",))),
    ],
)
def test_parse_cuda(value, expected):
    assert parse_cuda_visible_devices(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, DeviceFilter("all")),
        ("", DeviceFilter("all")),
        ("void", DeviceFilter("all")),
        ("all", DeviceFilter("all")),
        ("none", DeviceFilter("none")),
        ("GPU-1,MIG-2", DeviceFilter("list", ("GPU-1", "MIG-2"))),
    ],
)
def test_parse_nvidia(value, expected):
    assert parse_nvidia_visible_devices(value) == expected


@pytest.fixture
def eight(fixture_text):
    return smi.parse_smi_query(fixture_text(H100X8_QUERY))


@pytest.fixture
def h200(section):
    return smi.join_listing(
        smi.parse_smi_query(section(H200_MIG, "load", "nvidia-smi -q")),
        smi.parse_smi_list(section(H200_MIG, "capabilities", "nvidia-smi -L")),
    )


def visible(devices):
    return [d.index for d in devices if d.visible]


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, list(range(8))),
        ({"CUDA_VISIBLE_DEVICES": "3,5"}, [3, 5]),
        ({"CUDA_VISIBLE_DEVICES": ""}, []),
        ({"CUDA_VISIBLE_DEVICES": "-1"}, []),
        ({"CUDA_VISIBLE_DEVICES": "1,9,2"}, [1]),  # CUDA stops at the first device that does not exist
        ({"CUDA_VISIBLE_DEVICES": ",".join(EIGHT_UUIDS[2:])}, [2, 3]),  # unique UUID prefixes
        ({"CUDA_VISIBLE_DEVICES": "GPU-b0fe4996-1f7c-91f6-0ccd-08ae3b7e23c5"}, [7]),
        ({"CUDA_VISIBLE_DEVICES": "GPU-,0"}, []),  # ambiguous prefix
        ({"CUDA_VISIBLE_DEVICES": "all"}, []),  # not a CUDA word
        ({"NVIDIA_VISIBLE_DEVICES": "none"}, []),
        ({"NVIDIA_VISIBLE_DEVICES": "void"}, list(range(8))),
        ({"NVIDIA_VISIBLE_DEVICES": "2,3"}, list(range(8))),  # host indices: the runtime already applied them
        ({"NVIDIA_VISIBLE_DEVICES": "GPU-2b6f61f9-8b00-3b57-d912-b62792120662"}, [4]),
        ({"NVIDIA_VISIBLE_DEVICES": "GPU-00000000-dead-beef-0000-000000000000"}, list(range(8))),  # unmatched
        ({"NVIDIA_VISIBLE_DEVICES": "GPU-2b6f61f9", "CUDA_VISIBLE_DEVICES": "5"}, []),
        ({"NVIDIA_VISIBLE_DEVICES": "GPU-2b6f61f9,GPU-980ea11b", "CUDA_VISIBLE_DEVICES": "5"}, [5]),
    ],
)
def test_eight_gpus(eight, env, expected):
    assert visible(mark_visible(eight, env)) == expected
    assert visible(mark_visible(eight, {})) == list(range(8))  # marking again starts afresh


def test_mig_uuid_admits_only_that_slice(h200):
    [gpu] = mark_visible(h200, {"CUDA_VISIBLE_DEVICES": "MIG-00000003-0000-0000-0000-000000000003"})
    assert [m.visible for m in gpu.mig_devices] == [False, False, False, True, False]
    assert gpu.visible


def test_gpu_admits_its_mig_devices(h200):
    [gpu] = mark_visible(h200, {"CUDA_VISIBLE_DEVICES": "0"})
    assert all(m.visible for m in gpu.mig_devices)
    [gpu] = mark_visible(h200, {"NVIDIA_VISIBLE_DEVICES": "GPU-00000000-0000-0000-0000-000000000000"})
    assert all(m.visible for m in gpu.mig_devices)


def test_no_mig_device_admitted_hides_the_gpu(h200):
    [gpu] = mark_visible(h200, {"CUDA_VISIBLE_DEVICES": "MIG-ffffffff"})
    assert not gpu.visible and not any(m.visible for m in gpu.mig_devices)


def test_legacy_mig_names_match_by_gi_and_ci(h200):
    h200[0].uuid = "GPU-5c89852c-d268-c3f3-1b07-005d5ae1dc3f"
    [gpu] = mark_visible(h200, {"CUDA_VISIBLE_DEVICES": "MIG-GPU-5c89852c-d268-c3f3-1b07-005d5ae1dc3f/2/1"})
    assert [m.visible for m in gpu.mig_devices] == [False, True, False, False, False]  # the 2c.3g.71gb
