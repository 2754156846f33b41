"""The right-size choice, pure, against MIG devices recorded on real A100s and H100s."""

from __future__ import annotations

import pytest

from jupyter_gpu_env.efficiency import fit, words
from jupyter_gpu_env.gpu.sources.recorded import capture_devices, devices_from_text
from jupyter_gpu_env.models.gpu.advice import SuggestedResources

from .fixture_files import A100_XML, H100, H100_MIG, MIB

GB = 10**9


def measured_profiles(devices):
    return {m.profile: m.memory_total_bytes for d in devices for m in d.mig_devices if m.profile}


def test_an_h100s_slices_as_recorded_hold_more_than_their_names_promise(fixture_text):
    seen = measured_profiles(capture_devices(fixture_text(H100_MIG)))
    assert set(seen) == {"3g.40gb", "2g.20gb", "1g.10gb"}
    for profile, memory in seen.items():
        assert memory >= fit.profile_memory(profile)  # the name is a safe lower bound
    assert fit.profile_memory("1g.10gb", seen) == seen["1g.10gb"]
    assert fit.profile_memory("1g.10gb") == 10 * GB and fit.profile_memory("bogus") is None


@pytest.mark.parametrize(
    ("peak_gb", "headroom", "expected"),
    [
        (3.1, 0.2, "1g.10gb"),  # the example: 3.1 GB peak on an H100
        (8.5, 0.2, "1g.10gb"),  # 10.2 GB: more than the name's 10 GB, less than the 10.47 GB it holds
        (9.0, 0.2, "2g.20gb"),  # 10.8 GB: more than a 1g.10gb holds
        (9.0, 0.0, "1g.10gb"),
        (30.0, 0.2, "3g.40gb"),
        (36.0, 0.2, None),  # 43.2 GB: no slice, so one whole H100
    ],
)
def test_the_smallest_h100_slice_that_holds_the_peak_with_headroom(fixture_text, peak_gb, headroom, expected):
    seen = measured_profiles(capture_devices(fixture_text(H100_MIG)))
    (whole,) = capture_devices(fixture_text(H100))
    candidates = fit.offers(
        ["1g.10gb", "2g.20gb", "3g.40gb"],  # all-balanced, as the recorded H100 is cut
        whole_gpus=1,
        gpu_memory_bytes=whole.memory_total_bytes,
        measured=seen,
    )
    chosen = fit.choose(int(peak_gb * GB), headroom, candidates)
    assert chosen is not None
    if expected is None:
        assert chosen.resources() == SuggestedResources(gpus=1, memory_bytes=whole.memory_total_bytes)
    else:
        assert chosen.mig_profile == expected


def test_an_a100s_1g20gb_slices_and_what_nothing_offered_holds(fixture_text):
    devices = devices_from_text(fixture_text(A100_XML))
    seen = measured_profiles(devices)
    assert seen == {"1g.20gb": 19968 * MIB}
    only_slices = fit.offers(["1g.20gb"], whole_gpus=0, gpu_memory_bytes=None, measured=seen)
    assert fit.choose(15 * GB, 0.2, only_slices).mig_profile == "1g.20gb"  # 18 GB of 20.9
    assert fit.choose(18 * GB, 0.2, only_slices) is None  # 21.6 GB: nothing this backend offers holds it


def test_whole_gpus_of_unknown_memory_and_several_gpus():
    unknown = fit.offers([], whole_gpus=None, gpu_memory_bytes=None)
    assert fit.choose(500 * GB, 0.2, unknown).gpus == 1  # nothing measured the GPU: one is the guess
    known = fit.offers([], whole_gpus=4, gpu_memory_bytes=80 * GB)
    assert fit.choose(100 * GB, 0.2, known).gpus == 2
    assert fit.choose(400 * GB, 0.2, known) is None


def test_the_sentence_says_why_in_one_line():
    text = words.sentence(
        subject=words.measured_what(3, False),
        peak_bytes=int(3.1 * GB),
        device="NVIDIA H100 80GB HBM3",
        mean_utilization=23.0,
        suggestion=SuggestedResources(mig_profile="1g.10gb"),
        headroom=0.2,
        backend="slurm",
        current=SuggestedResources(gpus=1),
        idle_percent=77.0,
    )
    assert text == (
        "The last 3 runs peaked at 3.1 GB and used 23 % of an H100: a 1g.10gb slice fits; "
        "a whole GPU would sit idle 77 % of the time."
    )
    assert words.gpu_short_name("NVIDIA A100-SXM4-80GB") == "A100"
    assert words.with_article("T4") == "a T4"
    kernel = words.sentence(
        subject=words.measured_what(0, True), peak_bytes=2 * GB, device=None, mean_utilization=None,
        suggestion=None, headroom=0.2, backend="local", current=None, idle_percent=None,
    )  # fmt: skip
    assert kernel == (
        "The kernel open on it holds 2.0 GB: nothing the 'local' backend offers holds that with 20% headroom."
    )
