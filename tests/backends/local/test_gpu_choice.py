"""The local backend's GPU choices, pure: allocation, and which opportunistic jobs a normal one stops."""

from __future__ import annotations

import pytest

from jupyter_gpu_env.backends.local import gpus
from jupyter_gpu_env.models.resources import JobResources

INVENTORY = gpus.parse_inventory(["GPU-a", "GPU-b:whole", "MIG-x:1g.10gb", "MIG-y:1g.10gb"])
ONE, TWO, SLICE = JobResources(gpus=1), JobResources(gpus=2), JobResources(mig_profile="1g.10gb")


def test_inventory_entries_and_their_mistakes():
    assert [(g.id, g.profile) for g in INVENTORY] == [
        ("GPU-a", None), ("GPU-b", None), ("MIG-x", "1g.10gb"), ("MIG-y", "1g.10gb")
    ]  # fmt: skip
    with pytest.raises(ValueError, match="does not name a GPU"):
        gpus.parse_inventory(["gpu zero"])
    with pytest.raises(ValueError, match="is not a MIG profile"):
        gpus.parse_inventory(["MIG-x:big"])
    with pytest.raises(ValueError, match="twice"):
        gpus.parse_inventory(["0", "0"])


def test_allocation_and_the_words_of_waiting():
    assert gpus.allocate(INVENTORY, set(), TWO) == ["GPU-a", "GPU-b"]
    assert gpus.allocate(INVENTORY, {"GPU-a"}, TWO) is None
    assert gpus.allocate(INVENTORY, {"MIG-x"}, SLICE) == ["MIG-y"]
    assert (
        gpus.waiting_words(INVENTORY, {"MIG-x", "MIG-y"}, SLICE)
        == "Waiting for a free 1g.10gb slice: 2 of 2 in use."
    )
    assert gpus.can_ever_fit(INVENTORY, JobResources(gpus=3)) == "this machine has 2 whole GPUs, not 3"
    rows = {(r.profile, r.free) for r in gpus.capacity_rows(INVENTORY, {"GPU-a", "MIG-y"})}
    assert rows == {(None, 1), ("1g.10gb", 1)}


def test_a_normal_job_stops_only_the_opportunistic_jobs_that_hold_what_it_needs():
    held = {"low-slice": ["MIG-x"], "low-new": ["GPU-b"], "low-old": ["GPU-a"], "normal": ["MIG-y"]}
    taken = {"MIG-x", "GPU-b", "GPU-a", "MIG-y"}
    newest_first = ["low-slice", "low-new", "low-old"]
    assert gpus.to_preempt(INVENTORY, held, taken, newest_first, ONE) == ["low-new"]  # one GPU, not the slice
    assert gpus.to_preempt(INVENTORY, held, taken, newest_first, TWO) == ["low-new", "low-old"]
    assert gpus.to_preempt(INVENTORY, held, taken, newest_first, SLICE) == ["low-slice"]
    # a normal job holds one of the two GPUs: stopping the other opportunistic job would not be enough
    held["normal"] = ["GPU-a"]
    assert gpus.to_preempt(INVENTORY, held, taken, ["low-new"], TWO) == []
