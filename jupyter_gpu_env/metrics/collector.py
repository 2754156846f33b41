"""``GpuEnvCollector``: the extension's metric families, made from what is in memory only — the last
reading of the ledger (:class:`.totals.Totals`) and the GPU sampler's latest sample — because Jupyter
Server's /metrics handler collects on the event loop.

Names follow Prometheus' conventions (base units: GPU-seconds, bytes, joules, a ratio; counters end in
``_total``), so ``promtool check metrics`` finds nothing to say of them. A ledger not read yet gives no
ledger series at all rather than zeros, which would read as counters that jumped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.metrics_core import Metric

from ..models.gpu import GpuSnapshot
from .totals import WAIT_BUCKETS, BackendTotals, Totals

PREFIX = "jupyter_gpu_env_"

# counter name (without `_total`) -> (its help, what it reads of a backend's totals)
COUNTERS: dict[str, tuple[str, Callable[[BackendTotals], float]]] = {
    "gpu_allocated_seconds": (
        "GPU-seconds allocated to jobs and Dask workers (whole-GPU equivalents: a MIG slice counts its "
        "share), as the usage report counts them; deleted jobs included.",
        lambda t: t.allocated_seconds,
    ),
    "gpu_used_seconds": (
        "GPU-seconds used: each job's allocated GPU-seconds weighted by its measured mean utilization.",
        lambda t: t.used_seconds,
    ),
    "gpu_measured_seconds": (
        "The allocated GPU-seconds whose utilization was measured (not MIG slices): efficiency is "
        "used / measured.",
        lambda t: t.measured_seconds,
    ),
    "gpu_idle_seconds": (
        "GPU-seconds allocated while every GPU a job saw was under 5 % utilization (its allocated "
        "GPU-seconds times its share of idle samples).",
        lambda t: t.idle_seconds,
    ),
    "gpu_energy_joules": (
        "Energy the GPUs of jobs drew while they ran, as their runners measured it (0 where none was).",
        lambda t: t.energy_joules,
    ),
}
LIVE = {
    "gpu_memory_used_bytes": "GPU memory used now, per GPU or MIG device this server sees.",
    "gpu_memory_total_bytes": "GPU memory in all, per GPU or MIG device this server sees.",
    "gpu_utilization_ratio": "GPU utilization now (0 to 1), per whole GPU (MIG devices report none).",
    "host_memory_used_bytes": "Memory charged to this server's container (cgroup), else used on the machine.",
    "host_memory_limit_bytes": "The container's memory limit, else the machine's memory.",
    "host_cpu_used_cores": "Cores busy over the last sampling interval, in this server's container.",
    "host_cpu_limit_cores": "The container's CPU quota in cores, else the machine's CPU count.",
    "held_gpu_idle_seconds": "How long the GPU memory this server's kernels hold has gone unused.",
}
DEVICE_LABELS = ["device", "name", "profile"]


class GpuEnvCollector:
    """A prometheus_client collector over ``totals`` (set by the service) and ``latest()``."""

    def __init__(self, latest: Callable[[], GpuSnapshot | None], user: str | None = None) -> None:
        self.latest = latest
        self.totals: Totals | None = None
        self._user = [] if user is None else [user]
        self._user_label = [] if user is None else ["user"]

    def describe(self) -> list[Metric]:
        """The families' names, without reading anything (the registry checks them for clashes)."""
        return [*self._ledger(Totals(read_at=0.0)), *(self._gauge(name, []) for name in LIVE)]

    def collect(self) -> Iterator[Metric]:
        if self.totals is not None:
            yield from self._ledger(self.totals)
        snap = self.latest()
        if snap is not None:
            yield from self._live(snap)

    def _gauge(self, name: str, labels: list[str], doc: str | None = None) -> GaugeMetricFamily:
        return GaugeMetricFamily(PREFIX + name, doc or LIVE[name], labels=[*labels, *self._user_label])

    def _ledger(self, totals: Totals) -> Iterator[Metric]:
        jobs = self._gauge("jobs", ["backend", "state"], "Job records by backend and state (not deleted).")
        for (backend, state), n in totals.job_counts().items():
            jobs.add_metric([backend, state, *self._user], n)
        yield jobs
        for name, (doc, value) in COUNTERS.items():
            family = CounterMetricFamily(PREFIX + name, doc, labels=["backend", *self._user_label])
            for backend, t in sorted(totals.backends.items()):
                family.add_metric([backend, *self._user], value(t))
            yield family
        waits = HistogramMetricFamily(
            PREFIX + "queue_wait_seconds",
            "How long jobs waited from submission to their start, per backend; deleted jobs included.",
            labels=["backend", *self._user_label],
        )
        bounds = [*(repr(b) for b in WAIT_BUCKETS), "+Inf"]
        for backend, t in sorted(totals.backends.items()):
            buckets = list(zip(bounds, (float(n) for n in t.waits.buckets), strict=True))
            waits.add_metric([backend, *self._user], buckets, t.waits.sum_seconds)
        yield waits
        read = self._gauge("ledger_read_timestamp_seconds", [], "When the job records were last read.")
        read.add_metric(self._user, totals.read_at)
        yield read

    def _live(self, snap: GpuSnapshot) -> Iterator[Metric]:
        used, total, util = (self._gauge(n, DEVICE_LABELS) for n in list(LIVE)[:3])
        for gpu in snap.gpus:
            if not gpu.visible:
                continue
            if gpu.mig_enabled and gpu.mig_devices:
                for mig in gpu.mig_devices:
                    if mig.visible:
                        labels = [mig.uuid or f"gpu{gpu.index}/mig{mig.index}", gpu.name, mig.profile or ""]
                        _add(used, labels + self._user, mig.memory_used_bytes)
                        _add(total, labels + self._user, mig.memory_total_bytes)
                continue
            labels = [gpu.uuid or f"gpu{gpu.index}", gpu.name, ""]
            _add(used, labels + self._user, gpu.memory_used_bytes)
            _add(total, labels + self._user, gpu.memory_total_bytes)
            pct = gpu.utilization_percent
            _add(util, labels + self._user, None if pct is None else pct / 100.0)
        yield from (used, total, util)
        host = snap.host
        idle = snap.idle.idle_seconds if snap.idle is not None else None
        values = (
            host.memory.used_bytes,
            host.memory.limit_bytes,
            host.cpu.usage_cores,
            host.cpu.limit_cores,
            idle,
        )
        for name, value in zip(list(LIVE)[3:], values, strict=True):
            family = self._gauge(name, [])
            _add(family, self._user, value)
            yield family


def _add(family: GaugeMetricFamily, labels: list[str], value: float | None) -> None:
    if value is not None:
        family.add_metric(labels, value)
