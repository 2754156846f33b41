"""A sweep's results as they leave the server: CSV that spreadsheets do not execute, values bounded, the
output notebooks read bounded."""

from __future__ import annotations

import csv
import io
import json
import tracemalloc

import nbformat
import pytest

from jupyter_gpu_env.jobs.sweeps import literal, results
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


def _output_notebook(path, *cells) -> None:
    """An output notebook as papermill writes it: code cells with their outputs."""
    nb = nbformat.v4.new_notebook()
    for tags, outputs in cells:
        cell = nbformat.v4.new_code_cell("...")
        cell.metadata["tags"] = tags
        cell.outputs = outputs
        nb.cells.append(cell)
    nbformat.write(nb, path)


def _result(text: str):
    return nbformat.v4.new_output("execute_result", data={"text/plain": text}, execution_count=1)


def _glued(name: str, value):
    return nbformat.v4.new_output(
        "display_data",
        data={results.SCRAP_MIME: {"name": name, "data": value, "encoder": "json", "version": 1}},
        metadata={"scrapbook": {"name": name, "data": True, "display": False}},
    )


@pytest.mark.parametrize("whole_bytes", [0, 1 << 30], ids=["scanned", "parsed-whole"])
def test_a_large_value_is_cut_and_named_the_others_stay_whole(tmp_path, monkeypatch, whole_bytes):
    monkeypatch.setattr(results, "WHOLE_BYTES", whole_bytes)  # both ways of reading say the same
    path = tmp_path / "out.ipynb"
    big = "x" * 300_000
    _output_notebook(
        path,
        ([], [nbformat.v4.new_output("stream", name="stdout", text="y" * 500_000)]),  # passed over
        (["results"], [_result(repr({"loss": -0.5, "curve": big, "acc": 0.9, "tag": "a, b: {c}"}))]),
        ([], [_glued("epochs", 12), _glued("blob", {"a": big})]),
    )
    got = results.read_recorded(path, value_bytes=1000)
    assert got is not None
    blob = got.values.pop("blob")
    assert got.values == {"loss": -0.5, "curve": "x" * 1000, "acc": 0.9, "tag": "a, b: {c}", "epochs": 12}
    assert (
        json.loads(blob[: blob.index('"a"') + 4] + "0}") == {"a": 0} and len(blob) == 1000
    )  # its JSON's start
    assert got.cut == {"curve": "value", "blob": "value"}


def test_a_results_dict_read_in_pieces_gives_each_item_as_it_ends():
    """The dict's literal comes in pieces (as the file is read); each item is read once it ends, and
    one that the text's end cuts (a notebook written halfway) is its beginning."""
    items = []
    reader = literal.DictItems(1000, lambda k, v, c: items.append((k, v, c)))
    text = "{'loss': 0.25,\n 'label': 'a, b: {c}',\n 'shape': (2, 3), 'arr': array([1, 2]), 'curve': 'zz\\'z"
    for i in range(0, len(text), 3):
        reader.feed(text[i : i + 3])
    reader.close()
    assert items == [
        ("loss", 0.25, False),
        ("label", "a, b: {c}", False),
        ("shape", (2, 3), False),
        ("arr", "array([1, 2])", False),  # no literal: its text
        ("curve", "zz'z", True),
    ]


def test_the_answer_is_bounded_in_total_and_every_run_keeps_its_share(tmp_path):
    paths = []
    for i in range(6):
        paths.append(tmp_path / f"run-{i}.ipynb")
        _output_notebook(paths[-1], (["results"], [_result(repr({"i": i, "big": "b" * 20_000}))]))
    found = results.gather(paths, value_bytes=8_000, total_bytes=20_000)
    assert [r.values["i"] for r in found] == list(range(6))  # every run's small value is whole
    assert sum(len(k) + len(str(v)) for r in found for k, v in r.values.items()) <= 20_000
    assert all(r.cut == {"big": "total"} and "sweep_results_bytes" in r.notes[0] for r in found)
    assert all(3_000 <= len(r.values["big"]) <= 8_000 for r in found)
    roomy = results.gather(paths, value_bytes=8_000, total_bytes=1 << 20)
    assert roomy[0].cut == {"big": "value"} and "sweep_result_value_bytes" in roomy[0].notes[0]
    assert roomy[0].values["big"] == "b" * 8_000


def test_a_large_output_notebook_is_read_in_bounded_memory(tmp_path):
    path = tmp_path / "out.ipynb"
    big = "q\n" * 4_000_000  # escapes all along (28 MB of JSON in all): each is work for a reader
    _output_notebook(
        path, (["results"], [_result(repr({"loss": 1.5, "big": big, "acc": 2}))]), ([], [_glued("more", big)])
    )
    del big
    tracemalloc.start()
    try:
        got = results.read_recorded(path, value_bytes=64 << 10)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert got is not None and got.values["loss"] == 1.5 and got.values["acc"] == 2
    assert list(got.cut) == ["big", "more"] and got.values["more"].startswith("q\nq\n")
    assert peak < 8 << 20, f"reading a {path.stat().st_size / 1e6:.0f} MB notebook took {peak / 1e6:.1f} MB"


async def test_each_runs_energy_is_a_column_priced_at_the_sites_numbers(batch):
    """ "Which alpha cost least" is one sort: the results table has each run's energy, CO2e and cost."""
    from helpers import job_record

    from jupyter_gpu_env.gpu.energy import SitePrices
    from jupyter_gpu_env.models.jobs import JobGpuUsage

    site = SitePrices(carbon_intensity=100, gpu_hour_price=1.0, currency="CHF")
    svc = batch.service(prices=site)
    group = JobGroup(
        id="0123456789ab", name="scan", backend="local", notebook_path="nb.ipynb", size=3, max_concurrent=3,
        varied=["alpha"], counts={"succeeded": 3}, state="succeeded", created_at=0.0,
    )  # fmt: skip
    kwh = [1.5, 0.5, None]  # the third run measured no energy
    runs = [
        job_record(
            f"{i:012x}", group_id=group.id, group_index=i, state="succeeded", parameters={"alpha": a},
            started_at=10.0, finished_at=10.0 + 3600,
            gpu=JobGpuUsage(available=True, gpu_hours_allocated=1.0,
                            energy_joules=None if k is None else k * 3.6e6, energy_source="counter"),
        )
        for i, (a, k) in enumerate(zip((0.1, 0.5, 0.9), kwh, strict=True))
    ]  # fmt: skip
    try:
        await svc.store.sweeps.insert(group, runs)
        table = await svc.sweeps.results(group.id)
        assert [r.energy_joules for r in table.rows] == [5.4e6, 1.8e6, None]
        assert [r.co2e_grams for r in table.rows] == [150.0, 50.0, None]
        assert [r.cost.amount for r in table.rows] == [1.0, 1.0, 1.0]
        cheapest = min((r for r in table.rows if r.energy_joules), key=lambda r: r.energy_joules)
        assert cheapest.parameters == {"alpha": 0.5}
        header, *rows = list(csv.reader(io.StringIO(results.as_csv(table))))
        at = header.index("gpu_energy_kwh")
        assert header[at : at + 3] == ["gpu_energy_kwh", "co2e_grams", "cost (CHF)"]
        assert [r[at : at + 3] for r in rows] == [
            ["1.5", "150.0", "1.0"],
            ["0.5", "50.0", "1.0"],
            ["", "", "1.0"],
        ]
    finally:
        await svc.stop()


def test_a_site_without_numbers_has_no_carbon_or_cost_columns():
    header, _ = list(csv.reader(io.StringIO(results.as_csv(_table({"alpha": 1}, {})))))
    assert (
        "gpu_energy_kwh" in header
        and "co2e_grams" not in header
        and not any(h.startswith("cost") for h in header)
    )
