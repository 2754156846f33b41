"""Pipelines' test notebooks: a diamond (prepare -> a 3-run sweep and a second branch -> a report that
reads both), whose values tell whether every node received its parents' results."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helpers import write_notebook


def diamond(
    root: Path, folder: str = "", *, fail_prepare: bool = False, gate: Path | None = None, **node: Any
) -> dict[str, Any]:
    """Write the diamond's notebooks under ``root / folder``; the request that runs them (``node``'s
    fields go to every node: a backend, a queue). With ``gate``, prepare runs until that file exists."""
    at = f"{folder}/" if folder else ""
    wait = (
        f"import os, time\nwhile not os.path.exists({str(gate)!r}):\n    time.sleep(0.05)" if gate else "pass"
    )
    write_notebook(
        root, f"{at}prepare.ipynb", [wait, "assert not fail, 'prepare was told to fail'"],
        parameters="size = 3\nfail = False", results='{"rows": size * 10}',
    )  # fmt: skip
    write_notebook(
        root, f"{at}train.ipynb", ['rows = upstream["prepare"]["results"]["rows"]'],
        parameters="factor = 1\nupstream = {}", results='{"loss": rows * factor}',
    )  # fmt: skip
    write_notebook(
        root, f"{at}check.ipynb", ['checked = upstream["prepare"]["results"]["rows"] + 1'],
        parameters="upstream = {}", results='{"checked": checked}',
    )  # fmt: skip
    write_notebook(
        root,
        f"{at}report.ipynb",
        [
            'losses = sorted(r["values"]["loss"] for r in upstream["train"]["results"])',
            'factors = sorted(r["parameters"]["factor"] for r in upstream["train"]["results"])',
            'print("losses", losses, "checked", upstream["check"]["results"]["checked"])',
        ],
        parameters="upstream = {}",
        results='{"losses": losses, "factors": factors, "checked": upstream["check"]["results"]["checked"], '
        '"train_folder": upstream["train"]["folder"]}',
    )
    return {
        "name": "diamond",
        "nodes": [
            {"id": "prepare", "notebook_path": f"{at}prepare.ipynb", "parameters": {"fail": fail_prepare}, **node},
            {"id": "train", "notebook_path": f"{at}train.ipynb", "after": ["prepare"],
             "sweep": {"factor": [1, 2, 3]}, **node},
            {"id": "check", "notebook_path": f"{at}check.ipynb", "after": ["prepare"], **node},
            {"id": "report", "notebook_path": f"{at}report.ipynb", "after": ["train", "check"], **node},
        ],
    }  # fmt: skip
