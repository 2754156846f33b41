"""Parsers of nvidia-smi output (chain.read_smi runs it where NVML cannot load).

Pure functions, text in and models out, for the formats real drivers print (see the recorded
outputs in ``shared/fixtures/gpu``):

- ``nvidia-smi -q -x`` (:func:`parse_smi_xml`): memory, utilization, MIG mode, MIG devices with
  GI/CI ids, SM count and memory, processes with GI/CI. It prints no profile names and no MIG
  UUIDs, so it is joined with ``nvidia-smi -L`` (:func:`parse_smi_list`, :func:`join_listing`).
- ``nvidia-smi -q`` (:func:`parse_smi_query`) and the default table (:func:`parse_smi_table`):
  the same figures from the human formats, for recorded outputs that have nothing else.
- ``nvidia-smi mig -lgi``: see :func:`mig.parse_mig_lgi`.

Processes that run in a MIG device are listed under that device, never twice.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass, field

from ...models import GpuDevice, GpuProcess, MigDevice
from .. import mig

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(B|KiB|MiB|GiB|TiB)\s*$")
_UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}


def to_bytes(text: str | None) -> int | None:
    """``"19968 MiB"`` -> bytes; ``N/A`` and anything unreadable -> None."""
    m = _SIZE.match(text or "")
    return int(float(m[1]) * _UNITS[m[2]]) if m else None


def to_int(text: str | None) -> int | None:
    text = (text or "").strip()
    return int(text) if text.isdigit() else None


def to_percent(text: str | None) -> float | None:
    m = re.match(r"^\s*(\d+(?:\.\d+)?)\s*%?\s*$", text or "")
    return float(m[1]) if m else None


# --- shared finishing -------------------------------------------------------------------


def finish_device(gpu: GpuDevice, architecture: str | None = None) -> GpuDevice:
    """Move MIG processes onto their MIG device and infer profiles nobody printed."""
    by_ids = {(m.gpu_instance_id, m.compute_instance_id): m for m in gpu.mig_devices}
    unplaced: list[GpuProcess] = []
    for p in gpu.processes:
        target = by_ids.get((p.gpu_instance_id, p.compute_instance_id))
        (target.processes if target is not None else unplaced).append(p)
    gpu.processes = unplaced
    gpu.mig_devices.sort(key=lambda m: (m.index is None, m.index or 0))
    mig.infer_missing_profiles(gpu, architecture)
    return gpu


# --- nvidia-smi -q -x -----------------------------------------------------------------------


def _text(el: ET.Element | None, path: str) -> str | None:
    found = el.find(path) if el is not None else None
    if found is None or found.text is None:
        return None
    return found.text.strip()


def parse_smi_xml(text: str) -> list[GpuDevice]:
    """``nvidia-smi -q -x`` -> devices, in the order nvidia-smi numbers them."""
    root = ET.fromstring(text)  # the local driver tool's output, or an admin's recording of it
    return [_xml_gpu(i, g) for i, g in enumerate(root.findall("gpu"))]


def _xml_gpu(index: int, g: ET.Element) -> GpuDevice:
    gpu = GpuDevice(
        index=index,
        name=_text(g, "product_name") or "GPU",
        uuid=_text(g, "uuid"),
        memory_used_bytes=to_bytes(_text(g, "fb_memory_usage/used")),
        memory_total_bytes=to_bytes(_text(g, "fb_memory_usage/total")),
        utilization_percent=to_percent(_text(g, "utilization/gpu_util")),
        mig_enabled=_text(g, "mig_mode/current_mig") == "Enabled",
    )
    for md in g.findall("mig_devices/mig_device"):
        gpu.mig_devices.append(
            MigDevice(
                index=to_int(_text(md, "index")),
                gpu_instance_id=to_int(_text(md, "gpu_instance_id")),
                compute_instance_id=to_int(_text(md, "compute_instance_id")),
                sm_count=to_int(_text(md, "device_attributes/shared/multiprocessor_count")),
                memory_used_bytes=to_bytes(_text(md, "fb_memory_usage/used")),
                memory_total_bytes=to_bytes(_text(md, "fb_memory_usage/total")),
            )
        )
    for p in g.findall("processes/process_info"):
        pid = to_int(_text(p, "pid"))
        if pid is None:
            continue
        gpu.processes.append(
            GpuProcess(
                pid=pid,
                name=_text(p, "process_name"),
                used_memory_bytes=to_bytes(_text(p, "used_memory")),
                gpu_instance_id=to_int(_text(p, "gpu_instance_id")),
                compute_instance_id=to_int(_text(p, "compute_instance_id")),
            )
        )
    return finish_device(gpu, _text(g, "product_architecture"))


# --- nvidia-smi -q (text) ------------------------------------------------------------------------


@dataclass
class _Node:
    key: str
    value: str | None
    children: list[_Node] = field(default_factory=list)

    def all(self, key: str) -> list[_Node]:
        key = key.lower()
        return [c for c in self.children if c.key.lower() == key]

    def get(self, *path: str) -> str | None:
        node: _Node | None = self
        for key in path:
            node = next(iter(node.all(key)), None) if node else None
        return node.value if node else None


# "Key   : value"; the space before the colon keeps "GPU 00000000:19:00.0" a header.
_KV = re.compile(r"^(.*?)\s+:\s?(.*)$")


def _tree(text: str) -> _Node:
    root = _Node("", None)
    stack: list[tuple[int, _Node]] = [(-1, root)]
    for line in text.splitlines():
        body = line.strip()
        if not body or body.startswith("=="):
            continue
        indent = len(line) - len(line.lstrip(" "))
        m = _KV.match(body)
        node = _Node(m[1].strip(), m[2].strip()) if m else _Node(body, None)
        while stack[-1][0] >= indent:
            stack.pop()
        stack[-1][1].children.append(node)
        stack.append((indent, node))
    return root


def parse_smi_query(text: str) -> list[GpuDevice]:
    """Plain ``nvidia-smi -q`` -> devices (same figures as the XML, from the human format)."""
    root = _tree(text)
    blocks = [n for n in root.children if n.value is None and n.key.startswith("GPU ")]
    return [_query_gpu(i, b) for i, b in enumerate(blocks)]


def _query_gpu(index: int, b: _Node) -> GpuDevice:
    gpu = GpuDevice(
        index=index,
        name=b.get("Product Name") or "GPU",
        uuid=b.get("GPU UUID"),
        memory_used_bytes=to_bytes(b.get("FB Memory Usage", "Used")),
        memory_total_bytes=to_bytes(b.get("FB Memory Usage", "Total")),
        utilization_percent=to_percent(b.get("Utilization", "GPU")),
        mig_enabled=b.get("MIG Mode", "Current") == "Enabled",
    )
    for md in b.all("MIG Device"):
        fb = "Shared FB Memory Usage" if md.all("Shared FB Memory Usage") else "FB Memory Usage"
        gpu.mig_devices.append(
            MigDevice(
                index=to_int(md.get("Index")),
                gpu_instance_id=to_int(md.get("GPU Instance ID")),
                compute_instance_id=to_int(md.get("Compute Instance ID")),
                sm_count=to_int(md.get("Device Attributes", "Shared", "Multiprocessor count")),
                memory_used_bytes=to_bytes(md.get(fb, "Used")),
                memory_total_bytes=to_bytes(md.get(fb, "Total")),
            )
        )
    # Each process is a run of sibling lines: GI and CI ids, then "Process ID" with the rest nested.
    ids: dict[str, int | None] = {}
    for entry in next(iter(b.all("Processes")), _Node("", None)).children:
        key = entry.key.lower()
        if key in ("gpu instance id", "compute instance id"):
            ids[key] = to_int(entry.value)
        elif key == "process id" and (pid := to_int(entry.value)) is not None:
            gpu.processes.append(
                GpuProcess(
                    pid=pid,
                    name=entry.get("Name"),
                    used_memory_bytes=to_bytes(entry.get("Used GPU Memory")),
                    gpu_instance_id=ids.get("gpu instance id"),
                    compute_instance_id=ids.get("compute instance id"),
                )
            )
            ids = {}
    return finish_device(gpu, b.get("Product Architecture"))


# --- nvidia-smi (default table) ------------------------------------------------------------------

_T_GPU = re.compile(r"^\s*(\d+)\s+(.+?)\s{2,}(On|Off|N/A|WDDM|TCC)\s*$")
_T_MEM = re.compile(r"(\d+)MiB\s*/\s*(\d+)MiB")
_T_UTIL = re.compile(r"^\s*(\d+%|N/A)\s+\S")
_T_MIG = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*$")
_T_PROC = re.compile(r"^\s*(\d+)\s+(\d+|N/A)\s+(\d+|N/A)\s+(\d+)\s+(\S+)\s+(.*?)\s+(\d+MiB|N/A)\s*$")


def parse_smi_table(text: str) -> list[GpuDevice]:
    """The default ``nvidia-smi`` table -> devices (no UUIDs: join with ``-L`` for those)."""
    gpus: dict[int, GpuDevice] = {}
    section, current, row = "", None, 0
    for line in text.splitlines():
        if "MIG devices:" in line:
            section = "mig"
        elif "Processes:" in line:
            section = "procs"
        elif "Persistence-M" in line:
            section = "gpus"
        if not line.startswith("|"):
            continue
        cells = line.strip().strip("|").split("|")
        if section == "gpus":
            if m := _T_GPU.match(cells[0]):
                current, row = GpuDevice(index=int(m[1]), name=m[2].strip()), 0
                gpus[current.index] = current
            elif current is not None and len(cells) >= 3:
                row += 1
                if row == 1 and (mem := _T_MEM.search(cells[1])):
                    current.memory_used_bytes, current.memory_total_bytes = (
                        int(x) * mig.MIB for x in mem.groups()
                    )
                    util = _T_UTIL.match(cells[2])
                    current.utilization_percent = to_percent(util[1]) if util else None
                elif row == 2:
                    current.mig_enabled = cells[2].strip() == "Enabled"
        elif section == "mig" and len(cells) >= 3 and (m := _T_MIG.match(cells[0])):
            gpu = gpus.get(int(m[1]))
            mem = _T_MEM.search(cells[1])
            if gpu is not None:
                gpu.mig_devices.append(
                    MigDevice(
                        index=int(m[4]),
                        gpu_instance_id=int(m[2]),
                        compute_instance_id=int(m[3]),
                        sm_count=to_int(cells[2].split()[0]) if cells[2].split() else None,
                        memory_used_bytes=int(mem[1]) * mig.MIB if mem else None,
                        memory_total_bytes=int(mem[2]) * mig.MIB if mem else None,
                    )
                )
        elif section == "procs" and (m := _T_PROC.match(cells[0])) and int(m[1]) in gpus:
            gpus[int(m[1])].processes.append(
                GpuProcess(
                    pid=int(m[4]),
                    name=m[6],
                    used_memory_bytes=int(m[7][:-3]) * mig.MIB if m[7] != "N/A" else None,
                    gpu_instance_id=to_int(m[2]),
                    compute_instance_id=to_int(m[3]),
                )
            )
    return [finish_device(g) for g in gpus.values()]


# --- nvidia-smi -L -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ListedMig:
    index: int
    profile: str
    uuid: str
    gpu_instance_id: int | None = None  # only the old MIG-GPU-<uuid>/<gi>/<ci> form carries them
    compute_instance_id: int | None = None


@dataclass(frozen=True)
class ListedGpu:
    index: int
    name: str
    uuid: str
    migs: list[ListedMig] = field(default_factory=list)


_L_GPU = re.compile(r"^GPU (\d+): (.+?) \(UUID: ([^)\s]+)\)\s*$")
_L_MIG = re.compile(r"^\s+MIG (\S+)\s+Device\s+(\d+): \(UUID: ([^)\s]+)\)\s*$")
_LEGACY_MIG_UUID = re.compile(r"^MIG-GPU-[0-9a-f-]+/(\d+)/(\d+)$", re.IGNORECASE)


def parse_smi_list(text: str) -> list[ListedGpu]:
    """``nvidia-smi -L`` -> GPUs with their MIG devices' profiles and UUIDs."""
    gpus: list[ListedGpu] = []
    for line in text.splitlines():
        if m := _L_GPU.match(line):
            gpus.append(ListedGpu(int(m[1]), m[2], m[3]))
        elif (m := _L_MIG.match(line)) and gpus:
            legacy = _LEGACY_MIG_UUID.match(m[3])
            gpus[-1].migs.append(
                ListedMig(
                    int(m[2]),
                    m[1],
                    m[3],
                    int(legacy[1]) if legacy else None,
                    int(legacy[2]) if legacy else None,
                )
            )
    return gpus


def devices_from_listing(listed: Iterable[ListedGpu]) -> list[GpuDevice]:
    """Devices known only by ``-L`` (names, UUIDs, profiles; no figures)."""
    return [
        GpuDevice(
            index=g.index,
            name=g.name,
            uuid=g.uuid,
            mig_enabled=bool(g.migs),
            mig_devices=[
                MigDevice(
                    index=m.index,
                    uuid=m.uuid,
                    profile=m.profile,
                    gpu_instance_id=m.gpu_instance_id,
                    compute_instance_id=m.compute_instance_id,
                )
                for m in g.migs
            ],
        )
        for g in listed
    ]


def join_listing(devices: list[GpuDevice], listed: Iterable[ListedGpu]) -> list[GpuDevice]:
    """Add ``-L``'s UUIDs and profile names to devices parsed from another format.

    GPUs match by UUID, else by index. MIG devices match by GI/CI where ``-L`` carries them (old
    drivers), else by MIG device index, which ``-L`` and ``-q`` number alike.
    """
    listed = list(listed)
    by_uuid = {g.uuid: g for g in listed}
    by_index = {g.index: g for g in listed}
    for gpu in devices:
        lg = by_uuid.get(gpu.uuid or "") or by_index.get(gpu.index)
        if lg is None:
            continue
        gpu.uuid = gpu.uuid or lg.uuid
        by_ids: dict[tuple[int | None, int | None], ListedMig] = {
            (m.gpu_instance_id, m.compute_instance_id): m for m in lg.migs if m.gpu_instance_id is not None
        }
        by_mig_index = {m.index: m for m in lg.migs}
        for position, md in enumerate(gpu.mig_devices):
            lm = by_ids.get((md.gpu_instance_id, md.compute_instance_id)) or by_mig_index.get(
                md.index if md.index is not None else position
            )
            if lm is None:
                continue
            md.uuid = md.uuid or lm.uuid
            md.profile, md.profile_inferred = lm.profile, False
    return devices
