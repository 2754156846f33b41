"""Small things every command module uses: tables, sizes and durations, JSON output, validation, what
`job run` and `schedule create` send, a job's energy in words."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, JsonValue, ValidationError

from ..efficiency.words import carbon_text, energy_text
from ..errors import InvalidRequest
from ..jobs.sweeps.plan import range_values
from ..models.common import describe_validation_error
from ..models.jobs import PRIORITIES, Cost, JobGpuUsage

M = TypeVar("M", bound=BaseModel)


class UsageError(Exception):
    """The command line asks for something it cannot have (exit status 2)."""


def confirm(question: str, *, unasked: str) -> bool:
    """Ask ``question`` on the terminal (no answer is no). Without a terminal to ask on, a UsageError
    saying ``unasked`` (what to pass to go ahead without asking)."""
    if not sys.stdin.isatty():
        raise UsageError(unasked)
    try:
        return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")
    except EOFError:
        return False


def table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """Left-aligned columns separated by two spaces; ``None`` shows as ``-``."""
    cells = [[str(h) for h in headers]] + [["-" if c is None else str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells
    )


def print_table(headers: Sequence[str], rows: Iterable[Sequence[object]], empty: str) -> None:
    rows = list(rows)
    if not rows:
        print(empty, file=sys.stderr)
        return
    print(table(headers, rows))


def print_facts(facts: Iterable[tuple[str, object]]) -> None:
    """One thing's facts, a ``name: value`` line each with the values aligned; one with no value is left out."""
    for name, value in facts:
        if value:
            print(f"{name + ':':12}{value}")


def print_json(data: BaseModel | Sequence[BaseModel] | Any) -> None:
    if isinstance(data, BaseModel):
        data = data.model_dump(mode="json")
    elif isinstance(data, list | tuple):
        data = [d.model_dump(mode="json") if isinstance(d, BaseModel) else d for d in data]
    print(json.dumps(data, indent=2))


def human_bytes(n: int | None) -> str:
    if n is None:
        return "-"
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def human_duration(seconds: float | None) -> str:
    """``42s``, ``3m05s``, ``2h07m``, ``3d04h``."""
    if seconds is None:
        return "-"
    s = max(int(seconds), 0)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    if s < 86400:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{s // 86400}d{s % 86400 // 3600:02d}h"


def age(timestamp: float | None) -> str:
    return "-" if timestamp is None else human_duration(time.time() - timestamp)


def validated(model: type[M], **data: Any) -> M:
    """``model`` from ``data``; a validation error becomes an :class:`InvalidRequest` naming each field."""
    try:
        return model.model_validate(data, strict=True)
    except ValidationError as e:
        raise InvalidRequest(describe_validation_error(e, "Invalid arguments")) from None


def parse_value(text: str) -> JsonValue:
    """A ``-p`` value as papermill reads it: JSON where it parses (5, 0.1, true, [1, 2]), else text.

    Python's ``True``/``False``/``None`` are understood too; ``NaN`` and ``Infinity`` stay text.
    """

    def refuse(constant: str) -> Any:
        raise ValueError(constant)

    try:
        value: JsonValue = json.loads(text, parse_constant=refuse)
        return value
    except ValueError:
        pass
    return {"True": True, "False": False, "None": None}.get(text, text)


def add_parameter_option(p: argparse.ArgumentParser, *flags: str, text: str) -> None:
    """An option given once per parameter, ``NAME VALUE``; the (name, value) pairs, in order."""
    p.add_argument(*flags, nargs=2, metavar=("NAME", "VALUE"), action="append", default=[], help=text)


def add_run_arguments(p: argparse.ArgumentParser) -> None:
    """What a run takes besides its notebook: parameters, where and how it runs (submit, schedule)."""
    add_parameter_option(
        p,
        "-p",
        "--parameter",
        text="a parameter for the notebook's `parameters` cell; VALUE is read as JSON where it parses "
        "(5, 0.1, true, [1, 2]), else as text. Several values (1,2,3) or a range (start:stop:step, stop "
        "included) make a sweep: one run per combination, as one job array",
    )
    add_parameter_option(p, "-r", "--raw-parameter", text="a parameter whose VALUE is always text")
    p.add_argument(
        "--max-concurrent",
        type=int,
        metavar="N",
        help="with a sweep (a -p with several values: 1,2,3 or a range 0:1:0.25): runs at once at most",
    )
    p.add_argument("--backend", default="local", help="the backend that runs it (default: local)")
    runtime = p.add_mutually_exclusive_group()
    runtime.add_argument("--kernel", metavar="K", help="run with this kernel (default: the notebook's own)")
    runtime.add_argument("--env", metavar="E", help="run in this conda environment")
    runtime.add_argument("--image", metavar="I", help="run in this packed image")
    p.add_argument("--gpus", type=int, metavar="N", help="whole GPUs")
    p.add_argument("--mig", metavar="PROFILE", help="a MIG slice instead of whole GPUs, e.g. 1g.10gb")
    p.add_argument("--cpus", type=int, metavar="N", help="CPU cores")
    p.add_argument("--memory", metavar="SIZE", help="memory, e.g. 512M, 4G")
    p.add_argument(
        "--time-limit",
        "--time",  # the older name, still read
        dest="time",
        metavar="LIMIT",
        help="time limit: minutes, HH:MM:SS or D-HH:MM:SS (--time is the older name)",
    )
    p.add_argument("--queue", metavar="Q", help="a queue of the backend")
    p.add_argument(
        "--priority",
        choices=PRIORITIES,
        default="normal",
        help="opportunistic: may be stopped when others need the GPU, then requeued and resumed (where the "
        "backend offers it; the notebook gets checkpoint_dir and resumed)",
    )
    p.add_argument("--name", metavar="N", help="a label (default: the notebook's name)")


def run_request(args: argparse.Namespace, root: str) -> dict[str, Any]:
    """What `POST jobs` takes, from the options :func:`add_run_arguments` declared."""
    notebook = os.path.abspath(args.notebook)
    if os.path.commonpath([os.path.realpath(notebook), root]) != root:
        raise InvalidRequest(
            f"{args.notebook} is outside the root directory {root}; run from a folder that holds it "
            "or pass --root."
        )
    parameters: dict[str, JsonValue] = {}
    sweep: dict[str, list[JsonValue]] = {}
    for name, value in args.parameter:
        values = sweep_values(value)
        if values is None:
            parameters[name] = parse_value(value)
        else:
            sweep[name] = values
    parameters.update(dict(args.raw_parameter))
    resources = {
        "cpus": args.cpus,
        "memory": args.memory,
        "gpus": args.gpus,
        "mig_profile": args.mig,
        "time_limit": args.time,
    }
    return {
        "notebook_path": notebook,
        "backend": args.backend,
        "kernel": args.kernel,
        "environment": args.env,
        "image": args.image,
        "parameters": parameters,
        "resources": {k: v for k, v in resources.items() if v is not None},
        "queue": args.queue,
        "name": args.name,
        "priority": args.priority,
    } | ({"sweep": sweep, "max_concurrent": args.max_concurrent} if sweep else {})


def sweep_values(text: str) -> list[JsonValue] | None:
    """The values of a swept ``-p``: a range ``start:stop:step`` or a comma list (each value read as
    by :func:`parse_value`); None for one value (JSON such as ``[1, 2]`` is one value)."""
    try:
        found = range_values(text)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if found is not None:
        return list(found)
    if "," not in text or not isinstance(parse_value(text), str):
        return None
    return [parse_value(part.strip()) for part in text.split(",")]


def energy_words(gpu: JobGpuUsage | None) -> str | None:
    """``0.42 kWh (counter), 105 g CO2e, 3.48 EUR``: a job's GPU energy with its carbon and cost where the
    site set its numbers; why there is none where none was measured; None with no GPU summary at all."""
    if gpu is None:
        return None
    if gpu.energy_joules is None:
        return f"not measured: {gpu.energy_note}" if gpu.energy_note else "not measured"
    parts = [f"{energy_text(gpu.energy_joules)} ({gpu.energy_source or 'source unknown'})"]
    if gpu.co2e_grams is not None:
        parts.append(carbon_text(gpu.co2e_grams))
    if gpu.cost is not None:
        parts.append(money(gpu.cost))
    return ", ".join(parts)


def money(cost: Cost) -> str:
    """``3.48 EUR``; ``0.0021 EUR`` for an amount under a cent."""
    amount = f"{cost.amount:.2f}" if cost.amount >= 0.01 or cost.amount == 0 else f"{cost.amount:.2g}"
    return f"{amount} {cost.currency}" if cost.currency else amount
