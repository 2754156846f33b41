"""Memory and CPU of the container this server runs in, from cgroup v2, else v1, else the machine.

Pure readers over a filesystem root so that tests can build fake cgroup trees. Memory "used"
is the working set (usage minus inactive file cache), the number the kernel's OOM killer and
Kubernetes' eviction look at; page cache that can be dropped is not the user's problem.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import psutil

# cgroup v1 reports "no limit" as a page-aligned LONG_MAX; anything this large is unlimited.
_V1_UNLIMITED = 1 << 62


@dataclass(frozen=True)
class HostSample:
    source: str  # "cgroup2" | "cgroup1" | "host"
    memory_used: int
    memory_limit: int
    memory_limited: bool
    cpu_limit: float
    cpu_limited: bool
    cpu_seconds: float | None  # cumulative CPU time of the cgroup; None when unknown
    taken_at: float  # time.monotonic() of the sample


@dataclass(frozen=True)
class _Mount:
    version: int
    mountpoint: Path
    root: str
    controllers: frozenset[str]


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _read_int(path: Path) -> int | None:
    text = _read(path)
    if text is None or text == "max":
        return None
    try:
        return int(text)
    except ValueError:
        return None


def _stat_value(path: Path, key: str) -> int | None:
    text = _read(path)
    if not text:
        return None
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name == key:
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _mounts(mountinfo: str) -> list[_Mount]:
    """cgroup mounts from /proc/self/mountinfo (fields: id parent dev root mountpoint opts ... - fstype src superopts)."""
    mounts = []
    for line in mountinfo.splitlines():
        pre, sep, post = line.partition(" - ")
        if not sep:
            continue
        fields, tail = pre.split(), post.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        fstype = tail[0]
        if fstype == "cgroup2":
            mounts.append(_Mount(2, Path(fields[4]), fields[3], frozenset()))
        elif fstype == "cgroup":
            opts = frozenset(tail[2].split(","))
            mounts.append(_Mount(1, Path(fields[4]), fields[3], opts))
    return mounts


def _memberships(proc_cgroup: str) -> dict[str, str]:
    """Map controller name (or "" for the unified hierarchy) to this process's cgroup path."""
    out: dict[str, str] = {}
    for line in proc_cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, ctrls, path = parts
        if ctrls == "":
            out[""] = path
        for c in ctrls.split(","):
            if c:
                out[c] = path
    return out


def _leaf(mount: _Mount, cg_path: str, prefix: Path) -> Path:
    """The directory of our cgroup under ``mount``; the mount itself when namespaces hide the path."""
    base = prefix / str(mount.mountpoint).lstrip("/")
    rel = os.path.relpath(cg_path, mount.root) if cg_path.startswith(mount.root) else cg_path
    rel = "" if rel in (".", "/") else rel.lstrip("/")
    candidate = base / rel
    return candidate if candidate.is_dir() else base


def _ancestors(leaf: Path, top: Path) -> list[Path]:
    """``leaf`` and its parents up to ``top``: limits set on a parent cgroup bind us too."""
    out = [leaf]
    while leaf != top and top in leaf.parents:
        leaf = leaf.parent
        out.append(leaf)
    return out


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _min(values: list[int | None]) -> int | None:
    real = [v for v in values if v is not None]
    return min(real) if real else None


def _v2_sample(
    mount: _Mount, leaf: Path, top: Path, machine_total: int, cores: int, now: float
) -> HostSample | None:
    current = _read_int(leaf / "memory.current")
    if current is None:
        return None
    chain = _ancestors(leaf, top)
    limit = _min([_read_int(p / "memory.max") for p in chain])
    inactive = _stat_value(leaf / "memory.stat", "inactive_file") or 0
    quotas = []
    for p in chain:
        text = _read(p / "cpu.max")
        if text and not text.startswith("max"):
            quota, _, period = text.partition(" ")
            try:
                quotas.append(int(quota) / int(period or 100000))
            except (ValueError, ZeroDivisionError):
                pass
    usec = _stat_value(leaf / "cpu.stat", "usage_usec")
    return _build(
        "cgroup2",
        current - inactive,
        limit,
        machine_total,
        quotas,
        cores,
        usec / 1e6 if usec is not None else None,
        now,
    )


def _v1_sample(
    mounts: dict[str, tuple[_Mount, Path, Path]], machine_total: int, cores: int, now: float
) -> HostSample | None:
    if "memory" not in mounts:
        return None
    _, leaf, top = mounts["memory"]
    usage = _read_int(leaf / "memory.usage_in_bytes")
    if usage is None:
        return None
    limits = [_read_int(p / "memory.limit_in_bytes") for p in _ancestors(leaf, top)]
    limit = _min([v for v in limits if v is not None and v < _V1_UNLIMITED])
    inactive = _stat_value(leaf / "memory.stat", "total_inactive_file") or 0
    quotas: list[float] = []
    if "cpu" in mounts:
        _, cleaf, ctop = mounts["cpu"]
        for p in _ancestors(cleaf, ctop):
            quota, period = _read_int(p / "cpu.cfs_quota_us"), _read_int(p / "cpu.cfs_period_us")
            if quota is not None and quota > 0 and period:
                quotas.append(quota / period)
    seconds = None
    if "cpuacct" in mounts:
        ns = _read_int(mounts["cpuacct"][1] / "cpuacct.usage")
        seconds = ns / 1e9 if ns is not None else None
    return _build("cgroup1", usage - inactive, limit, machine_total, quotas, cores, seconds, now)


def _build(
    source: str,
    used: int,
    limit: int | None,
    machine_total: int,
    quotas: list[float],
    cores: int,
    cpu_seconds: float | None,
    now: float,
) -> HostSample:
    limited = limit is not None and limit < machine_total
    cpu_limit = min([*quotas, float(cores)])
    return HostSample(
        source=source,
        memory_used=max(used, 0),
        memory_limit=limit if limited and limit else machine_total,
        memory_limited=limited,
        cpu_limit=round(cpu_limit, 3),
        cpu_limited=cpu_limit < cores or cores < (os.cpu_count() or cores),
        cpu_seconds=cpu_seconds,
        taken_at=now,
    )


def read_host(
    prefix: str | os.PathLike[str] = "/",
    *,
    now: float,
    machine_total: int | None = None,
    cores: int | None = None,
) -> HostSample:
    """Sample memory and CPU. ``prefix`` is the filesystem root (tests point it at a fake tree)."""
    root = Path(prefix)
    machine_total = machine_total if machine_total is not None else psutil.virtual_memory().total
    cores = cores if cores is not None else _cpu_count()
    mountinfo = _read(root / "proc/self/mountinfo") or ""
    members = _memberships(_read(root / "proc/self/cgroup") or "")
    mounts = _mounts(mountinfo)

    for m in mounts:
        if m.version == 2 and "" in members:
            base = root / str(m.mountpoint).lstrip("/")
            leaf = _leaf(m, members[""], root)
            # A hybrid host mounts an empty unified tree; only use it when it really holds memory.
            if "memory" in (_read(base / "cgroup.controllers") or "").split():
                sample = _v2_sample(m, leaf, base, machine_total, cores, now)
                if sample:
                    return sample

    v1: dict[str, tuple[_Mount, Path, Path]] = {}
    for m in mounts:
        if m.version != 1:
            continue
        for ctrl in ("memory", "cpu", "cpuacct"):
            if ctrl in m.controllers and ctrl in members:
                v1[ctrl] = (m, _leaf(m, members[ctrl], root), root / str(m.mountpoint).lstrip("/"))
    sample = _v1_sample(v1, machine_total, cores, now)
    if sample:
        return sample

    vm = psutil.virtual_memory()
    times = psutil.cpu_times()
    return HostSample(
        source="host",
        memory_used=vm.total - vm.available,
        memory_limit=machine_total,
        memory_limited=False,
        cpu_limit=float(cores),
        cpu_limited=cores < (os.cpu_count() or cores),
        cpu_seconds=times.user + times.system,
        taken_at=now,
    )
