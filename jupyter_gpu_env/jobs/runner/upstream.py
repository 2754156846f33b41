"""What a pipeline node's notebook receives of its parents: the parameter ``upstream``, made by the
runner when the node starts, from the parents' folders (on the node: no server needed).

job.json's ``upstream`` names, per parent, its folder and its runs (one for a job, each run of a sweep:
folder, output notebook, varied values); the runner reads what each run recorded (a ``results``-tagged
cell's dict, scrapbook's glued values) with the one reader of results, bounded as a sweep's table is.
A job parent gives ``{"folder": ..., "results": {...}}``; a sweep parent ``"results"`` as a list of its
runs' rows, ``{"parameters": {...}, "values": {...}}``, in the sweep's order.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..sweeps.results import TOTAL_BYTES, VALUE_BYTES, gather


def upstream_values(spec: Mapping[str, Any]) -> dict[str, Any]:
    """The ``upstream`` parameter from job.json's ``upstream`` (parent id -> folder, sweep, runs)."""
    out: dict[str, Any] = {}
    parents = [(k, v) for k, v in spec.items() if isinstance(v, Mapping)]
    share = TOTAL_BYTES // max(len(parents), 1)
    for parent, entry in parents:
        runs = [r for r in entry.get("runs") or [] if isinstance(r, Mapping)]
        paths = [Path(str(r.get("folder", ""))) / str(r.get("output", "")) for r in runs]
        found = gather(paths, VALUE_BYTES, share)
        if entry.get("sweep"):
            results: Any = [
                {"parameters": dict(r.get("parameters") or {}), "values": rec.values}
                for r, rec in zip(runs, found, strict=True)
            ]
        else:
            results = found[0].values if found else {}
        out[str(parent)] = {"folder": str(entry.get("folder", "")), "results": results}
    return out
