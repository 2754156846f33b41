"""MIG profile names: parsing, building, and the memory/SM inference, checked against real data."""

from __future__ import annotations

import json
import re

import pytest

from jupyter_gpu_env.gpu import mig

from .fixture_files import GFD_LABELS, MIB, MIGPARTED_DEFAULT, MIGPARTED_EXAMPLES


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1g.10gb", mig.MigProfile(1, 10)),
        ("MIG 3g.40gb", mig.MigProfile(3, 40)),
        ("1c.3g.71gb", mig.MigProfile(3, 71, 1)),
        ("1g.5gb+me", mig.MigProfile(1, 5, None, "+me")),
        ("1g.24gb+me.all", mig.MigProfile(1, 24, None, "+me.all")),
        ("2g.48gb-me", mig.MigProfile(2, 48, None, "-me")),
        ("1g.10gb+gfx", mig.MigProfile(1, 10, None, "+gfx")),
        ("gpu", None),
        ("1g.10", None),
    ],
)
def test_parse_profile(text, expected):
    assert mig.parse_profile(text) == expected


def test_names_round_trip_and_gpu_instance():
    p = mig.parse_profile("2c.3g.71gb")
    assert p.name == "2c.3g.71gb" and p.gpu_instance_name == "3g.71gb"
    assert mig.profile_name(3, 40, 3) == "3g.40gb"  # a CI as large as its GI takes no prefix


@pytest.mark.parametrize(
    ("name", "profile"),
    [
        ("NVIDIA H100 80GB HBM3 MIG 1g.10gb", "1g.10gb"),
        ("NVIDIA H200 MIG 1c.3g.71gb", "1c.3g.71gb"),
        ("NVIDIA-H100-80GB-HBM3-MIG-2g.20gb", "2g.20gb"),
        ("nvidia.com/mig-1g.5gb", "1g.5gb"),
        ("NVIDIA H100 80GB HBM3", None),
    ],
)
def test_profile_from_device_name(name, profile):
    assert mig.profile_from_device_name(name) == profile


@pytest.mark.parametrize(
    ("total_mib", "gb"),
    [(81559, 80), (81920, 80), (143771, 141), (40960, 40)],  # H100 and H200 captures, A100 XML
)
def test_marketing_size(total_mib, gb):
    assert mig.marketing_gb(total_mib * MIB) == gb


@pytest.mark.parametrize(
    ("gi_mib", "total_mib", "label"),
    [
        (9984, 81559, 10),  # H100 1g.10gb (captures, GFD labels)
        (20096, 81559, 20),  # H100 2g.20gb
        (40448, 81559, 40),  # H100 3g.40gb (capture); GFD's 40320 below
        (40320, 81559, 40),
        (19968, 81920, 20),  # A100-80GB 1g.20gb (telegraf XML)
        (16384, 143771, 18),  # H200 1g.18gb: an eighth of 141 GB, not 16 GiB
        (33280, 143771, 35),  # H200 2g.35gb
        (71424, 143771, 71),  # H200 3g.71gb: 70.5 rounds up
    ],
)
def test_memory_label(gi_mib, total_mib, label):
    assert mig.memory_label_gb(gi_mib * MIB, total_mib * MIB) == label


def test_inference_needs_a_known_generation():
    assert mig.sm_per_slice("Hopper") == 16 and mig.sm_per_slice(None, "NVIDIA A100-SXM4-80GB") == 14
    assert mig.sm_per_slice(None, "NVIDIA GH200 480GB") == 16
    assert mig.sm_per_slice("Blackwell", "NVIDIA B200") is None
    assert mig.infer_profile(16, 9984 * MIB, 81559 * MIB, None) is None
    assert mig.infer_profile(60, 40448 * MIB, 81559 * MIB, 16) == "3g.40gb"  # 60 SMs, not 3 x 16
    assert mig.infer_profile(132, 81559 * MIB, 81559 * MIB, 16) == "7g.80gb"
    assert mig.infer_profile(32, 71424 * MIB, 143771 * MIB, 16, gpu_instance_sms=48) == "2c.3g.71gb"


def test_gfd_labels_agree_with_naming(fixture_text):
    """GPU feature discovery publishes, per profile, the memory and SMs NVML reports for it."""
    labels = json.loads(fixture_text(GFD_LABELS))
    total = int(labels["nvidia.com/gpu.memory"]) * MIB
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3" and total == 81559 * MIB
    counts = {}
    for key, value in labels.items():
        m = re.fullmatch(r"nvidia\.com/mig-(.+)\.count", key)
        if not m:
            continue
        name = m[1]
        counts[name] = int(value)
        p = mig.parse_profile(name)
        prefix = f"nvidia.com/mig-{name}"
        assert int(labels[f"{prefix}.slices.gi"]) == p.gpu_slices
        assert mig.memory_label_gb(int(labels[f"{prefix}.memory"]) * MIB, total) == p.memory_gb
        sms = int(labels[f"{prefix}.multiprocessors"])
        assert (
            mig.infer_profile(sms, int(labels[f"{prefix}.memory"]) * MIB, total, mig.sm_per_slice("hopper"))
            == name
        )
        assert mig.profile_from_device_name(labels[f"{prefix}.product"]) == name
    assert counts == {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}  # mig.config=all-balanced


@pytest.mark.parametrize("name", [MIGPARTED_DEFAULT, MIGPARTED_EXAMPLES])
def test_every_mig_parted_profile_parses(fixture_text, name):
    yaml = pytest.importorskip("yaml")
    config = yaml.safe_load(fixture_text(name))
    profiles = {
        profile
        for entries in config["mig-configs"].values()
        for entry in entries
        for profile in (entry.get("mig-devices") or {})
    }
    assert profiles  # all-1g.10gb, all-balanced, ...
    for profile in profiles:
        parsed = mig.parse_profile(profile)
        assert parsed is not None, profile
        assert parsed.name == profile
    if name == MIGPARTED_EXAMPLES:
        assert profiles == {"1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb"}
    else:
        assert {
            "1g.10gb",
            "3g.40gb",
            "7g.80gb",
            "1g.18gb",
            "1g.24gb+gfx",
            "1g.24gb+me.all",
            "2g.48gb-me",
        } <= profiles
