"""Exports of an environment from its conda-meta records: environment.yml and an explicit lock.

Blocking, pure functions over the records; no engine is needed, so every engine shares them.
"""

from __future__ import annotations

import json
import platform
import re
from pathlib import Path
from typing import Any

from ..models.envs.packages import Package
from .catalog.prefix import channel_label, pypi_packages, python_version, read_records, site_packages

_PLAIN = re.compile(r"[A-Za-z0-9_.=<>!*/:+@-]+")


def _yaml_scalar(value: str) -> str:
    # JSON strings are valid YAML scalars: quote whatever could be read as something else.
    return value if _PLAIN.fullmatch(value) and value[0] not in "-:@*!" else json.dumps(value)


def conda_subdir() -> str:
    """conda's name for this platform, e.g. ``linux-64``."""
    machine = platform.machine().lower()
    arch = {"x86_64": "64", "amd64": "64", "aarch64": "aarch64", "arm64": "arm64", "ppc64le": "ppc64le"}
    system = platform.system().lower()
    return f"{'osx' if system == 'darwin' else system}-{arch.get(machine, machine)}"


def _topological(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Dependencies before their dependents (CEP 23 asks it of explicit files), else by name."""
    by_name = {r["name"]: r for r in records}
    out: list[dict[str, Any]] = []
    state: dict[str, int] = {}

    def visit(name: str) -> None:
        if state.get(name) or name not in by_name:
            return
        state[name] = 1
        for dep in sorted(d.split()[0] for d in by_name[name].get("depends", ())):
            visit(dep)
        state[name] = 2
        out.append(by_name[name])

    for name in sorted(by_name):
        visit(name)
    return out


def _pip(prefix: Path, records: list[dict[str, Any]]) -> list[Package]:
    return pypi_packages(prefix, records, site_packages(prefix, python_version(records)))


def environment_yaml(prefix: Path, name: str) -> str:
    records = read_records(prefix)
    channels: list[str] = []
    for r in records:
        label = channel_label(r)
        if label and label not in channels:
            channels.append(label)
    lines = [f"name: {_yaml_scalar(name)}"]
    if channels:
        lines += ["channels:"] + [f"  - {_yaml_scalar(c)}" for c in channels]
    else:
        lines.append("channels: []")
    lines.append("dependencies:")
    for r in records:
        pinned = f"{r['name']}={r['version']}={r['build']}"
        lines.append(f"  - {_yaml_scalar(pinned)}")
    pip = _pip(prefix, records)
    if pip:
        if not any(r["name"] == "pip" for r in records):
            lines.append("  - pip")
        lines.append("  - pip:")
        lines += [f"      - {_yaml_scalar(p.name + '==' + p.version)}" for p in pip]
    return "\n".join(lines) + "\n"


def explicit_lock(prefix: Path, name: str) -> str:
    """``@EXPLICIT`` and one package URL per line with its hash, like ``conda list --explicit --sha256``."""
    records = read_records(prefix)
    lines = [
        "# This file may be used to create an environment using:",
        "# $ conda create --name <env> --file <this file>",
        f"# environment: {name}",
        f"# platform: {conda_subdir()}",
        "@EXPLICIT",
    ]
    for r in _topological(records):
        url = r.get("url")
        if not url:
            lines.append(f"# no URL for: {r['name']}-{r['version']}-{r['build']}")
            continue
        digest = f"#sha256:{r['sha256']}" if r.get("sha256") else (f"#{r['md5']}" if r.get("md5") else "")
        lines.append(url + digest)
    pip = _pip(prefix, records)
    if pip:
        lines.append("# Installed with pip, not representable here (use the environment.yml export):")
        lines += [f"#   {p.name}=={p.version}" for p in pip]
    return "\n".join(lines) + "\n"
