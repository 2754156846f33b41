"""What a run recorded, read from its output notebook: the one reader of results, bounded.

Two ways to record, neither needing a package in the user's environment beyond what they already use:

- a cell tagged ``results`` whose last expression is a dict (``{"loss": loss, "acc": acc}``): its
  ``execute_result`` holds the dict as ``text/plain`` (a Python literal) or ``application/json``;
- values glued with scrapbook (``sb.glue("loss", loss)``): outputs carrying ``metadata.scrapbook.name``
  with the value as ``application/scrapbook.scrap.json+json``.

Values that are not JSON (an array, an object's repr) are kept as their text.

The notebook is the user's code's doing, so it is read bounded (:mod:`.scan`, :mod:`.literal`): only
those outputs are looked at, a value is kept up to ``value_bytes`` and the rest passed over unkept, and
a run's values stop at its ``budget``. What is cut is given as the beginning of its text, named in
``cut`` with the reason, and the row says where the whole is.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ...errors import FileRefused
from ...models.sweeps import SweepResults
from ...system import untrusted
from . import scan
from .literal import DictItems

RESULTS_TAG = "results"
SCRAP_MIME = "application/scrapbook.scrap.json+json"
MAX_NOTEBOOK_BYTES = 64 << 20  # a larger output notebook is not read at all: passing over it takes time
WHOLE_BYTES = 1 << 20  # an output notebook up to this size is parsed whole; a larger one is scanned
MAX_VALUES = 10_000  # values one run may record; more are left out, saying so
VALUE_BYTES = 64 << 10
TOTAL_BYTES = 8 << 20
BY_VALUE, BY_TOTAL = "value", "total"  # why a value was cut: its own length, or the answer's


@dataclass
class Recorded:
    """What one run recorded: its values (in the order recorded, a later one winning), those cut short
    (their text's beginning) with why, and what the reader has to say."""

    values: dict[str, Any] = field(default_factory=dict)
    cut: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _jsonable(value: Any) -> Any:
    """As JSON has it (a tuple as a list); anything JSON cannot hold (a set, a NaN) as its text."""
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError):
        return repr(value)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _size(value: Any) -> int:
    if value is None or isinstance(value, bool | int | float):
        return 8
    return len(_text(value).encode())


def _prefix(text: str, limit: int) -> str:
    """The first ``limit`` bytes of ``text`` as UTF-8, whole characters only."""
    return text.encode()[: max(limit, 0)].decode("utf-8", "ignore")


class _Output:
    """What is read of one output: its type, a scrap's name and value, a results dict's members."""

    def __init__(self) -> None:
        self.type = scan.Keep(64)
        self.name = scan.Keep(1024)
        self.scrap: scan.Keep | None = None
        self.members: dict[str, scan.Keep] = {}  # of an application/json dict
        self.items: list[tuple[str, Any, bool]] = []  # of a text/plain dict, as read
        self.text: DictItems | None = None


class _Run:
    """One notebook's values as the scan reaches them: each cell's outputs gathered, then taken when the
    cell turns out a code cell (tagged ``results`` for its dict), within ``budget`` bytes in all."""

    def __init__(self, value_bytes: int, budget: int) -> None:
        self.value_bytes = value_bytes
        self.left = budget
        self.out = Recorded()
        self.seen = 0
        self.index = -1
        self.type = self.tags = scan.Keep(0)
        self.outputs: dict[int, _Output] = {}

    def want(self, where: scan.Where) -> str | scan.Sink:
        if where in ((), ("cells",)):
            return scan.DESCEND
        if len(where) < 2 or where[0] != "cells" or not isinstance(where[1], int):
            return scan.SKIP
        if where[1] != self.index:
            self.finish_cell()
            self.index, self.type, self.tags, self.outputs = where[1], scan.Keep(64), scan.Keep(4096), {}
        rest = where[2:]
        if rest in ((), ("metadata",), ("outputs",)):
            return scan.DESCEND
        if rest == ("cell_type",):
            return self.type
        if rest == ("metadata", "tags"):
            return self.tags
        if rest[0] != "outputs" or not isinstance(rest[1], int):
            return scan.SKIP
        return self._output(self.outputs.setdefault(rest[1], _Output()), rest[2:])

    def _output(self, out: _Output, rest: scan.Where) -> str | scan.Sink:
        if rest in ((), ("metadata",), ("metadata", "scrapbook"), ("data",), ("data", "application/json")):
            return scan.DESCEND
        if rest in (("data", SCRAP_MIME),):
            return scan.DESCEND
        if rest == ("output_type",):
            return out.type
        if rest == ("metadata", "scrapbook", "name"):
            return out.name
        if not self._room_for_one_more():
            return scan.SKIP
        if rest == ("data", SCRAP_MIME, "data"):
            out.scrap = scan.Keep(self.value_bytes)
            return out.scrap
        if len(rest) == 3 and rest[:2] == ("data", "application/json") and isinstance(rest[2], str):
            return out.members.setdefault(rest[2], scan.Keep(self.value_bytes))
        if rest == ("data", "text/plain"):
            out.text = DictItems(self.value_bytes, lambda k, v, cut: out.items.append((k, v, cut)))
            return scan.Strings(out.text.feed, out.text.close)
        return scan.SKIP

    def _room_for_one_more(self) -> bool:
        self.seen += 1
        if self.seen == MAX_VALUES + 1:
            self.out.notes.append(f"The run recorded more than {MAX_VALUES:,} values: the rest are left out.")
        return self.seen <= MAX_VALUES

    def finish_cell(self) -> None:
        if self.index < 0 or _decoded(self.type) != "code":
            return
        tags = _decoded(self.tags)
        if isinstance(tags, list) and RESULTS_TAG in tags:
            for out in reversed(self.outputs.values()):
                if _decoded(out.type) != "execute_result":
                    continue
                for name, kept in out.members.items():
                    self.put_kept(name, kept)
                for name, value, cut in [] if out.members else out.items:
                    self.put(name, value, BY_VALUE if cut else None)
                if out.members or out.items:
                    break  # the last execute_result that holds a dict
        for out in self.outputs.values():
            name = _decoded(out.name)
            if isinstance(name, str) and out.scrap is not None:
                self.put_kept(name, out.scrap)

    def put_kept(self, name: str, kept: scan.Keep) -> None:
        """A value kept as JSON text (an application/json member, a scrap)."""
        if not kept.cut:
            try:
                self.put(name, json.loads(kept.text))
                return
            except ValueError:
                pass
        text = kept.text
        self.put(name, scan.string_prefix(text) if text.startswith('"') else text, BY_VALUE)

    def put(self, name: str, value: Any, cut: str | None = None) -> None:
        if cut is None:
            value = _jsonable(value)
            if _size(value) > self.value_bytes:
                value, cut = _text(value), BY_VALUE
        if cut is not None:
            value = _prefix(_text(value), self.value_bytes)
        room = self.left - len(name.encode())
        if _size(value) > room:
            value, cut = _prefix(_text(value), room), BY_TOTAL
        self.left = max(room - _size(value), 0)
        self.out.values[name] = value
        self.out.cut.pop(name, None)
        if cut is not None:
            self.out.cut[name] = cut


def _decoded(kept: scan.Keep) -> Any:
    """A short field (a type, tags, a name) as its value; None when it is not there or not whole."""
    if kept.cut or not kept.parts:
        return None
    try:
        return json.loads(kept.text)
    except ValueError:
        return None


def recorded_in(f: TextIO, value_bytes: int = VALUE_BYTES, budget: int = TOTAL_BYTES) -> Recorded:
    """What the notebook read from ``f`` recorded: each value cut at ``value_bytes``, and what comes
    after ``budget`` bytes of values cut too. :class:`scan.Malformed` for what is not a notebook's JSON."""
    run = _Run(value_bytes, budget)
    scan.scan(f, run.want)
    run.finish_cell()
    return run.out


def _parsed(nb: Any, value_bytes: int, budget: int) -> Recorded:
    run = _Run(value_bytes, budget)
    scan.walk(nb, run.want)
    run.finish_cell()
    return run.out


def read_recorded(path: Path, value_bytes: int = VALUE_BYTES, budget: int = TOTAL_BYTES) -> Recorded | None:
    """What the output notebook at ``path`` recorded, read bounded; None when there is none (yet).

    The run's own code can put anything there: a FIFO or a device is not read (a note says so), and
    neither is more than MAX_NOTEBOOK_BYTES."""
    try:
        with untrusted.open_regular_file(path, name=path.name) as raw:
            size = os.fstat(raw.fileno()).st_size
            if size > MAX_NOTEBOOK_BYTES:
                return Recorded(
                    notes=[
                        f"The output notebook is {size:,} bytes, more than the {MAX_NOTEBOOK_BYTES:,} read."
                    ]
                )
            f = io.TextIOWrapper(raw, encoding="utf-8", errors="replace")
            if size <= WHOLE_BYTES:  # small: parsed at once (C), a few times its size in memory at most
                return _parsed(json.loads(f.read(WHOLE_BYTES + 1)), value_bytes, budget)
            return recorded_in(f, value_bytes, budget)
    except FileRefused as e:
        return Recorded(notes=[f"The output notebook is not read: {e.message}"])
    except OSError:
        return None
    except (ValueError, RecursionError) as e:  # scan.Malformed among them
        return Recorded(notes=[f"The output notebook could not be read: {type(e).__name__}: {e}."])


def recorded(nb: dict[str, Any], value_bytes: int = VALUE_BYTES) -> dict[str, Any]:
    """The values a notebook (as a dict) recorded."""
    return _parsed(nb, value_bytes, TOTAL_BYTES).values


def gather(paths: list[Path], value_bytes: int, total_bytes: int) -> list[Recorded]:
    """Every run's recorded values, each cut at ``value_bytes``, and each run's within its share of
    ``total_bytes`` (what an earlier run leaves of its share goes to the later ones): the answer stays
    that small however much the runs recorded, and no run's values are all crowded out."""
    found = []
    left = total_bytes
    for i, path in enumerate(paths):
        rec = read_recorded(path, value_bytes, left // (len(paths) - i)) or Recorded()
        left -= sum(_size(v) + len(k.encode()) for k, v in rec.values.items())
        by_value = [k for k, why in rec.cut.items() if why == BY_VALUE]
        by_total = [k for k, why in rec.cut.items() if why == BY_TOTAL]
        if by_value:
            rec.notes.append(
                f"Cut at {value_bytes:,} bytes (c.GpuEnvApp.sweep_result_value_bytes): {', '.join(by_value)}."
            )
        if by_total:
            rec.notes.append(
                f"Cut to this run's share of the {total_bytes:,} bytes an answer holds "
                f"(c.GpuEnvApp.sweep_results_bytes): {', '.join(by_total)}."
            )
        found.append(rec)
    return found


def value_header(name: str, parameters: Sequence[str]) -> str:
    """A recorded value's column header: its name, or ``value: alpha`` where a parameter has the name."""
    return f"value: {name}" if name in parameters else name


def as_csv(table: SweepResults) -> str:
    """The results as CSV: a row per run (numbered from 1, as the table numbers them), parameters then
    recorded values (``value: alpha`` where a value is named like a parameter), then state, duration,
    the GPU energy in kWh (and the CO2e and cost where the site set its numbers), the job's id and what
    was cut.

    Text that a spreadsheet would run as a formula (starting with ``=``, ``+``, ``-``, ``@``, a tab or a
    carriage return: OWASP's CSV-injection rule) gets a leading ``'``, in the header as in the cells;
    numbers stay numbers (-0.5 is a number, the text "-0.5" is neutralised)."""
    out = io.StringIO()
    writer = csv.writer(out)
    carbon = any(row.co2e_grams is not None for row in table.rows)
    costs = [row.cost for row in table.rows if row.cost is not None]
    priced = ["co2e_grams"] * carbon + (
        [f"cost ({costs[0].currency})" if costs[0].currency else "cost"] if costs else []
    )
    writer.writerow(
        [
            _safe(c)
            for c in [
                "run",
                *table.parameter_columns,
                *(value_header(c, table.parameter_columns) for c in table.value_columns),
                "state",
                "duration_seconds",
                "gpu_energy_kwh",
                *priced,
                "job_id",
                "note",
            ]
        ]
    )
    for row in table.rows:
        writer.writerow(
            [
                row.index + 1,  # numbered from 1, as the results table shows them
                *(_cell(row.parameters.get(c)) for c in table.parameter_columns),
                *(_cell(row.values.get(c)) for c in table.value_columns),
                row.state,
                "" if row.duration_seconds is None else row.duration_seconds,
                "" if row.energy_joules is None else round(row.energy_joules / 3.6e6, 6),
                *(["" if row.co2e_grams is None else row.co2e_grams] if carbon else []),
                *(["" if row.cost is None else row.cost.amount] if costs else []),
                row.job_id,
                _safe(row.note or ""),
            ]
        )
    return out.getvalue()


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _safe(text: str) -> str:
    return f"'{text}" if text.startswith(_FORMULA_START) else text


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    return _safe(value if isinstance(value, str) else json.dumps(value))
