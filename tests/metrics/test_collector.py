"""The collector's series from a store with known records (exact values), without a server: the
ledger read on the database's thread, counters that never go back, the live GPU readings, the user
label, and one registration per process."""

from __future__ import annotations

import dataclasses

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from jupyter_gpu_env.jobs.store import JobStore
from jupyter_gpu_env.metrics.records import MetricsRecords
from jupyter_gpu_env.metrics.service import MetricsService
from jupyter_gpu_env.metrics.totals import WAIT_BUCKETS, BackendTotals, Totals, Waits
from jupyter_gpu_env.models.gpu import GpuSnapshot
from jupyter_gpu_env.models.jobs import JOB_STATES

from .ledger import T0, H, energy, ledger_jobs, running_on_a_gpu


def scrape(registry: CollectorRegistry) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample the registry serves, as Prometheus reads the text: (name, labels) -> value."""
    text = generate_latest(registry).decode()
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(samples, metric: str, /, **labels: str) -> float:
    return samples[(metric, frozenset(labels.items()))]


def names(samples) -> set[str]:
    return {name for name, _ in samples}


@pytest.fixture
def store(tmp_path):
    store = JobStore(tmp_path / "jobs.sqlite")
    yield store
    store.close()


async def test_the_ledger_reads_as_exact_series(store):
    await store.insert_many(ledger_jobs())
    await energy(store, "a", 5000.0)
    await store.delete("e")  # hidden from the jobs, kept in the ledger
    registry = CollectorRegistry()
    service = MetricsService(store, lambda: None, registry=registry)
    await service.start()
    await service.refresh()  # as the timer does (the first reading runs in the background)
    try:
        got = scrape(registry)
    finally:
        await service.stop()

    # the visible jobs, every state of every backend named (0 where none)
    jobs = {
        (b, s): value(got, "jupyter_gpu_env_jobs", backend=b, state=s)
        for b in ("local", "slurm")
        for s in JOB_STATES
    }
    assert {k: n for k, n in jobs.items() if n} == {
        ("local", "succeeded"): 1, ("local", "running"): 1, ("local", "queued"): 1, ("slurm", "failed"): 1,
    }  # fmt: skip
    local = {"backend": "local"}
    assert value(got, "jupyter_gpu_env_gpu_allocated_seconds_total", **local) == pytest.approx(H + 360)
    assert value(got, "jupyter_gpu_env_gpu_used_seconds_total", **local) == pytest.approx(H / 2)
    assert value(got, "jupyter_gpu_env_gpu_measured_seconds_total", **local) == pytest.approx(H)
    assert value(got, "jupyter_gpu_env_gpu_idle_seconds_total", **local) == pytest.approx(H / 4)
    assert value(got, "jupyter_gpu_env_gpu_energy_joules_total", **local) == 5000.0
    slurm = {"backend": "slurm"}
    assert value(got, "jupyter_gpu_env_gpu_allocated_seconds_total", **slurm) == pytest.approx(H)
    for name in ("used", "measured", "idle"):
        assert value(got, f"jupyter_gpu_env_gpu_{name}_seconds_total", **slurm) == 0.0
    assert value(got, "jupyter_gpu_env_gpu_energy_joules_total", **slurm) == 0.0  # NULL-safe

    # queue waits: local 10, 600 (running), 45 (deleted); slurm 4000; D never started
    def buckets(backend: str) -> dict[str, float]:
        return {
            le: value(got, "jupyter_gpu_env_queue_wait_seconds_bucket", backend=backend, le=le)
            for le in [*(repr(b) for b in WAIT_BUCKETS), "+Inf"]
        }

    assert buckets("local") == {
        "10.0": 1, "30.0": 1, "60.0": 2, "300.0": 2, **{le: 3 for le in list(buckets("local"))[4:]},
    }  # fmt: skip
    assert value(got, "jupyter_gpu_env_queue_wait_seconds_count", **local) == 3
    assert value(got, "jupyter_gpu_env_queue_wait_seconds_sum", **local) == 655.0
    assert [n for n in buckets("slurm").values()] == [0] * 7 + [1] * 5  # 4000 s: above 1 h, within 3 h
    assert value(got, "jupyter_gpu_env_queue_wait_seconds_sum", **slurm) == 4000.0
    assert value(got, "jupyter_gpu_env_ledger_read_timestamp_seconds") == service.collector.totals.read_at
    assert not any(name.startswith("jupyter_gpu_env_gpu_memory") for name in names(got))  # no sample yet


async def test_before_the_first_reading_no_ledger_series_is_served(store):
    await store.insert_many(ledger_jobs())
    registry = CollectorRegistry()
    service = MetricsService(store, lambda: None, registry=registry)
    registry.register(service.collector)  # registered, not read: zeros would read as counters that jumped
    assert scrape(registry) == {}
    await service.refresh()
    assert value(scrape(registry), "jupyter_gpu_env_gpu_allocated_seconds_total", backend="local") > 0
    await service.stop()


async def test_an_idle_server_reads_nothing_until_something_changes(store, tmp_path):
    finished = [job for job in ledger_jobs() if job.state in ("succeeded", "failed")]
    await store.insert_many(finished)
    records = MetricsRecords(store.path)
    readings = []
    usage = records.store.usage

    async def counted(*args, **kwargs):
        readings.append(args)
        return await usage(*args, **kwargs)

    records.store.usage = counted
    try:
        first = await records.read()
        again = await records.read(first)
        assert len(readings) == 1 and again.read_at >= first.read_at
        assert dataclasses.replace(again, read_at=first.read_at) == first
        await store.delete("a")  # any write by the server's own connection: read again
        assert (await records.read(again)).jobs[("local", "succeeded")] == 1 and len(readings) == 2
        await records.read(again)
        assert len(readings) == 2
        # a job running on a GPU makes the figures grow with no write: every round reads
        await store.insert_many([running_on_a_gpu(T0)])
        for _ in range(3):
            await records.read(again)
        assert len(readings) == 5
    finally:
        records.close()


def test_counters_never_go_back():
    waits = Waits((1,) * len(WAIT_BUCKETS) + (2,), 70.0)
    first = Totals(1.0, {}, {"local": BackendTotals(100.0, 50.0, 80.0, 20.0, 9.0, waits)})
    # a running job's idle share and utilization fell, one bucket lost a job (its start was corrected)
    lower = Waits((0,) * len(WAIT_BUCKETS) + (2,), 80.0)
    second = Totals(2.0, {}, {"local": BackendTotals(110.0, 45.0, 90.0, 15.0, 9.5, lower)})
    merged = second.after(first)
    assert merged.backends["local"] == BackendTotals(110.0, 50.0, 90.0, 20.0, 9.5, waits)
    # a backend no longer in the reading keeps its counters
    assert Totals(3.0, {}, {}).after(merged).backends == merged.backends
    grown = Waits((1,) * len(WAIT_BUCKETS) + (3,), 90.0)
    third = dataclasses.replace(
        second, backends={"local": dataclasses.replace(first.backends["local"], waits=grown)}
    )
    assert third.after(merged).backends["local"].waits == grown


async def test_deleting_jobs_never_lowers_a_counter(store):
    await store.insert_many(ledger_jobs())
    registry = CollectorRegistry()
    service = MetricsService(store, lambda: None, registry=registry)
    await service.start()
    await service.refresh()  # as the timer does (the first reading runs in the background)
    try:
        before = scrape(registry)
        for job_id in ("a", "c", "e"):
            await store.delete(job_id)
        await service.refresh()
        after = scrape(registry)
    finally:
        await service.stop()
    counters = {k: v for k, v in before.items() if k[0].endswith(("_total", "_bucket", "_sum", "_count"))}
    assert len(counters) > 20 and all(after[k] == v for k, v in counters.items())
    assert value(after, "jupyter_gpu_env_jobs", backend="slurm", state="failed") == 0  # the gauge did fall


SNAPSHOT = {
    "sampled_at": T0,
    "interval_seconds": 2.0,
    "host": {
        "source": "cgroup2",
        "memory": {"used_bytes": 3 << 30, "limit_bytes": 16 << 30, "limited": True},
        "cpu": {"limit_cores": 4.0, "limited": True, "usage_cores": 1.5},
    },
    "gpus": [
        {"index": 0, "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-0", "memory_used_bytes": 1000,
         "memory_total_bytes": 8000, "utilization_percent": 37.0},
        {"index": 1, "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-1", "mig_enabled": True, "mig_devices": [
            {"index": 0, "uuid": "MIG-a", "profile": "1g.10gb", "memory_used_bytes": 10, "memory_total_bytes": 100},
            {"index": 1, "uuid": "MIG-b", "profile": "3g.40gb", "visible": False},
        ]},
        {"index": 2, "name": "NVIDIA H100 80GB HBM3", "visible": False},
    ],
    "gpu_status": {"available": True, "reason": "ok", "message": "ok"},
    "idle": {"idle": False, "idle_seconds": 42.0, "threshold_seconds": 1800.0},
}  # fmt: skip


async def test_the_panels_live_readings_and_the_user_label(store):
    snap = GpuSnapshot.model_validate(SNAPSHOT)
    registry = CollectorRegistry()
    service = MetricsService(store, lambda: snap, user="ada", registry=registry)
    await service.start()
    await service.refresh()  # as the timer does (the first reading runs in the background)
    try:
        got = scrape(registry)
    finally:
        await service.stop()
    whole = {"device": "GPU-0", "name": "NVIDIA H100 80GB HBM3", "profile": "", "user": "ada"}
    slice_ = {"device": "MIG-a", "name": "NVIDIA H100 80GB HBM3", "profile": "1g.10gb", "user": "ada"}
    assert value(got, "jupyter_gpu_env_gpu_memory_used_bytes", **whole) == 1000
    assert value(got, "jupyter_gpu_env_gpu_memory_total_bytes", **whole) == 8000
    assert value(got, "jupyter_gpu_env_gpu_utilization_ratio", **whole) == 0.37
    assert value(got, "jupyter_gpu_env_gpu_memory_used_bytes", **slice_) == 10
    assert value(got, "jupyter_gpu_env_gpu_memory_total_bytes", **slice_) == 100
    devices = {
        dict(labels)["device"] for name, labels in got if name == "jupyter_gpu_env_gpu_memory_used_bytes"
    }
    assert devices == {"GPU-0", "MIG-a"}  # not the slice or the GPU this server does not see
    assert not [
        k for k in got if k[0] == "jupyter_gpu_env_gpu_utilization_ratio" and ("device", "MIG-a") in k[1]
    ]
    user = {"user": "ada"}
    assert value(got, "jupyter_gpu_env_host_memory_used_bytes", **user) == 3 << 30
    assert value(got, "jupyter_gpu_env_host_memory_limit_bytes", **user) == 16 << 30
    assert value(got, "jupyter_gpu_env_host_cpu_used_cores", **user) == 1.5
    assert value(got, "jupyter_gpu_env_host_cpu_limit_cores", **user) == 4.0
    assert value(got, "jupyter_gpu_env_held_gpu_idle_seconds", **user) == 42.0
    # an empty store still names its series, with the user on every one of ours
    assert value(got, "jupyter_gpu_env_ledger_read_timestamp_seconds", **user) > 0
    assert all(dict(labels).get("user") == "ada" for _, labels in got)


async def test_one_collector_serves_a_process(store, tmp_path):
    registry = CollectorRegistry()
    first = MetricsService(store, lambda: None, registry=registry)
    await first.start()
    other = JobStore(tmp_path / "other.sqlite")
    try:
        await other.insert_many(ledger_jobs()[:1])
        second = MetricsService(other, lambda: None, registry=registry)
        await second.start()  # a second server of the process: it takes the registration over
        await second.refresh()
        assert value(scrape(registry), "jupyter_gpu_env_jobs", backend="local", state="succeeded") == 1
        await first.stop()  # the earlier one's stop leaves the later one's collector in place
        assert value(scrape(registry), "jupyter_gpu_env_jobs", backend="local", state="succeeded") == 1
        await second.stop()
        assert scrape(registry) == {}
    finally:
        other.close()


def test_the_user_label_is_the_hubs_user_else_the_account(monkeypatch):
    from jupyter_gpu_env.metrics.options import MetricsOptions

    assert MetricsOptions().metrics_user() is None  # off by default
    monkeypatch.setenv("JUPYTERHUB_USER", "ada")
    assert MetricsOptions(metrics_user_label=True).metrics_user() == "ada"
    monkeypatch.delenv("JUPYTERHUB_USER")
    monkeypatch.setenv("LOGNAME", "grace")  # what getpass reads first
    assert MetricsOptions(metrics_user_label=True).metrics_user() == "grace"
