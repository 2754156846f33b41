"""Replay recorded nvidia-smi output as if it were a live GPU (demos, tests, screenshots).

Configure with ``c.GpuEnvApp.gpu_recorded_source = "/path"``, where the path is one of:

**A folder** holding any of these files, each the plain output of the command beside it::

    nvidia-smi-q.xml     nvidia-smi -q -x        preferred: every figure the panel shows
    nvidia-smi-q.txt     nvidia-smi -q           used when there is no XML
    nvidia-smi.txt       nvidia-smi              (the default table) used when there is neither
    nvidia-smi-L.txt     nvidia-smi -L           optional: MIG UUIDs and profile names
    nvidia-smi-lgi.txt   nvidia-smi mig -lgi     optional: GPU instance placements

Record them on a GPU machine with, e.g., ``nvidia-smi -q -x > nvidia-smi-q.xml`` and
``nvidia-smi -L > nvidia-smi-L.txt``. A folder without these names but with exactly one
capture file (below) uses that.

**A single file**, its format recognised from its content: any of the outputs above, or a
capture in nvidia_gpu_exporter's format (sections headed ``# <phase> :: <label>`` and
``# $ <command>``, as in ``shared/fixtures/gpu/nvgpuexp-capture-*.txt``). A capture is read from
its ``load`` phase (processes running) when it has one; append ``#idle`` to the path to read the
``idle`` phase instead (``/path/capture.txt#idle``).

The files are parsed once and re-read only when they change. Every reading says
``reason="recorded"`` so nobody mistakes it for the live machine.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ...models import GpuDevice, GpuStatus
from .. import mig
from ..visibility import mark_visible, visibility_status
from . import smi
from .reading import GpuReading

XML = "nvidia-smi-q.xml"
QUERY = "nvidia-smi-q.txt"
TABLE = "nvidia-smi.txt"
LIST = "nvidia-smi-L.txt"
LGI = "nvidia-smi-lgi.txt"
_BANNER = "#" * 20


@dataclass(frozen=True)
class CaptureSection:
    phase: str
    label: str
    command: str | None
    body: str


def parse_capture(text: str) -> list[CaptureSection]:
    """Split an nvidia_gpu_exporter capture into its sections."""
    lines = text.splitlines()
    sections: list[CaptureSection] = []
    i = 0
    while i < len(lines):
        after_banner = i > 0 and lines[i - 1].startswith(_BANNER)
        head = re.match(r"^# (\S+) :: (.+?)\s*$", lines[i]) if after_banner else None
        if head is None:
            i += 1
            continue
        command = None
        j = i + 1
        if j < len(lines) and lines[j].startswith("# $ "):
            command = lines[j][4:].strip()
            j += 1
        if j < len(lines) and lines[j].startswith(_BANNER):
            j += 1
        start = j
        while j < len(lines) and not lines[j].startswith(_BANNER):
            j += 1
        sections.append(
            CaptureSection(head[1], head[2], command, "\n".join(lines[start:j]).strip("\n") + "\n")
        )
        i = j + 1
    return sections


def is_capture(text: str) -> bool:
    return "\n# $ nvidia-smi" in text


def _section(sections: list[CaptureSection], command: str, phase: str | None) -> str | None:
    for s in sections:
        if s.command == command and (phase is None or s.phase == phase):
            return s.body
    return None


def capture_devices(text: str, phase: str | None = None) -> list[GpuDevice]:
    """Devices from a capture: ``-q -x`` or ``-q`` or the table of ``phase`` (default: ``load``
    where present, else ``idle``), joined with the capture's ``-L``."""
    sections = parse_capture(text)
    phases = [s.phase for s in sections]
    phase = phase or ("load" if "load" in phases else "idle" if "idle" in phases else None)
    if (body := _section(sections, "nvidia-smi -q -x", phase)) is not None:
        devices = smi.parse_smi_xml(body)
    elif (body := _section(sections, "nvidia-smi -q", phase)) is not None:
        devices = smi.parse_smi_query(body)
    elif (body := _section(sections, "nvidia-smi", phase)) is not None:
        devices = smi.parse_smi_table(body)
    else:
        raise ValueError(f"the capture has no nvidia-smi -q -x, -q or table section for phase {phase!r}")
    if (listing := _section(sections, "nvidia-smi -L", None)) is not None:
        smi.join_listing(devices, smi.parse_smi_list(listing))
    return devices


def devices_from_text(text: str, phase: str | None = None) -> list[GpuDevice]:
    """Devices from one recorded output of any supported kind, recognised by its content."""
    head = text.lstrip()[:4096]
    if is_capture(text):
        return capture_devices(text, phase)
    if head.startswith("<?xml") or "<nvidia_smi_log" in head:
        return smi.parse_smi_xml(text)
    if "NVSMI LOG" in head:
        return smi.parse_smi_query(text)
    if "NVIDIA-SMI" in head and "|" in head:
        return smi.parse_smi_table(text)
    if listed := smi.parse_smi_list(text):
        return smi.devices_from_listing(listed)
    raise ValueError("not a recognised nvidia-smi output (-q -x, -q, the table, -L or a capture)")


def devices_from_folder(folder: Path) -> list[GpuDevice]:
    for name, parse in ((XML, smi.parse_smi_xml), (QUERY, smi.parse_smi_query), (TABLE, smi.parse_smi_table)):
        if (folder / name).is_file():
            devices = parse((folder / name).read_text())
            break
    else:
        captures = [p for p in sorted(folder.glob("*.txt")) if is_capture(p.read_text(errors="replace"))]
        if len(captures) != 1:
            raise ValueError(
                f"{folder} holds none of {XML}, {QUERY}, {TABLE}"
                + (f" and {len(captures)} capture files; name one of them" if captures else "")
            )
        return capture_devices(captures[0].read_text())
    if (folder / LIST).is_file():
        smi.join_listing(devices, smi.parse_smi_list((folder / LIST).read_text()))
    if (folder / LGI).is_file():
        mig.apply_placements(devices, mig.parse_mig_lgi((folder / LGI).read_text()))
    return devices


class RecordedSource:
    """A GPU reader (``read() -> GpuReading``) over recorded files, for the sampler."""

    def __init__(self, source: str | Path, *, env: Mapping[str, str] | None = None) -> None:
        path, _, phase = str(source).partition("#")
        self.path = Path(path).expanduser()
        self.phase = phase or None
        self._env = env
        self._lock = threading.Lock()
        self._stamp: tuple[tuple[str, int], ...] | None = None
        self._devices: list[GpuDevice] = []

    def _stamps(self) -> tuple[tuple[str, int], ...]:
        files = sorted(self.path.iterdir()) if self.path.is_dir() else [self.path]
        return tuple((p.name, p.stat().st_mtime_ns) for p in files if p.is_file())

    def devices(self) -> list[GpuDevice]:
        """The recorded devices (fresh copies: callers annotate processes with kernels)."""
        with self._lock:
            stamp = self._stamps()
            if stamp != self._stamp:
                if self.path.is_dir():
                    self._devices = devices_from_folder(self.path)
                else:
                    self._devices = devices_from_text(self.path.read_text(), self.phase)
                self._stamp = stamp
            return [d.model_copy(deep=True) for d in self._devices]

    def read(self) -> GpuReading:
        try:
            devices = mark_visible(self.devices(), self._env)
        except (OSError, ValueError, SyntaxError) as e:  # ET.ParseError is a SyntaxError
            return GpuReading(
                [],
                GpuStatus(
                    available=False,
                    reason="recorded",
                    message=f"The recorded GPU output at {self.path} could not be read: {e}",
                ),
            )
        where = self.path.name + (f" ({self.phase})" if self.phase else "")
        message = f"Recorded nvidia-smi output from {where}, not a live reading of this machine."
        return GpuReading(devices, visibility_status(devices, self._env, reason="recorded", message=message))
