"""The one parser of the files an environment can be created from: environment.yml, requirements.txt and
explicit lock files (``@EXPLICIT``, as ``conda list --explicit`` and our own export write them).

Pure functions: text in, :class:`EnvFile` out, or :class:`~..errors.InvalidRequest` naming the line and
what to change. Nothing here installs or reads the network. What a file may cost is bounded before it is
paid: YAML nested at most :data:`MAX_DEPTH` deep and standing for at most :data:`MAX_NODES` values, its
aliases counted as what they expand to (a few kilobytes of aliases once stood for a million
requirements); at most :data:`MAX_ENTRIES` packages, counted as they are read. An explicit lock's
packages come from the configured channels only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, Literal

from ...errors import InvalidRequest
from ...models.envs.syntax import check_spec
from ...system.boundedyaml import YamlTooBig, load_yaml

FileKind = Literal["environment.yml", "requirements.txt", "explicit"]

# A file this size is not an environment description; refuse before parsing it.
MAX_FILE_BYTES = 1 << 20
MAX_ENTRIES = 2000
MAX_DEPTH = 64
MAX_NODES = 10 * MAX_ENTRIES
# Where conda and rattler look for a channel given by name (`conda-forge`).
CHANNEL_ALIAS = "https://conda.anaconda.org/"
# Our explicit export lists pip packages as comments under this line (conda cannot represent them).
PIP_COMMENT_HEADER = "# Installed with pip, not representable here"
_PACKAGE_FILE = re.compile(r"^(?P<name>.+)-(?P<version>[^-]+)-(?P<build>[^-]+)\.(conda|tar\.bz2)$")


@dataclass
class EnvFile:
    """What a file asks for: conda specs (solved against ``channels`` when set, else the server's
    configured channels) and PyPI requirements installed after them."""

    kind: FileKind
    conda: list[str]
    pip: list[str] = field(default_factory=list)
    name: str | None = None  # the file's own `name:` (environment.yml)
    channels: list[str] = field(default_factory=list)  # an explicit lock's own channels: exact packages
    ignored: list[str] = field(default_factory=list)  # what the file says that is not applied, in words


def kind_of(path: str, text: str) -> FileKind:
    """Which format ``text`` is: an ``@EXPLICIT`` line makes a lock, a YAML mapping with
    ``dependencies`` an environment.yml, anything else named ``*.txt`` a requirements file."""
    lines = [line.strip() for line in text.splitlines()]
    if "@EXPLICIT" in lines:
        return "explicit"
    suffix = PurePosixPath(path).suffix.lower()
    if suffix in (".yml", ".yaml") or re.search(r"^dependencies\s*:", text, re.M):
        return "environment.yml"
    if suffix in (".txt", ".in", ".lock", ""):
        return "requirements.txt"
    raise InvalidRequest(
        f"'{path}' is not a file an environment can be created from: use an environment.yml, a "
        "requirements.txt or an explicit lock file (`conda list --explicit`).",
        reason="unknown_file_kind",
    )


def channel_key(channel: str) -> str:
    """A channel as a URL without a trailing slash, a name (``conda-forge``) where conda finds it."""
    channel = channel.strip().rstrip("/")
    return channel if "://" in channel else CHANNEL_ALIAS + channel


def parse(path: str, text: str, channels: Sequence[str] = ()) -> EnvFile:
    """The request ``text`` (the content of ``path``) makes; InvalidRequest says what is wrong where.
    ``channels``: the configured ones (URLs or names), the only ones an explicit lock may name."""
    kind = kind_of(path, text)
    if kind == "explicit":
        parsed = _explicit(path, text, {channel_key(c) for c in channels})
    else:
        parsed = (_environment_yml if kind == "environment.yml" else _requirements)(path, text)
    _count(path, parsed.conda, parsed.pip)
    if not (parsed.pip if kind == "requirements.txt" else parsed.conda or parsed.pip):
        raise InvalidRequest(f"'{path}' lists no package.", reason="empty_file")
    return parsed


def _bad(path: str, where: str, what: str) -> InvalidRequest:
    return InvalidRequest(f"{path}, {where}: {what}", reason="invalid_file")


def _count(path: str, *lists: list[str]) -> None:
    """Called as entries are added, so that a file of a million lines stops at the limit."""
    if sum(map(len, lists)) > MAX_ENTRIES:
        raise InvalidRequest(f"'{path}' lists more than {MAX_ENTRIES} packages.", reason="too_many_packages")


def _conda_spec(path: str, where: str, spec: str, ignored_channels: list[str]) -> str:
    spec = spec.strip()
    if "::" in spec:  # `conda-forge::numpy`: the server's channels decide where packages come from
        channel, spec = spec.split("::", 1)
        if channel not in ignored_channels:
            ignored_channels.append(channel)
    try:
        return check_spec(spec)
    except ValueError as e:
        raise _bad(path, where, str(e)) from None


def _pip_requirement(path: str, where: str, line: str) -> str:
    from packaging.requirements import InvalidRequirement, Requirement

    if line.startswith("-"):
        raise _bad(
            path,
            where,
            f"'{line.split()[0]}' is a pip option; this server installs from its configured index and "
            "takes only requirements (name, extras, versions, markers). Remove the line.",
        )
    try:
        req = Requirement(line)
    except InvalidRequirement as e:
        raise _bad(path, where, f"'{line}' is not a PyPI requirement ({e}).") from None
    if req.url:
        raise _bad(
            path,
            where,
            f"'{line}' installs from a URL; this server installs from its configured index only. "
            "Name the package and its version instead.",
        )
    return str(req)


def _environment_yml(path: str, text: str) -> EnvFile:
    import yaml  # type: ignore[import-untyped]

    try:
        data: Any = load_yaml(text, MAX_DEPTH, MAX_NODES)
    except YamlTooBig as e:
        raise _bad(path, "its YAML", f"{e}; an environment file is a short list of packages.") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "its YAML"
        raise _bad(path, where, f"not valid YAML ({getattr(e, 'problem', None) or e}).") from None
    if not isinstance(data, dict) or not isinstance(data.get("dependencies"), list):
        raise _bad(path, "top level", "an environment.yml needs a `dependencies:` list.")
    ignored_channels: list[str] = []
    conda: list[str] = []
    pip: list[str] = []
    for i, dep in enumerate(data["dependencies"], 1):
        where = f"dependency {i}"
        if isinstance(dep, str):
            conda.append(_conda_spec(path, where, dep, ignored_channels))
            _count(path, conda, pip)
        elif isinstance(dep, dict) and set(dep) == {"pip"} and isinstance(dep["pip"], list):
            for j, req in enumerate(dep["pip"], 1):
                if not isinstance(req, str):
                    raise _bad(path, f"{where}, pip entry {j}", "a PyPI requirement must be a string.")
                pip.append(_pip_requirement(path, f"{where}, pip entry {j}", req.strip()))
                _count(path, conda, pip)
        else:
            raise _bad(path, where, "each dependency is a conda spec or a `pip:` list of requirements.")
    channels = data.get("channels") or []
    if not isinstance(channels, list) or not all(isinstance(c, str) for c in channels):
        raise _bad(path, "channels", "`channels:` must be a list of channel names or URLs.")
    ignored = []
    if named := [c for c in [*channels, *ignored_channels] if c not in ("nodefaults",)]:
        ignored.append(
            f"the file's channels ({', '.join(dict.fromkeys(named))}): this server installs from its "
            "configured channels"
        )
    if data.get("variables"):
        ignored.append("its `variables:` (set them in the kernel or the job instead)")
    if pip and not any(re.match(r"^pip\b", s) for s in conda):
        conda.append("pip")
    name = data.get("name")
    return EnvFile(
        "environment.yml", conda, pip, name=name if isinstance(name, str) else None, ignored=ignored
    )


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(line number, text) with comments stripped and ``\\`` continuations joined."""
    out: list[tuple[int, str]] = []
    pending, start = "", 0
    for n, raw in enumerate(text.splitlines(), 1):
        line = re.sub(r"(^|\s)#.*$", "", raw).rstrip()
        if not pending:
            start = n
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line = (pending + line).strip()
        pending = ""
        if line:
            out.append((start, line))
    if pending.strip():
        out.append((start, pending.strip()))
    return out


def _requirements(path: str, text: str) -> EnvFile:
    pip: list[str] = []
    for n, line in _logical_lines(text):
        pip.append(_pip_requirement(path, f"line {n}", line))
        _count(path, pip)
    # A requirements file names no Python: the newest the channels have, with pip beside it.
    return EnvFile("requirements.txt", ["python", "pip"], pip)


def _explicit(path: str, text: str, allowed: set[str]) -> EnvFile:
    conda: list[str] = []
    channels: list[str] = []
    pip: list[str] = []
    in_pip = seen_marker = False
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line.startswith(PIP_COMMENT_HEADER):
            in_pip = True
            continue
        if in_pip and line.startswith("#") and line[1:].strip():
            pip.append(_pip_requirement(path, f"line {n}", line[1:].strip()))
            _count(path, conda, pip)
            continue
        if not line or line.startswith("#"):
            continue
        if line == "@EXPLICIT":
            seen_marker = True
            continue
        if not seen_marker:
            raise _bad(path, f"line {n}", "an explicit lock lists package URLs only after `@EXPLICIT`.")
        url = line.split("#", 1)[0]
        parts = url.rsplit("/", 2)
        m = _PACKAGE_FILE.match(parts[-1]) if len(parts) == 3 else None
        if m is None or "://" not in url:
            raise _bad(
                path,
                f"line {n}",
                f"'{line[:200]}' is not a package URL (…/<subdir>/<name>-<version>-<build>.conda).",
            )
        channel = parts[0]
        if channel_key(channel) not in allowed:
            raise InvalidRequest(
                f"{path}, line {n}: '{url}' comes from {channel}, which is not a channel of this server; "
                f"packages come from {', '.join(sorted(allowed)) or 'no channel (none is configured)'}. "
                "Make the lock from an environment of this server (export it), or ask your administrator "
                "to add the channel.",
                reason="channel_not_allowed",
            )
        if channel not in channels:
            channels.append(channel)
        conda.append(_conda_spec(path, f"line {n}", f"{m['name']} =={m['version']} {m['build']}", []))
        _count(path, conda, pip)
    return EnvFile("explicit", conda, pip, channels=channels)
