"""How well a job used the GPUs it was given: sampled by the runner, on every backend.

The runner starts a :class:`GpuUseSampler` beside papermill. Every ``interval`` seconds it reads the GPUs
this process may use (NVML, nvidia-smi where NVML cannot load; ``CUDA_VISIBLE_DEVICES`` and
``NVIDIA_VISIBLE_DEVICES`` decide which, MIG slices included) and appends one short line to ``gpu.jsonl``
in the job folder — ``[seconds since start, [util or null, ...], [memory used, ...]]``, about 40 bytes
per sample and device — after a first line naming the devices. It keeps running totals and replaces
``gpu.json``, the summary the server shows, after each sample: mean and peak utilization, peak memory
against the devices' memory, the idle fraction and the current idle stretch, GPU-hours allocated and
used, and the energy the GPUs drew (:mod:`.energy`: NVML's counter read at the start, every sample and the
end). NVML gives MIG slices no utilization: their summary has memory only, and says so. A job that
sees no GPU gets a summary that says why, once, and no series.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..system import untrusted
from ..system.atomic import write_json_atomic
from .energy import EnergyMeter, EnergyReader, held_shares
from .sources.reading import GpuReading
from .visibility import mark_visible

SERIES = "gpu.jsonl"
SUMMARY = "gpu.json"
IDLE_PERCENT = 5.0  # a sample below this utilization on every device counts as idle
MIG_NOTE = (
    "NVML reports no utilization for MIG slices: memory is measured, utilization and GPU-hours used "
    "are not (DCGM's profiling metrics would give them)."
)

Reader = Callable[[], GpuReading]


@dataclass
class _Device:
    name: str
    uuid: str | None
    mig_profile: str | None
    memory_total_bytes: int | None


def visible_devices(reading: GpuReading, env: Mapping[str, str] | None = None) -> list[tuple[_Device, Any]]:
    """The devices this process may use, each with its reading (a GPU, or a MIG slice of one)."""
    out: list[tuple[_Device, Any]] = []
    for gpu in mark_visible(reading.devices, env):
        if gpu.mig_devices:
            for m in gpu.mig_devices:
                if m.visible:
                    out.append(
                        (
                            _Device(
                                f"{gpu.name} MIG {m.profile or '?'}", m.uuid, m.profile, m.memory_total_bytes
                            ),
                            m,
                        )
                    )
        elif gpu.visible:
            out.append((_Device(gpu.name, gpu.uuid, None, gpu.memory_total_bytes), gpu))
    return out


@dataclass
class UseTotals:
    """Running totals of a job's samples, and the summary made of them."""

    devices: list[_Device]
    interval: float
    gpu_units: float  # whole-GPU equivalents allocated (a MIG slice counts its share)
    started: float
    samples: int = 0
    util_sum: float = 0.0
    util_samples: int = 0
    peak_util: float | None = None
    peak_memory: int | None = None
    idle_samples: int = 0
    idle_since: float | None = None
    last: float | None = None
    notes: list[str] = field(default_factory=list)
    meter: EnergyMeter | None = None

    def add(self, t: float, utils: list[float | None], memory: list[int | None]) -> None:
        self.samples += 1
        self.last = t
        known = [u for u in utils if u is not None]
        if known:
            mean = sum(known) / len(known)
            self.util_sum += mean
            self.util_samples += 1
            self.peak_util = max(self.peak_util or 0.0, max(known))
            if max(known) < IDLE_PERCENT:
                self.idle_samples += 1
                self.idle_since = self.idle_since if self.idle_since is not None else t
            else:
                self.idle_since = None
        used = [m for m in memory if m is not None]
        if used:
            self.peak_memory = max(self.peak_memory or 0, sum(used))

    def summary(self, now: float) -> dict[str, Any]:
        hours = max(0.0, now - self.started) / 3600
        mean = self.util_sum / self.util_samples if self.util_samples else None
        totals = [d.memory_total_bytes for d in self.devices]
        allocated = round(self.gpu_units * hours, 6)
        return {
            "available": True,
            "reason": None,
            "devices": [d.__dict__ for d in self.devices],
            "samples": self.samples,
            "interval_seconds": self.interval,
            "mean_utilization_percent": None if mean is None else round(mean, 1),
            "peak_utilization_percent": self.peak_util,
            "peak_memory_bytes": self.peak_memory,
            "memory_total_bytes": sum(t for t in totals if t) if any(totals) else None,
            "idle_fraction": round(self.idle_samples / self.util_samples, 3) if self.util_samples else None,
            "idle_seconds": round(now - self.idle_since, 1) if self.idle_since is not None else 0.0,
            "gpu_hours_allocated": allocated,
            "gpu_hours_used": None if mean is None else round(allocated * mean / 100, 6),
            **(self.meter.summary() if self.meter is not None else {}),
            "notes": self.notes,
            "updated_at": now,
        }


def unavailable(
    reason: str, energy_note: str = "No GPU energy to measure: the job saw no GPU."
) -> dict[str, Any]:
    return {
        "available": False,
        "reason": reason,
        "devices": [],
        "samples": 0,
        "energy_note": energy_note,
        "notes": [],
        "updated_at": time.time(),
    }


class GpuUseSampler:
    """Samples in a thread until :meth:`stop`, which writes and returns the final summary."""

    def __init__(
        self,
        folder: Path,
        reader: Reader,
        *,
        interval: float = 5.0,
        gpu_units: float = 0.0,
        env: Mapping[str, str] | None = None,
        clock: Callable[[], float] = time.time,
        energy: EnergyReader | None = None,
    ) -> None:
        self.folder = folder
        self.reader = reader
        self.energy = energy
        self.interval = max(0.05, float(interval))
        self.gpu_units = gpu_units
        self.env = env
        self.clock = clock
        self.started = clock()
        self.totals: UseTotals | None = None
        self.final: dict[str, Any] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="gpu-use", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while True:
            try:
                if not self.sample():
                    return
            except Exception as e:  # sampling must never take the job down
                stopped = f"GPU sampling stopped: {type(e).__name__}: {e}"
                self._write(unavailable(stopped, "GPU energy is not measured: sampling stopped."))
                return
            if self._stop.wait(self.interval):
                return

    def sample(self) -> bool:
        """Take one sample; False when there is nothing to sample (no GPU visible: said once)."""
        now = self.clock()
        reading = self.reader()
        devices = visible_devices(reading, self.env)
        if self.totals is None:
            if not devices:
                why = (
                    reading.status.message
                    if reading.status.reason != "ok"
                    else "No GPU is visible to this job."
                )
                self.final = unavailable(why)
                self._write(self.final)
                return False
            # a job given no GPU explicitly (the local backend) is allocated what it sees
            units = self.gpu_units or sum(_units(d) for d, _ in devices)
            self.totals = UseTotals([d for d, _ in devices], self.interval, units, self.started)
            self.totals.meter = EnergyMeter(
                held_shares(reading.devices, self.env),
                self.interval,
                None if self.energy else "this job's runner has no NVML to read it through",
            )
            if any(d.mig_profile for d, _ in devices):
                self.totals.notes.append(MIG_NOTE)
            header = {
                "devices": [d.__dict__ for d, _ in devices],
                "interval": self.interval,
                "started": self.started,
            }
            self._append(json.dumps(header))
        by_uuid = {d.uuid: r for d, r in devices}
        utils = [_util(by_uuid.get(d.uuid)) for d in self.totals.devices]
        memory = [getattr(by_uuid.get(d.uuid), "memory_used_bytes", None) for d in self.totals.devices]
        t = round(now - self.started, 2)
        self.totals.add(now, utils, memory)
        self._read_energy(now)
        self._append(json.dumps([t, utils, memory], separators=(",", ":")))
        self._write(self.totals.summary(now))
        return True

    def stop(self) -> dict[str, Any] | None:
        """Stop sampling; the final summary (None when sampling never started)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.interval + 5)
        if self.totals is not None:
            now = self.clock()
            self._read_energy(now)  # the job's end
            self.final = self.totals.summary(now)
            self._write(self.final)
        return self.final

    def _read_energy(self, now: float) -> None:
        if self.energy is None or self.totals is None or self.totals.meter is None:
            return
        try:
            readings = self.energy()
        except Exception:  # a missed read is covered by the next one (the counter's difference spans both)
            return
        self.totals.meter.add(now, readings)

    def _append(self, line: str) -> None:
        with open(self.folder / SERIES, "a", encoding="utf-8") as f:
            f.write(line + "\n")

    def _write(self, summary: dict[str, Any]) -> None:
        try:
            write_json_atomic(self.folder / SUMMARY, summary)
        except OSError:
            pass  # the folder was removed under a deleted job


def _units(device: _Device) -> float:
    from ..models.resources import mig_fraction

    return mig_fraction(device.mig_profile) if device.mig_profile else 1.0


def _util(device: Any) -> float | None:
    value = getattr(device, "utilization_percent", None)
    return float(value) if value is not None else None


# A series longer than this is sampled by seeking, so a runaway file costs max_points reads, not its size.
WHOLE_SERIES = 4 << 20
MAX_LINE = 64 << 10


def read_series(folder: Path, max_points: int = 600) -> tuple[list[dict[str, Any]], list[list[Any]]]:
    """The devices and the samples of ``gpu.jsonl`` (every n-th when there are more than ``max_points``).

    The job's own code can write the file: it is read only when it is a regular file, a long one by
    seeking to ``max_points`` places rather than whole, and lines that are not samples are skipped.
    """
    try:
        with untrusted.open_regular_file(folder / SERIES, name=SERIES) as f:
            size = os.fstat(f.fileno()).st_size
            header = _json_line(f.readline(MAX_LINE))
            start = f.tell()
            if size - start <= WHOLE_SERIES:
                lines = f.read(WHOLE_SERIES).splitlines()
            else:
                lines = []
                for k in range(max_points):
                    f.seek(start + (size - start) * k // max_points)
                    if k:
                        f.readline(MAX_LINE)  # the rest of the line the seek landed in
                    lines.append(f.readline(MAX_LINE))
    except OSError:  # missing, or refused (FileRefused is one)
        return [], []
    if not isinstance(header, dict) or not isinstance(header.get("devices"), list):
        return [], []
    devices = [d for d in header["devices"][:64] if _is_device(d)]
    points = [p for p in map(_json_line, lines) if _is_point(p, len(devices))]
    step = max(1, -(-len(points) // max_points))
    return devices, points[::step]


def _json_line(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None  # a line being written, or not a sample


def _is_device(d: Any) -> bool:
    from pydantic import ValidationError

    from ..models.jobs import JobGpuDevice

    try:
        JobGpuDevice.model_validate(d)
    except ValidationError:
        return False
    return True


def _number(v: Any, low: float, high: float) -> bool:
    return v is None or (isinstance(v, int | float) and not isinstance(v, bool) and low <= v <= high)


def _is_point(p: Any, devices: int) -> bool:
    """``[seconds, [utilization or null per device], [memory or null per device]]``, within range."""
    if not (isinstance(p, list) and len(p) == 3 and isinstance(p[1], list) and isinstance(p[2], list)):
        return False
    t, utils, memory = p
    return (
        t is not None
        and _number(t, 0, 1e9)
        and len(utils) == len(memory) == devices
        and all(_number(u, 0, 100) for u in utils)
        and all(_number(m, 0, 2**50) and not isinstance(m, float) for m in memory)
    )


def default_readers() -> tuple[Reader, EnergyReader]:
    """NVML in this process; nvidia-smi where NVML cannot load and the tool exists. The energy is NVML's
    alone (nothing where it cannot load)."""
    import asyncio
    import shutil

    from .sources.chain import read_smi
    from .sources.nvml import NvmlReader
    from .visibility import visibility_status

    nvml = NvmlReader()

    def read() -> GpuReading:
        reading = nvml.read()
        if reading.status.reason == "no_nvml" and shutil.which("nvidia-smi"):
            try:
                devices = asyncio.run(read_smi("nvidia-smi"))
            except Exception:
                return reading
            return GpuReading(
                devices, visibility_status(devices, None, reason="ok", message="read with nvidia-smi")
            )
        return reading

    return read, nvml.read_energy


def gpu_units_of(resources: Mapping[str, Any]) -> float:
    """Whole-GPU equivalents a job was allocated, from job.json's normalized resources."""
    from ..models.resources import mig_fraction

    profile = resources.get("mig_profile")
    return mig_fraction(profile) if profile else float(resources.get("gpus") or 0)


def sample_interval(spec: Mapping[str, Any]) -> float:
    value = spec.get("gpu_sample_interval") or os.environ.get("JUPYTER_GPU_ENV_GPU_SAMPLE_INTERVAL") or 5.0
    try:
        return max(0.05, float(value))
    except (TypeError, ValueError):
        return 5.0
