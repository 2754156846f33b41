"""Pure parsers of SLURM's command output (22.05 and newer) and the words shown to users for its states.

Nothing here runs a command: the backend (backend.py, through controller.py) runs ``sbatch``, ``squeue``, ``scontrol`` and
``sinfo`` with the formats defined here and hands their text to these functions. The test data under
tests/backends/slurm/data was captured from a real slurmctld 22.05.8.

Formats are fixed, delimited text rather than ``--json``: ``squeue --json`` in 22.05 ignores ``-j`` and
``-t`` (it returns every job of the cluster), and ``scontrol show job --json`` does not exist before 23.02.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from ...models.resources import parse_time_limit

# `%r` (the reason) comes last: it is the only field that may hold the separator or spaces.
SQUEUE_FIELDS = ("%i", "%T", "%P", "%S", "%N", "%r")
SQUEUE_FORMAT = "|".join(SQUEUE_FIELDS)
# Partition (`*` marks the default), availability, time limit, CPUs, memory (MB) and gres per node group.
SINFO_FORMAT = "%P|%a|%l|%c|%m|%G"

_EMPTY = frozenset({"", "N/A", "n/a", "NONE", "None", "none", "Unknown", "(null)"})


@dataclass(frozen=True)
class SlurmJob:
    """One job as squeue or scontrol reports it; the state is the base state (``RUNNING``, ``TIMEOUT``)."""

    job_id: str
    state: str
    reason: str | None = None
    partition: str | None = None
    start_time: float | None = None
    end_time: float | None = None
    nodes: str | None = None
    exit_code: int | None = None
    exit_signal: int | None = None
    restarts: int | None = None  # times SLURM requeued it (scontrol's Restarts); None: not said


@dataclass
class Partition:
    name: str
    up: bool = True
    default: bool = False
    max_time_seconds: int | None = None  # None: no limit
    max_cpus: int = 0  # on one node
    max_memory_mb: int = 0  # on one node
    max_gpus: int = 0  # on one node, all GPU types together
    gpu_types: set[str] = field(default_factory=set)


# ----- small values -----


def parse_timestamp(text: str) -> float | None:
    """SLURM's ``2024-05-01T10:00:00`` (local time, the ``standard`` SLURM_TIME_FORMAT) as a Unix time."""
    text = text.strip()
    if text in _EMPTY:
        return None
    try:
        return time.mktime(time.strptime(text, "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return None


def parse_duration(text: str) -> int | None:
    """Seconds from SLURM's ``MM:SS``, ``HH:MM:SS``, ``D-HH[:MM[:SS]]`` or minutes (the parser of job time
    limits); None for no limit or what it cannot read."""
    text = text.strip()
    if text.lower() in ("infinite", "unlimited", "n/a", "none", "") or text in _EMPTY:
        return None
    try:
        return parse_time_limit(text)
    except ValueError:
        return None


def _leading_int(text: str) -> int:
    """``22899``, ``22899+`` (sinfo's "at least") -> 22899; anything else -> 0."""
    m = re.match(r"\s*(\d+)", text)
    return int(m.group(1)) if m else 0


def parse_gres(text: str) -> list[tuple[str, str | None, int]]:
    """``gpu:2``, ``gpu:a100:4(S:0-1)``, ``gpu:1g.10gb:7,mps:100`` -> ``[(name, type, count), ...]``."""
    out: list[tuple[str, str | None, int]] = []
    if text.strip() in _EMPTY:
        return out
    # Commas also appear inside the socket list "(S:0,1)": split only on commas outside parentheses.
    for item in re.split(r",(?![^(]*\))", text):
        item = re.sub(r"\(.*?\)", "", item).strip()
        if not item:
            continue
        parts = item.split(":")
        name = parts[0]
        if len(parts) == 1:
            out.append((name, None, 1))
        elif len(parts) == 2:
            count = _leading_int(parts[1])
            if parts[1].strip().isdigit() or count:
                out.append((name, None, count))
            else:
                out.append((name, parts[1], 1))
        else:
            out.append((name, parts[1], _leading_int(parts[2])))
    return out


def parse_sbatch_parsable(stdout: str) -> str:
    """The job id from ``sbatch --parsable`` (``123`` or ``123;cluster``); ValueError if there is none."""
    for line in stdout.splitlines():
        line = line.strip()
        if line:
            job_id = line.split(";", 1)[0]
            if re.fullmatch(r"\d+(?:_\d+)?", job_id):
                return job_id
    raise ValueError(f"sbatch printed no job id: {stdout.strip()[:200]!r}")


def sbatch_error(stderr: str) -> str:
    """sbatch's own complaint, without its ``sbatch: error:`` prefixes, lines joined."""
    lines = []
    for raw in stderr.splitlines():
        line = re.sub(r"^\s*sbatch:\s*(error|fatal):\s*", "", raw).strip()
        if line and line not in lines:
            lines.append(line)
    return "; ".join(lines) or "sbatch failed without saying why"


_TRANSIENT = (
    "unable to contact slurm controller",
    "socket timed out",
    "connection refused",
    "zero bytes were transmitted",
    "temporarily unable to accept job",
    "resource temporarily unavailable",
    "slurm_persist_conn",
    "communication connection failure",
)


def is_transient(message: str) -> bool:
    """Does an error say the controller could not be reached (try later), rather than refuse the job?"""
    low = message.lower()
    return any(t in low for t in _TRANSIENT)


# ----- squeue, scontrol, sinfo -----


def _state(text: str) -> str:
    # `CANCELLED by 0` (sacct), `COMPLETING+` or `RUNNING,COMPLETING` forms: the first word is the base.
    return re.split(r"[\s+,]", text.strip(), maxsplit=1)[0].upper()


def parse_squeue(text: str) -> dict[str, SlurmJob]:
    """Lines of ``squeue --noheader --format=SQUEUE_FORMAT`` -> jobs by id."""
    jobs: dict[str, SlurmJob] = {}
    n = len(SQUEUE_FIELDS)
    for line in text.splitlines():
        if not line.strip():
            continue
        parts = line.split("|", n - 1)
        if len(parts) != n:
            continue
        job_id, state, partition, start, nodes, reason = (p.strip() for p in parts)
        if not job_id:
            continue
        jobs[job_id] = SlurmJob(
            job_id=job_id,
            state=_state(state),
            reason=None if reason in _EMPTY else reason,
            partition=partition or None,
            start_time=parse_timestamp(start),
            nodes=None if nodes in _EMPTY else nodes,
        )
    return jobs


# `Key=value` pairs of `scontrol -o show job`: a key starts after a space; values run to the next key.
_KEY = re.compile(r"(?:^|\s)([A-Za-z][A-Za-z0-9_/:]*)=")


def parse_scontrol_record(line: str) -> dict[str, str]:
    """One line of ``scontrol -o show ...`` -> its fields (a value may hold spaces, as a Comment may)."""
    fields: dict[str, str] = {}
    matches = list(_KEY.finditer(line))
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(line)
        fields.setdefault(m.group(1), line[m.end() : end].strip())
    return fields


def parse_scontrol_job(text: str) -> SlurmJob | None:
    """``scontrol -o show job ID`` -> the job; None when the text holds no job."""
    for line in text.splitlines():
        f = parse_scontrol_record(line)
        if "JobId" not in f or "JobState" not in f:
            continue
        exit_code = exit_signal = None
        m = re.fullmatch(r"(\d+):(\d+)", f.get("ExitCode", ""))
        if m:
            exit_code, exit_signal = int(m.group(1)), int(m.group(2))
        reason = f.get("Reason", "")
        return SlurmJob(
            job_id=f["JobId"],
            state=_state(f["JobState"]),
            reason=None if reason in _EMPTY else reason,
            partition=f.get("Partition") or None,
            start_time=parse_timestamp(f.get("StartTime", "")),
            end_time=parse_timestamp(f.get("EndTime", "")),
            nodes=None if f.get("NodeList", "") in _EMPTY else f.get("NodeList"),
            exit_code=exit_code,
            exit_signal=exit_signal,
            restarts=int(f["Restarts"]) if f.get("Restarts", "").isdigit() else None,
        )
    return None


def is_unknown_job(stderr: str) -> bool:
    """Does squeue's or scontrol's error say the job id is not (or no longer) known to the controller?"""
    return "invalid job id" in stderr.lower()


def parse_sinfo(text: str) -> list[Partition]:
    """Lines of ``sinfo --noheader --format=SINFO_FORMAT`` -> partitions, per-node maxima merged."""
    parts: dict[str, Partition] = {}
    for line in text.splitlines():
        cols = line.split("|")
        if len(cols) != 6 or not cols[0].strip():
            continue
        raw_name, avail, limit, cpus, mem, gres = (c.strip() for c in cols)
        default = raw_name.endswith("*")
        name = raw_name.rstrip("*")
        p = parts.setdefault(name, Partition(name=name))
        p.default = p.default or default
        p.up = avail.lower() == "up"
        p.max_time_seconds = parse_duration(limit)
        p.max_cpus = max(p.max_cpus, _leading_int(cpus))
        p.max_memory_mb = max(p.max_memory_mb, _leading_int(mem))
        gpus = [(typ, count) for name_, typ, count in parse_gres(gres) if name_ == "gpu"]
        p.max_gpus = max(p.max_gpus, sum(c for _, c in gpus))
        p.gpu_types.update(t for t, _ in gpus if t)
    return list(parts.values())


# Pending jobs of every user in priority order (highest first, then the oldest): the order the main
# scheduler tries them in, one partition at a time. `%S` is the backfill scheduler's expected start.
QUEUE_FORMAT = "%i|%P|%Q|%S"


@dataclass(frozen=True)
class Standing:
    position: int  # 1 = next in its partition
    partition: str
    estimated_start: float | None


def queue_standings(text: str, wanted: set[str]) -> dict[str, Standing]:
    """From ``squeue --noheader --states=PENDING --array --sort=-p,i --format=QUEUE_FORMAT``: where each
    wanted job stands in its partition. A job pending in several partitions counts in its first."""
    seen: dict[str, int] = {}
    out: dict[str, Standing] = {}
    for line in text.splitlines():
        parts = line.strip().split("|")
        if len(parts) != 4 or not parts[0]:
            continue
        job_id, partitions, _priority, start = (p.strip() for p in parts)
        partition = partitions.split(",")[0]
        seen[partition] = seen.get(partition, 0) + 1
        if job_id in wanted and job_id not in out:
            out[job_id] = Standing(seen[partition], partition, parse_timestamp(start))
    return out


_GRES_ITEM = re.compile(r"^gpu(?::(?P<type>[^:(]+))?:(?P<count>\d+)")
_DOWN = ("DOWN", "DRAIN", "FAIL", "FUTURE", "NOT_RESPONDING", "POWERED_DOWN", "POWER_DOWN")


def _gres_counts(text: str) -> dict[str, int]:
    """``gpu:a100:4(S:0-1),gpu:1g.10gb:7`` -> ``{"a100": 4, "1g.10gb": 7}`` (untyped GPUs under "")."""
    out: dict[str, int] = {}
    for item in re.split(r",(?![^(]*\))", text):
        m = _GRES_ITEM.match(item.strip())
        if m:
            key = m.group("type") or ""
            out[key] = out.get(key, 0) + int(m.group("count"))
    return out


def node_gpus(text: str) -> list[tuple[str, int, int, int]]:
    """From ``scontrol -d -o show node``: ``(gres type, total, used, nodes)`` over the nodes that can take
    jobs (down, drained and failing nodes count for nothing); type "" for untyped GPUs."""
    totals: dict[str, list[int]] = {}
    for line in text.splitlines():
        fields = dict(_KEY_VALUE.findall(line))
        state = fields.get("State", "")
        if not fields or any(word in state for word in _DOWN):
            continue
        have, used = _gres_counts(fields.get("Gres", "")), _gres_counts(fields.get("GresUsed", ""))
        for kind, n in have.items():
            row = totals.setdefault(kind, [0, 0, 0])
            row[0] += n
            row[1] += min(used.get(kind, 0), n)
            row[2] += 1
    return [(kind, t, u, n) for kind, (t, u, n) in sorted(totals.items())]


_KEY_VALUE = re.compile(r"(?:^|\s)(Gres|GresUsed|State)=(\S*)")
