"""What a run recorded, read from its output notebook: the one parser of results.

Two ways to record, neither needing a package in the user's environment beyond what they already use:

- a cell tagged ``results`` whose last expression is a dict (``{"loss": loss, "acc": acc}``): its
  ``execute_result`` holds the dict as ``text/plain`` (a Python literal) or ``application/json``;
- values glued with scrapbook (``sb.glue("loss", loss)``): outputs carrying ``metadata.scrapbook.name``
  with the value as ``application/scrapbook.scrap.json+json``.

Values that are not JSON (an array, an object's repr) are kept as their text.
"""

from __future__ import annotations

import ast
import csv
import io
import json
from pathlib import Path
from typing import Any

from ...models.sweeps import SweepResults

RESULTS_TAG = "results"
SCRAP_MIME = "application/scrapbook.scrap.json+json"
MAX_NOTEBOOK_BYTES = 64 << 20


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


def _jsonable(value: Any) -> Any:
    """As JSON has it (a tuple as a list); anything JSON cannot hold (a set, a NaN) as its text."""
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError):
        return repr(value)


def _tagged(cell: dict[str, Any]) -> dict[str, Any]:
    for out in reversed(cell.get("outputs") or []):
        if out.get("output_type") != "execute_result":
            continue
        data = out.get("data") or {}
        found = data.get("application/json")
        if not isinstance(found, dict):
            text = data.get("text/plain")
            found = _literal("".join(text) if isinstance(text, list) else str(text or ""))
        if isinstance(found, dict):
            return {str(k): _jsonable(v) for k, v in found.items()}
    return {}


def _scraps(cell: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for output in cell.get("outputs") or []:
        name = ((output.get("metadata") or {}).get("scrapbook") or {}).get("name")
        data = (output.get("data") or {}).get(SCRAP_MIME)
        if isinstance(name, str) and isinstance(data, dict) and "data" in data:
            out[name] = _jsonable(data["data"])
    return out


def recorded(nb: dict[str, Any]) -> dict[str, Any]:
    """The values a run recorded, in the order the notebook records them (a later one wins)."""
    values: dict[str, Any] = {}
    for cell in nb.get("cells") or []:
        if cell.get("cell_type") != "code":
            continue
        if RESULTS_TAG in ((cell.get("metadata") or {}).get("tags") or []):
            values.update(_tagged(cell))
        values.update(_scraps(cell))
    return values


def read_recorded(path: Path) -> dict[str, Any] | None:
    """What the output notebook at ``path`` recorded; None when there is no readable notebook."""
    try:
        if path.stat().st_size > MAX_NOTEBOOK_BYTES:
            return None
        with open(path, encoding="utf-8") as f:
            nb = json.load(f)
    except (OSError, ValueError):
        return None
    return recorded(nb) if isinstance(nb, dict) else None


def as_csv(table: SweepResults) -> str:
    """The results as CSV: a row per run, parameters then recorded values, then state and duration.

    Text that a spreadsheet would run as a formula (starting with ``=``, ``+``, ``-``, ``@``, a tab or a
    carriage return: OWASP's CSV-injection rule) gets a leading ``'``, in the header as in the cells;
    numbers stay numbers (-0.5 is a number, the text "-0.5" is neutralised)."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(
        [
            _safe(c)
            for c in [
                "run",
                *table.parameter_columns,
                *table.value_columns,
                "state",
                "duration_seconds",
                "job_id",
            ]
        ]
    )
    for row in table.rows:
        writer.writerow(
            [
                row.index,
                *(_cell(row.parameters.get(c)) for c in table.parameter_columns),
                *(_cell(row.values.get(c)) for c in table.value_columns),
                row.state,
                "" if row.duration_seconds is None else row.duration_seconds,
                row.job_id,
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
