"""Conda packages made from pip wheels, without pip.

A pure wheel becomes a ``noarch: python`` package (its files under ``site-packages/``, console
scripts as link.json entry points the installer writes); a binary wheel becomes a package for this
platform with its files under ``lib/pythonX.Y/site-packages`` and its console scripts written here,
with a placeholder shebang the installer replaces. ``Requires-Dist`` becomes conda ``depends``,
limited to the distributions of the same wheel set (pip's resolver already chose them).
"""

from __future__ import annotations

import platform
import re
import shutil
import zipfile
from dataclasses import dataclass, field
from email.message import Message
from email.parser import Parser
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from ..envs.export import conda_subdir
from .condapkg import PLACEHOLDER, write_package


def conda_name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass
class Wheel:
    path: Path
    name: str  # conda name
    version: str
    pure: bool
    requires: list[str] = field(default_factory=list)
    console_scripts: list[str] = field(default_factory=list)
    license: str = "unknown"


def _dist_info(z: zipfile.ZipFile) -> str:
    return next(n.split("/")[0] for n in z.namelist() if n.split("/")[0].endswith(".dist-info"))


def read_wheel(path: Path) -> Wheel:
    with zipfile.ZipFile(path) as z:
        info = _dist_info(z)
        meta: Message = Parser().parsestr(
            z.read(f"{info}/METADATA").decode("utf-8", "replace"), headersonly=True
        )
        wheel = Parser().parsestr(z.read(f"{info}/WHEEL").decode())
        eps = (
            z.read(f"{info}/entry_points.txt").decode() if f"{info}/entry_points.txt" in z.namelist() else ""
        )
    scripts, section = [], None
    for line in eps.splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line.strip("[]")
        elif line and section == "console_scripts":
            scripts.append(re.sub(r"\s*=\s*", " = ", line))
    lic = meta.get("License-Expression") or meta.get("License") or "unknown"
    return Wheel(
        path=path,
        name=conda_name(meta["Name"]),
        version=meta["Version"],
        pure=(wheel.get("Root-Is-Purelib") or "").strip().lower() == "true",
        requires=meta.get_all("Requires-Dist") or [],
        console_scripts=scripts,
        license=lic if len(lic) < 80 and "\n" not in lic else "unknown",
    )


def depends(whl: Wheel, available: dict[str, str], pyshort: str) -> list[str]:
    """conda depends of ``whl``: its unconditional requirements that the wheel set provides."""
    out = [f"python >={pyshort}" if whl.pure else f"python {pyshort}.*"]
    for raw in whl.requires:
        try:
            req = Requirement(raw)
        except InvalidRequirement:
            continue
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        name = conda_name(req.name)
        if name not in available or name == whl.name:
            continue
        spec = str(req.specifier)
        try:
            ok = (
                not spec
                or "===" in spec
                or req.specifier.contains(Version(available[name]), prereleases=True)
            )
        except InvalidVersion:
            ok = False
        # PEP 440 and conda read a few constraints differently; never let that make the set unsolvable
        out.append(f"{name} {spec}" if spec and ok and "===" not in spec else name)
    return out


_SCRIPT = """#!{placeholder}/bin/python{pyshort}
import re
import sys
from {module} import {head}
if __name__ == "__main__":
    sys.argv[0] = re.sub(r"(-script\\.pyw|\\.exe)?$", "", sys.argv[0])
    sys.exit({call}())
"""


def _unpack(whl: Wheel, stage: Path, sp: str) -> None:
    with zipfile.ZipFile(whl.path) as z:
        data_dir = _dist_info(z)[: -len(".dist-info")] + ".data"
        for item in z.infolist():
            if item.is_dir():
                continue
            parts = item.filename.split("/")
            if parts[0] == data_dir:
                kind, rest = parts[1], "/".join(parts[2:])
                dest = {
                    "purelib": f"{sp}/{rest}",
                    "platlib": f"{sp}/{rest}",
                    "data": rest,
                    "scripts": f"bin/{rest}",
                }.get(kind)
                if dest is None:
                    continue
            else:
                dest = f"{sp}/{item.filename}"
            out = stage / dest
            out.parent.mkdir(parents=True, exist_ok=True)
            with z.open(item) as src, open(out, "wb") as dst:
                shutil.copyfileobj(src, dst)
            out.chmod(0o755 if (item.external_attr >> 16) & 0o111 or dest.startswith("bin/") else 0o644)
            if dest.startswith("bin/"):
                text = out.read_bytes()
                if text.startswith(b"#!python"):
                    out.write_bytes(f"#!{PLACEHOLDER}/bin/python".encode() + text[len(b"#!python") :])


def build(
    whl: Wheel, channel: Path, available: dict[str, str], pyshort: str, timestamp: int, stage: Path
) -> Path:
    sp = "site-packages" if whl.pure else f"lib/python{pyshort}/site-packages"
    _unpack(whl, stage, sp)
    with zipfile.ZipFile(whl.path) as z:
        (stage / sp / _dist_info(z) / "INSTALLER").write_text("conda\n")
    index: dict[str, object] = {
        "name": whl.name,
        "version": whl.version,
        "build_number": 0,
        "depends": depends(whl, available, pyshort),
        "license": whl.license,
        "timestamp": timestamp,
    }
    link = None
    if whl.pure:
        index.update(build="pyh_local_0", subdir="noarch", noarch="python")
        link = {
            "noarch": {"type": "python", "entry_points": whl.console_scripts},
            "package_metadata_version": 1,
        }
        out_dir = channel / "noarch"
    else:
        subdir = conda_subdir()
        tag = "py" + pyshort.replace(".", "")
        index.update(
            build=f"{tag}_local_0", subdir=subdir, platform=subdir.split("-")[0], arch=platform.machine()
        )
        out_dir = channel / subdir
        for entry in whl.console_scripts:
            script, target = (s.strip() for s in entry.split("=", 1))
            module, _, attr = target.partition(":")
            if not attr:
                continue
            head = attr.split(".")[0] or module
            text = _SCRIPT.format(
                placeholder=PLACEHOLDER, pyshort=pyshort, module=module, head=head, call=attr
            )
            (stage / "bin").mkdir(exist_ok=True)
            (stage / "bin" / script).write_text(text)
            (stage / "bin" / script).chmod(0o755)
    return write_package(stage, out_dir, index, link=link, text_prefixes=[PLACEHOLDER])
