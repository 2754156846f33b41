"""Install and remove PyPI packages in a transaction's copy of an environment, and plan such a change.

The installer runs with the copy's interpreter, so the scripts it writes start with the copy's path
(``#!/…/.env.build-xyz/bin/python``); once the copy is renamed into place that path is gone. Every
file of the distributions the change added or replaced that holds the copy's path is rewritten for the
final one, like conda does with its prefix placeholder. A rewritten file is written anew and renamed
over: the installer may have hard-linked it from its cache, which must not change.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import os
import re
import sys
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ... import proc
from ...errors import CommandFailed, Conflict, NotFound, Unavailable
from ...system.atomic import write_atomic
from ...system.untrusted import read_regular_file
from ..catalog.prefix import RECORD_BYTES, read_headers
from .tool import Installer, PipSettings, uv_binary

LogFn = Callable[[str], None]


def normalized(name: str) -> str:
    """PEP 503: the name pip and indexes compare."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class Dist:
    name: str
    version: str
    info: Path  # its .dist-info folder


def distributions(prefix: Path) -> dict[str, Dist]:
    """Every installed distribution with a .dist-info (conda's Python packages have one too), by
    normalized name."""
    out: dict[str, Dist] = {}
    for sp in (prefix / "lib").glob("python3*/site-packages"):
        for entry in os.scandir(sp):
            if not entry.name.endswith(".dist-info") or not entry.is_dir():
                continue
            try:
                headers = read_headers(Path(entry.path) / "METADATA")
            except OSError:
                continue
            if headers.get("Name") and headers.get("Version"):
                out[normalized(headers["Name"])] = Dist(headers["Name"], headers["Version"], Path(entry.path))
    return out


# The name a resolver could not find: uv's "Because NAME was not found in the package registry" (or "in the
# provided package locations"), pip's "No matching distribution found for NAME".
_MISSING = re.compile(
    r"(?:Because |and )([A-Za-z0-9][A-Za-z0-9._-]*) was not found in the (?:package registry|provided package locations)"
    r"|No matching distribution found for ([A-Za-z0-9][A-Za-z0-9._-]*)"
)


def _failure(e: CommandFailed, installer: Installer, what: str) -> Exception:
    text = e.output.strip()
    lines = [line for line in text.splitlines() if line.strip()]
    tail = " ".join(lines[-4:])[-1200:]
    if re.search(
        r"Failed to fetch|Could not connect|Connection refused|Name or service not known|"
        r"Network is unreachable|Max retries|Temporary failure in name resolution",
        text,
    ):
        return Unavailable(
            f"The Python package index could not be reached: {tail}", reason="index_unavailable"
        )
    if re.search(
        r"not found in the package registry|was not found in the provided package locations|"
        r"No matching distribution found|Could not find a version that satisfies",
        text,
    ):
        # In the field's own words, naming what is missing; the installer's text is in the task's log.
        names = sorted({m.group(1) or m.group(2) for m in _MISSING.finditer(text)})
        named = ", ".join(f"'{n}'" for n in names) or "a requested package"
        where = (
            "in the package locations this server installs from"
            if installer.settings.no_index
            else "on the package index"
        )
        return NotFound(
            f"No package named like {named} {where}.",
            reason="pypi_package_not_found",
        )
    if re.search(
        r"No solution found|ResolutionImpossible|conflicting dependencies|unsatisfiable", text, re.I
    ):
        return Conflict(f"{installer.name} could not resolve the requirements: {tail}", reason="unsolvable")
    return Conflict(f"{installer.name} could not {what}: {tail}", reason="pip_failed")


async def _run(
    installer: Installer, argv: list[str], what: str, log: LogFn | None, stdin: bytes | None = None
) -> proc.Result:
    def say(line: str) -> None:
        if log is not None and line.strip():
            log(line.rstrip())

    env = {**os.environ, "PIP_NO_INPUT": "1", "NO_COLOR": "1", "UV_NO_PROGRESS": "1"}
    env.pop("VIRTUAL_ENV", None)  # the interpreter given is the target, not the server's venv
    env.pop("CONDA_PREFIX", None)
    try:
        return await proc.run(
            argv, env=env, stdin=stdin, on_stdout=say, on_stderr=say, nice=proc.BACKGROUND, tethered=True
        )  # it writes into a transaction's copy: it must not outlive its server
    except CommandFailed as e:
        raise _failure(e, installer, what) from e


def _differ(ours: dict[str, Dist], theirs: dict[str, Dist]) -> list[Dist]:
    """The distributions of ``ours`` that ``theirs`` lacks or has at another version."""
    return [d for k, d in ours.items() if k not in theirs or theirs[k].version != d.version]


def _pinned(dists: list[Dist]) -> list[str]:
    return sorted(f"{d.name}=={d.version}" for d in dists)


def _relocate(dist: Dist, build: bytes, final: bytes) -> int:
    """Rewrite ``build`` to ``final`` in the text files of ``dist`` (from its RECORD); returns how many."""
    site = dist.info.parent
    try:
        text = read_regular_file(dist.info / "RECORD", RECORD_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return 0
    paths = [row[0] for row in csv.reader(io.StringIO(text, newline="")) if row]
    count = 0
    for rel in paths:
        path = os.path.normpath(site / rel)
        try:  # no regular file, or larger than a script holding a path can be: left as it is
            data = read_regular_file(path, RECORD_BYTES)
        except OSError:
            continue
        if build not in data or b"\0" in data:  # binary files are left as they are
            continue
        write_atomic(path, data.replace(build, final), mode=os.stat(path).st_mode & 0o7777)
        count += 1
    return count


async def apply(
    installer: Installer,
    build: Path,
    final: Path,
    add: list[str],
    remove: list[str],
    conda_names: set[str],
    *,
    log: LogFn | None = None,
) -> tuple[list[str], list[str]]:
    """Remove then install in ``build`` (a copy that becomes ``final``); returns (installed, removed)
    as ``name==version``. ``conda_names``: packages conda owns, which pip must not remove."""
    before = await asyncio.to_thread(distributions, build)
    if remove:
        names = [normalized(n) for n in remove]
        if owned := [n for n in remove if normalized(n) in conda_names]:
            raise Conflict(
                f"{', '.join(owned)} {'is a conda package' if len(owned) == 1 else 'are conda packages'}: "
                "remove it as a conda package, not a PyPI one.",
                reason="conda_package",
            )
        if missing := [n for n in remove if normalized(n) not in before]:
            raise NotFound(
                f"Not installed, so cannot be removed: {', '.join(missing)}.", reason="not_installed"
            )
        await _run(installer, installer.uninstall(names), "remove the packages", log)
    if add:
        await _run(installer, installer.install(add), "install the packages", log)
    after = await asyncio.to_thread(distributions, build)
    added = _differ(after, before)
    if build != final:
        old, new = str(build).encode(), str(final).encode()
        for dist in added:
            await asyncio.to_thread(_relocate, dist, old, new)
    return _pinned(added), _pinned(_differ(before, after))


@dataclass(frozen=True)
class PipStep:
    name: str
    before: str | None
    after: str | None
    download_bytes: int | None = None


_UV_LINE = re.compile(r"^\s*([+-])\s+([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==(\S+)")


def parse_uv_dry_run(text: str) -> list[PipStep]:
    """uv's `pip install --dry-run` says ``+ name==version`` and ``- name==version`` per package."""
    adds: dict[str, tuple[str, str]] = {}
    drops: dict[str, tuple[str, str]] = {}
    for line in text.splitlines():
        if m := _UV_LINE.match(line):
            (adds if m.group(1) == "+" else drops)[normalized(m.group(2))] = (m.group(2), m.group(3))
    steps = []
    for key in sorted(adds.keys() | drops.keys()):
        name = (adds.get(key) or drops[key])[0]
        steps.append(
            PipStep(name, drops[key][1] if key in drops else None, adds[key][1] if key in adds else None)
        )
    return steps


def parse_pip_report(report: str, installed: dict[str, Dist]) -> list[PipStep]:
    """pip's `install --dry-run --report -` JSON: what it would install (with where from)."""
    data = json.loads(report)
    steps = []
    for item in data.get("install", []):
        meta = item.get("metadata", {})
        name, version = meta.get("name", "?"), meta.get("version", "?")
        url = (item.get("download_info") or {}).get("url", "")
        size = None
        if url.startswith("file://"):
            try:
                size = os.stat(urllib.parse.unquote(url.removeprefix("file://"))).st_size
            except OSError:
                size = None
        old = installed.get(normalized(name))
        steps.append(PipStep(name, old.version if old else None, version, size))
    return sorted(steps, key=lambda s: normalized(s.name))


async def plan(
    installer: Installer, prefix: Path, add: list[str], remove: list[str], conda_names: set[str]
) -> list[PipStep]:
    """What ``apply`` would do in ``prefix``, changing nothing."""
    installed = await asyncio.to_thread(distributions, prefix)
    steps: list[PipStep] = []
    for name in remove:
        key = normalized(name)
        if key in conda_names:
            raise Conflict(
                f"{name} is a conda package: remove it as a conda package, not a PyPI one.",
                reason="conda_package",
            )
        if key not in installed:
            raise NotFound(f"Not installed, so cannot be removed: {name}.", reason="not_installed")
        steps.append(PipStep(installed[key].name, installed[key].version, None))
    if add:
        res = await _run(installer, installer.install(add, dry_run=True), "plan the installation", None)
        if installer.name == "uv":
            steps += parse_uv_dry_run(res.stdout + "\n" + res.stderr)
        else:
            steps += parse_pip_report(res.stdout, installed)
    return steps


_PINNED = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==(\S+)")


async def plan_new(settings: PipSettings, python_version: str | None, add: list[str]) -> list[PipStep]:
    """What installing ``add`` into a new environment with ``python_version`` would install: uv
    resolves for a Python that does not exist yet. Without uv, the requirements unresolved."""
    uv = uv_binary() if settings.installer in ("auto", "uv") else None
    if uv is None or python_version is None:
        return [PipStep(r, None, None) for r in add]
    installer = Installer("uv", Path(sys.executable), settings, uv)
    res = await _run(
        installer, installer.compile(python_version), "plan the installation", None, "\n".join(add).encode()
    )
    steps = [
        PipStep(m.group(1), None, m.group(2))
        for line in res.stdout.splitlines()
        if (m := _PINNED.match(line))
    ]
    return sorted(steps, key=lambda s: normalized(s.name))
