"""Parameter sweeps: the runs a request asks for, checked as a whole before anything is recorded.

A sweep is either ``sweep`` (parameter name -> values: the cartesian product, in the order given) or
``sweep_runs`` (each run's values); the fixed ``parameters`` go to every run. The number of runs is
known before any is built (the product of the list lengths), so a request for a million runs is refused
without making a million dictionaries. Each distinct value is checked against the notebook's parameter
once, not once per run it appears in.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import Conflict, TooLarge
from ...models.jobs import JOB_STATES, MAX_NAME, JobRequest
from ...models.notebooks import NotebookParameters
from ...models.sweeps import JobGroup
from ..parameters import check_values


@dataclass(frozen=True)
class Sweep:
    runs: list[dict[str, Any]]  # every run's parameters, the fixed ones included
    varied: list[str]  # the names whose values differ between runs, in the request's order
    max_concurrent: int  # runs at once (the backend's own limits apply too)


def is_sweep(request: JobRequest) -> bool:
    return request.sweep is not None or request.sweep_runs is not None


def size_of(request: JobRequest) -> int:
    if request.sweep is not None:
        return math.prod(len(values) for values in request.sweep.values())
    return len(request.sweep_runs or ())


def expand(request: JobRequest, limit: int) -> Sweep:
    """The runs of ``request``; a Conflict beyond ``limit`` runs (before any run is made). A 409, not a
    400: the request is what the document allows, this server's limit (c.GpuEnvApp.max_sweep_runs) is not
    in it, as a backend's limits are not."""
    size = size_of(request)
    if size > limit:
        raise Conflict(
            f"The sweep has {size:,} runs; at most {limit:,} are accepted in one sweep "
            "(c.GpuEnvApp.max_sweep_runs). Split it, or sweep fewer values.",
            reason="sweep_too_large",
        )
    fixed = dict(request.parameters)
    if request.sweep is not None:
        names = list(request.sweep)
        runs = [
            {**fixed, **dict(zip(names, combo, strict=True))}
            for combo in itertools.product(*request.sweep.values())
        ]
    else:
        runs = [{**fixed, **run} for run in request.sweep_runs or ()]
        names = list(dict.fromkeys(k for run in request.sweep_runs or () for k in run))
    varied = [n for n in names if len({_key(r.get(n)) for r in runs}) > 1] or names
    return Sweep(runs, varied, min(request.max_concurrent or size, size))


def check(declared: NotebookParameters, sweep: Sweep, max_bytes: int) -> None:
    """Refuse (409, naming the run) values the notebook does not take, and (413) a run whose parameters
    are larger than ``max_bytes`` as JSON. Each distinct (name, value) is checked once."""
    seen: set[tuple[str, str]] = set()
    for i, run in enumerate(sweep.runs):
        size = len(json.dumps(run))
        if size > max_bytes:
            raise TooLarge(
                f"Run {i + 1} of the sweep ({label(run, sweep.varied)}) has parameters of {size} bytes as "
                f"JSON; at most {max_bytes} are accepted (c.GpuEnvApp.max_parameters_bytes).",
                reason="parameters_too_large",
            )
        fresh = {k: v for k, v in run.items() if (k, _key(v)) not in seen}
        if not fresh:
            continue
        try:
            check_values(declared, fresh)
        except Conflict as e:
            raise Conflict(
                f"Run {i + 1} of the sweep ({label(run, sweep.varied)}): {e}", reason=e.reason
            ) from None
        seen.update((k, _key(v)) for k, v in fresh.items())


def label(parameters: Mapping[str, Any], names: Sequence[str], limit: int = 80) -> str:
    """``alpha=0.1, lr=0.01``: a run's values of the varied names, for names, messages and rows."""
    text = ", ".join(f"{n}={_short(parameters.get(n))}" for n in names)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def run_name(name: str, parameters: Mapping[str, Any], varied: Sequence[str]) -> str:
    """``train [alpha=0.1, lr=0.01]``: a run's name, its sweep's name shortened where both would not
    fit a job's name (a run sent again is an ordinary job, and its name is checked like any)."""
    shown = f" [{label(parameters, varied)}]"
    room = MAX_NAME - len(shown)
    return (name if len(name) <= room else name[: room - 1] + "…") + shown


def _short(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def _key(value: Any) -> str:
    # bool and int are equal in Python (True == 1); their JSON is not, and neither are their checks
    return json.dumps(value, sort_keys=True)


def summarized(sweep: JobGroup, counts: Mapping[str, int], finished_at: float | None) -> JobGroup:
    """``sweep`` with its runs' ``counts`` per state, the state they make together, and when the last
    ended (once all have)."""
    counts = {state: counts.get(state, 0) for state in JOB_STATES}
    active = counts["queued"] + counts["running"]
    if active:
        # it has begun once a run runs or has ended (those that ended had their turn)
        state = "running" if counts["running"] or active < sum(counts.values()) else "queued"
    elif counts["failed"]:
        state = "failed"
    elif counts["cancelled"] and (sweep.cancelled_at is not None or not counts["succeeded"]):
        # cancelled as a whole (or nothing of it ran to the end); one run cancelled among runs that
        # succeeded does not make the sweep cancelled: its counts say so
        state = "cancelled"
    else:
        state = "succeeded"
    return sweep.model_copy(
        update={"counts": counts, "state": state, "finished_at": None if active else finished_at}
    )


_NUMBER = r"-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_RANGE = re.compile(rf"^\s*({_NUMBER})\s*:\s*({_NUMBER})\s*(?::\s*({_NUMBER})\s*)?$")
MAX_RANGE = 100_000


def range_values(text: str) -> list[int | float] | None:
    """``start:stop:step`` (step 1 when left out) as its values, ``stop`` included when a step lands on
    it: ``0:1:0.25`` is 0, 0.25, 0.5, 0.75, 1. None when ``text`` is not such a range; ValueError for
    one that makes no values or too many."""
    m = _RANGE.match(text)
    if m is None:
        return None
    start, stop = float(m.group(1)), float(m.group(2))
    step = float(m.group(3)) if m.group(3) else 1.0
    if step == 0 or (stop - start) * step < 0:
        raise ValueError(f"the range {text!r} makes no values: its step goes away from its end")
    count = int(math.floor((stop - start) / step + 1e-9)) + 1
    if count > MAX_RANGE:
        raise ValueError(f"the range {text!r} makes {count:,} values; at most {MAX_RANGE:,}")
    whole = all(re.fullmatch(r"-?\d+", g) for g in m.groups() if g)
    values = [start + i * step for i in range(count)]
    return [int(v) for v in values] if whole else [float(f"{v:.12g}") for v in values]
