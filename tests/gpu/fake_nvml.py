"""A fake NVML whose values come from recorded captures (the ``fake`` fixture of conftest builds one per capture).

It reads the capture's ``nvidia-smi -q`` and ``-L`` sections with its own regular expressions (not the
parsers under test), and answers the pynvml calls as a driver would: the MIG device name ends in the
profile, utilization is NotSupported with MIG on, per-process queries on a MIG-enabled parent need
privileges, memory v1 counts the driver's reserve as used. Power draw is the capture's (``Average Power
Draw`` of the phase); the energy counter (mJ, which no capture records) starts at an arbitrary value and
advances by that power over the seconds :meth:`FakeNvml.run` is told; a MIG device has neither, as NVML
answers. Shared by the NVML adapter's tests and the runner's GPU-use sampler's.
"""

from __future__ import annotations

import re
from types import SimpleNamespace

from .fixture_files import MIB

NA = 0xFFFFFFFF


class NVMLError(Exception):
    def __init__(self, value: int) -> None:
        super().__init__(f"NVML error {value}")
        self.value = value


NOT_SUPPORTED, NO_PERMISSION, NOT_FOUND, DRIVER_NOT_LOADED, LIBRARY_NOT_FOUND, GPU_IS_LOST = (
    3,
    4,
    6,
    9,
    12,
    15,
)


def capture_facts(text: str, phase: str) -> dict:
    """Numbers of one capture phase, read straight from the ``-q`` text and ``-L``."""
    q = text.split(f"# {phase} :: query (-q)\n# $ nvidia-smi -q\n", 1)[1].split("\n#####", 1)[0]
    listing = text.split("# $ nvidia-smi -L\n", 1)[1].split("\n#####", 1)[0]
    fb = re.search(
        r"^    FB Memory Usage\n\s+Total\s+: (\d+) MiB\n\s+Reserved\s+: (\d+) MiB\n\s+Used\s+: (\d+) MiB",
        q,
        re.M,
    )
    util = re.search(r"^    Utilization\n\s+GPU\s+: (\S+)", q, re.M)[1]
    power = re.search(r"^    GPU Power Readings\n\s+(?:Average )?Power Draw\s+: ([\d.]+) W", q, re.M)
    profiles = re.findall(r"MIG (\S+)\s+Device\s+\d+: \(UUID: (\S+)\)", listing)
    migs = []
    for i, m in enumerate(
        re.finditer(
            r"MIG Device\n\s+Index\s+: (\d+)\n\s+GPU Instance ID\s+: (\d+)\n\s+Compute Instance ID\s+: (\d+)\n"
            r"(?:.*\n)*?\s+Multiprocessor count\s+: (\d+)\n(?:.*\n)*?\s+Shared FB Memory Usage\n"
            r"\s+Total\s+: (\d+) MiB\n\s+Reserved\s+: \d+ MiB\n\s+Used\s+: (\d+) MiB",
            q,
        )
    ):
        profile, uuid = profiles[i]
        c, g = re.fullmatch(r"(?:(\d+)c\.)?(\d+)g\.\d+gb", profile).groups()
        migs.append(
            dict(
                index=int(m[1]),
                gi=int(m[2]),
                ci=int(m[3]),
                sm=int(m[4]),
                total=int(m[5]),
                used=int(m[6]),
                profile=profile,
                uuid=uuid,
                g=int(g),
                c=int(c or g),
            )
        )
    procs = [
        dict(
            gi=NA if p[0] == "N/A" else int(p[0]),
            ci=NA if p[1] == "N/A" else int(p[1]),
            pid=int(p[2]),
            name=p[3],
            used=int(p[4]),
        )
        for p in re.findall(
            r"GPU instance ID\s+: (\S+)\n\s+Compute instance ID\s+: (\S+)\n\s+Process ID\s+: (\d+)\n"
            r"\s+Type\s+: \S+\n\s+Name\s+: (.+)\n\s+Used GPU Memory\s+: (\d+) MiB",
            q,
        )
    ]
    return dict(
        name=re.search(r"Product Name\s+: (.+)", q)[1],
        uuid=re.search(r"GPU UUID\s+: (\S+)", q)[1],
        total=int(fb[1]), reserved=int(fb[2]), used=int(fb[3]),
        util=None if util == "N/A" else int(util),
        power=float(power[1]) if power else None,
        mig=re.search(r"MIG Mode\n\s+Current\s+: (\S+)", q)[1] == "Enabled",
        migs=migs, procs=procs,
    )  # fmt: skip


class FakeNvml:
    """The slice of the pynvml API the adapter uses, answering from one capture's numbers."""

    NVMLError = NVMLError
    NVML_DEVICE_MIG_ENABLE = 1
    nvmlMemory_v2 = 0x02000028

    def __init__(self, facts: dict, *, names_carry_profile: bool = True, placements: dict | None = None):
        self.f = facts
        self.names_carry_profile = names_carry_profile
        self.placements = placements or {}
        self.calls: dict[str, int] = {}
        self.init_error: int | None = None
        self.count = 1
        self.fail_next: int | None = None
        self.energy_mj = 7_211_408_123  # since the driver loaded: any value, only differences count
        self.counter = True  # False: a GPU before Volta, without the energy counter
        self.power_reading = True  # False: no power draw either

    def run(self, seconds: float) -> None:
        """The GPU draws its capture's power for ``seconds``: its energy counter advances by it."""
        self.energy_mj += round(self.f["power"] * 1000 * seconds)

    def _call(self, name: str) -> None:
        self.calls[name] = self.calls.get(name, 0) + 1
        if self.fail_next is not None:
            code, self.fail_next = self.fail_next, None
            raise NVMLError(code)

    def _mig(self, h):
        return self.f["migs"][h[1]] if h[0] == "mig" else None

    def nvmlInit(self):
        self._call("nvmlInit")
        if self.init_error is not None:
            raise NVMLError(self.init_error)

    def nvmlShutdown(self):
        self._call("nvmlShutdown")

    def nvmlDeviceGetCount(self):
        return self.count

    def nvmlDeviceGetHandleByIndex(self, i):
        return ("gpu", i)

    def nvmlDeviceGetName(self, h):
        self._call("nvmlDeviceGetName")
        m = self._mig(h)
        if m and self.names_carry_profile:
            return f"{self.f['name']} MIG {m['profile']}".encode()  # older bindings return bytes
        return self.f["name"].encode()

    def nvmlDeviceGetUUID(self, h):
        m = self._mig(h)
        return m["uuid"] if m else self.f["uuid"]

    def nvmlDeviceGetMemoryInfo(self, h, version=None):
        self._call("nvmlDeviceGetMemoryInfo")
        m = self._mig(h)
        total, used, reserved = (
            (m["total"], m["used"], 0) if m else (self.f["total"], self.f["used"], self.f["reserved"])
        )
        if version is None:  # v1: the reserve counts as used
            used += reserved
        return SimpleNamespace(total=total * MIB, used=used * MIB, free=(total - used) * MIB)

    def nvmlDeviceGetUtilizationRates(self, h):
        if self.f["util"] is None or self._mig(h):
            raise NVMLError(NOT_SUPPORTED)
        return SimpleNamespace(gpu=self.f["util"], memory=0)

    def nvmlDeviceGetTotalEnergyConsumption(self, h):
        self._call("nvmlDeviceGetTotalEnergyConsumption")
        if self._mig(h) or not self.counter:
            raise NVMLError(NOT_SUPPORTED)
        return self.energy_mj

    def nvmlDeviceGetPowerUsage(self, h):
        self._call("nvmlDeviceGetPowerUsage")
        if self._mig(h) or not self.power_reading or self.f["power"] is None:
            raise NVMLError(NOT_SUPPORTED)
        return round(self.f["power"] * 1000)

    def nvmlDeviceGetMigMode(self, h):
        if self._mig(h):
            raise NVMLError(NOT_SUPPORTED)
        return [int(self.f["mig"]), int(self.f["mig"])]

    def nvmlDeviceGetMaxMigDeviceCount(self, h):
        self._call("nvmlDeviceGetMaxMigDeviceCount")
        return 7 if self.f["mig"] else 0

    def nvmlDeviceGetMigDeviceHandleByIndex(self, h, i):
        if i >= len(self.f["migs"]):
            raise NVMLError(NOT_FOUND)
        return ("mig", i)

    def nvmlDeviceGetGpuInstanceId(self, h):
        self._call("nvmlDeviceGetGpuInstanceId")
        return self._mig(h)["gi"]

    def nvmlDeviceGetComputeInstanceId(self, h):
        return self._mig(h)["ci"]

    def nvmlDeviceGetAttributes(self, h):
        self._call("nvmlDeviceGetAttributes")
        m = self._mig(h)
        return SimpleNamespace(
            multiprocessorCount=m["sm"],
            gpuInstanceSliceCount=m["g"],
            computeInstanceSliceCount=m["c"],
            memorySizeMB=m["total"],
        )

    def nvmlDeviceGetGpuInstanceById(self, h, gi):
        if gi not in self.placements:
            raise NVMLError(NO_PERMISSION)  # what an unprivileged container gets
        return ("gi", gi)

    def nvmlGpuInstanceGetInfo(self, instance):
        start, size = self.placements[instance[1]]
        return SimpleNamespace(id=instance[1], placement=SimpleNamespace(start=start, size=size))

    def nvmlDeviceGetComputeRunningProcesses(self, h):
        self._call("nvmlDeviceGetComputeRunningProcesses")
        m = self._mig(h)
        if m is None and self.f["mig"]:
            raise NVMLError(NO_PERMISSION)
        return [
            SimpleNamespace(
                pid=p["pid"], usedGpuMemory=p["used"] * MIB, gpuInstanceId=p["gi"], computeInstanceId=p["ci"]
            )
            for p in self.f["procs"]
            if m is None or (p["gi"], p["ci"]) == (m["gi"], m["ci"])
        ]

    def nvmlSystemGetProcessName(self, pid):
        return next(p["name"] for p in self.f["procs"] if p["pid"] == pid)
