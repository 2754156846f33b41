"""A sweep's results as they leave the server: CSV that spreadsheets do not execute, values bounded, the
output notebooks read bounded."""

from __future__ import annotations

import csv
import io

from jupyter_gpu_env.batch.sweeps import results
from jupyter_gpu_env.models.sweeps import JobGroup, SweepResults, SweepRow


def _table(parameters: dict, values: dict) -> SweepResults:
    group = JobGroup(
        id="0123456789ab", name="n", backend="local", notebook_path="nb.ipynb", size=1, max_concurrent=1,
        varied=list(parameters), counts={}, state="succeeded", created_at=0.0,
    )  # fmt: skip
    row = SweepRow(
        index=0, job_id="ba9876543210", state="succeeded", duration_seconds=1.5,
        parameters=parameters, values=values, output_path="jobs/n/out.ipynb",
    )  # fmt: skip
    return SweepResults(
        group=group, parameter_columns=list(parameters), value_columns=list(values), rows=[row]
    )


def test_csv_cells_a_spreadsheet_would_execute_are_neutralised_numbers_stay_numbers():
    table = _table(
        {"formula": "=1+2", "neg": -0.5},
        {
            '=HYPERLINK("http://x")': 1,
            "plus": "+cmd",
            "minus": "-2+3",
            "at": "@SUM(A1)",
            "tab": "\tx",
            "cr": "\rx",
            "plain": "fine",
            "loss": -0.25,
            "count": -3,
            "listed": ["=x"],
        },
    )
    header, row = list(csv.reader(io.StringIO(results.as_csv(table))))
    assert header[:3] == ["run", "formula", "neg"]
    assert header[3] == '\'=HYPERLINK("http://x")'
    cells = dict(zip(header, row, strict=True))
    assert cells["formula"] == "'=1+2" and cells["neg"] == "-0.5"  # a string neutralised, a number not
    assert (cells["plus"], cells["minus"], cells["at"]) == ("'+cmd", "'-2+3", "'@SUM(A1)")
    assert (cells["tab"], cells["cr"]) == ("'\tx", "'\rx")
    assert (cells["plain"], cells["loss"], cells["count"]) == ("fine", "-0.25", "-3")
    assert cells["listed"] == '["=x"]'  # JSON of a list starts with [, which no spreadsheet runs
