"""A job's energy, carbon and cost over a real server configured with a site's numbers, from a job history
in its store: the job's answer, its listing, its GPU series and the usage ledger all price the measured
energy at the site's carbon intensity, PUE and prices, whatever the runner's file claimed."""

from __future__ import annotations

import time

import pytest
from helpers import body

from jupyter_gpu_env.models.jobs import Cost, Job, JobGpuDevice, JobGpuUsage
from jupyter_gpu_env.models.resources import JobResources

KWH = 3.6e6


@pytest.fixture
def jp_server_config(jp_server_config, tmp_path):
    return {
        **jp_server_config,
        "GpuEnvApp": {
            "state_dir": str(tmp_path / "state"),
            "carbon_intensity": 250.0,
            "pue": 1.2,
            "gpu_hour_price": 3.0,
            "energy_price": 0.2,
            "currency": "EUR",
        },
    }


def _job(job_id: str, kwh: float | None, ago: float) -> Job:
    now = time.time()
    return Job(
        id=job_id, name="train", backend="local", state="succeeded", notebook_path="train.ipynb",
        job_dir=f"jobs/{job_id}", input_path="x", output_path="y", log_path="z",
        created_at=now - ago, started_at=now - ago, finished_at=now - ago + 3600,
        resources=JobResources(gpus=1),
        gpu=JobGpuUsage(
            available=True, devices=[JobGpuDevice(name="NVIDIA H100 80GB HBM3")], gpu_hours_allocated=1.0,
            energy_joules=None if kwh is None else kwh * KWH, energy_source=None if kwh is None else "counter",
            co2e_grams=0.5, cost=Cost(amount=0.0, currency="XXX"),  # what a runner's file might have said
        ),
    )  # fmt: skip


async def test_a_jobs_energy_is_priced_where_it_is_answered(api, jp_serverapp):
    store = jp_serverapp.web_app.settings["gpu_env_services"].jobs.store
    await store.insert(_job("00000000c0a1", 2.0, ago=2 * 3600))
    await store.insert(_job("00000000c0a2", None, ago=3 * 3600))

    job = await body(await api("jobs", "00000000c0a1"))
    gpu = job["gpu"]
    assert gpu["energy_joules"] == 2 * KWH and gpu["energy_source"] == "counter"
    assert gpu["co2e_grams"] == pytest.approx(2 * 1.2 * 250)
    assert gpu["cost"] == {
        "amount": pytest.approx(3.0 + 2 * 1.2 * 0.2),
        "currency": "EUR",
        "gpu_time": 3.0,
        "energy": pytest.approx(0.48),
        "note": None,
    }
    listed = {j["id"]: j["gpu"] for j in (await body(await api("jobs")))["items"]}
    assert listed["00000000c0a1"] == gpu
    unmeasured = listed["00000000c0a2"]
    assert unmeasured["co2e_grams"] is None  # no energy: no carbon, and the runner's figure is not shown
    assert unmeasured["cost"]["amount"] == 3.0 and unmeasured["cost"]["note"].startswith("No energy")
    series = await body(await api("jobs", "00000000c0a1", "gpu"))
    assert series["summary"] == gpu

    usage = await body(await api("jobs", "usage"))
    total = usage["total"]
    assert total["gpu_energy_kwh"] == pytest.approx(2.0)
    assert total["gpu_hours"] == pytest.approx(2.0) and total["gpu_hours_energy_measured"] == pytest.approx(
        1.0
    )
    assert total["co2e_grams"] == pytest.approx(600.0)
    assert total["cost"]["amount"] == pytest.approx(2 * 3.0 + 0.48) and total["cost"]["currency"] == "EUR"
    weeks = await body(await api("jobs", "usage", "weeks", params={"weeks": 2}))  # a Monday may split them
    assert sum(w["total"]["co2e_grams"] or 0 for w in weeks["weeks"]) == pytest.approx(600.0)


async def test_the_advice_line_estimates_a_runs_energy_from_the_notebooks_succeeded_runs(api, jp_serverapp):
    store = jp_serverapp.web_app.settings["gpu_env_services"].jobs.store
    for n, (kwh, state) in enumerate(
        [(1.0, "succeeded"), (3.0, "succeeded"), (2.0, "succeeded"), (9.0, "failed")]
    ):
        job = _job(f"00000000d0a{n}", kwh, ago=4000 - n * 100)
        gpu = job.gpu.model_copy(update={"peak_memory_bytes": 3 * 10**9, "memory_total_bytes": 80 * 10**9})
        await store.insert(job.model_copy(update={"state": state, "gpu": gpu}))

    advice = await body(await api("jobs", "advice", params={"notebook_path": "train.ipynb"}))
    # the failed run stopped short: not a run's energy
    assert advice["energy"] == {"joules": 2 * KWH, "runs": 3, "source": "counter", "co2e_grams": 600.0}
    assert [r["energy_joules"] for r in advice["runs"]] == [9 * KWH, 2 * KWH, 3 * KWH, 1 * KWH]
    assert advice["sentence"].endswith(" A run takes about 2.00 kWh (600 g CO2e), the median of the last 3.")


def test_energy_words():
    from jupyter_gpu_env.efficiency.words import energy_sentence, energy_text

    assert [energy_text(j) for j in (3.6e3 * 3.5, 3.6e3 * 35, 0.42 * KWH, 1250 * KWH)] == [
        "3.5 Wh", "35 Wh", "0.42 kWh", "1,250 kWh",
    ]  # fmt: skip
    assert energy_sentence(0.42 * KWH, 1, None, True) == (
        "A run takes about 0.42 kWh (a share of a whole GPU's energy), as the last one did."
    )
    assert (
        energy_sentence(KWH, 2, 1500.0, False)
        == "A run takes about 1.00 kWh (1.5 kg CO2e), the median of the last 2."
    )
