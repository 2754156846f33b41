"""The pure parts of sweeps: the runs a request makes, the limits checked before any run is made, ranges,
labels, a sweep's state from its runs, and the values a run recorded in its output notebook."""

from __future__ import annotations

import pytest
from helpers import job_record

from jupyter_gpu_env.errors import Conflict, TooLarge
from jupyter_gpu_env.jobs.sweeps import plan, results
from jupyter_gpu_env.models.jobs import JobRequest
from jupyter_gpu_env.models.notebooks import NotebookParameter, NotebookParameters
from jupyter_gpu_env.models.sweeps import JobGroup


def _request(**kw) -> JobRequest:
    return JobRequest(notebook_path="nb.ipynb", **kw)


def test_a_sweep_is_the_product_in_the_order_given_with_the_fixed_values():
    s = plan.expand(_request(parameters={"epochs": 3}, sweep={"alpha": [1, 2], "lr": [0.1, 0.01]}), 100)
    assert s.runs == [
        {"epochs": 3, "alpha": 1, "lr": 0.1},
        {"epochs": 3, "alpha": 1, "lr": 0.01},
        {"epochs": 3, "alpha": 2, "lr": 0.1},
        {"epochs": 3, "alpha": 2, "lr": 0.01},
    ]
    assert s.varied == ["alpha", "lr"] and s.max_concurrent == 4
    runs = plan.expand(_request(sweep_runs=[{"a": 1, "b": "x"}, {"a": 2, "b": "x"}], max_concurrent=9), 10)
    assert runs.varied == ["a"] and runs.max_concurrent == 2  # never more than the runs


def test_a_swept_name_takes_its_swept_values_over_a_fixed_one():
    s = plan.expand(_request(parameters={"alpha": 9, "beta": 1}, sweep={"alpha": [1, 2]}), 10)
    assert s.runs == [{"alpha": 1, "beta": 1}, {"alpha": 2, "beta": 1}] and s.varied == ["alpha"]


def test_too_many_runs_are_refused_before_any_is_made():
    huge = _request(sweep={f"p{i}": list(range(10)) for i in range(9)})  # a billion runs
    with pytest.raises(Conflict, match="1,000,000,000 runs; at most 1,000") as e:
        plan.expand(huge, 1000)
    assert e.value.reason == "sweep_too_large"


@pytest.mark.parametrize(
    "body",
    [
        {"sweep": {"a": [1]}, "sweep_runs": [{"a": 1}]},
        {"max_concurrent": 2},
        {"sweep": {"a": []}},
        {"sweep_runs": []},
    ],
)
def test_malformed_sweeps_are_refused_by_the_model(body):
    with pytest.raises(ValueError):
        JobRequest.model_validate({"notebook_path": "nb.ipynb", **body})


def _declared() -> NotebookParameters:
    return NotebookParameters(
        cell_index=0, inspectable=True, parameters=[
            NotebookParameter(name="alpha", kind="float", default=0.1, default_text="0.1"),
            NotebookParameter(name="name", kind="str", default="x", default_text="'x'"),
        ],
    )  # fmt: skip


def test_values_are_checked_naming_the_run():
    ok = plan.expand(_request(sweep={"alpha": [0.1, 1, 2.5], "name": ["a", "b"]}), 100)
    plan.check(_declared(), ok, 1 << 16)
    bad = plan.expand(_request(sweep={"name": ["a", "b"], "alpha": [0.1, "oops"]}), 100)
    with pytest.raises(Conflict, match=r"Run 2 of the sweep \(name=a, alpha=oops\): 'alpha' must be") as e:
        plan.check(_declared(), bad, 1 << 16)
    assert e.value.reason == "parameter_type"
    big = plan.expand(_request(sweep={"name": ["a", "b" * 5000]}), 100)
    with pytest.raises(TooLarge, match="Run 2 of the sweep"):
        plan.check(_declared(), big, 1000)


def test_ranges():
    assert plan.range_values("0:1:0.25") == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert plan.range_values("1:5") == [1, 2, 3, 4, 5]
    assert plan.range_values("10:0:-3") == [10, 7, 4, 1]
    assert plan.range_values("0.1:0.3:0.1") == [0.1, 0.2, 0.3]
    assert plan.range_values("a:b") is None and plan.range_values("1,2") is None
    with pytest.raises(ValueError, match="makes no values"):
        plan.range_values("0:5:-1")
    with pytest.raises(ValueError, match="at most 100,000"):
        plan.range_values("0:1000000")


def _group(size: int) -> JobGroup:
    return JobGroup(
        id="g", name="n", backend="local", notebook_path="nb.ipynb", size=size, max_concurrent=1, varied=[],
        counts={}, state="queued", created_at=0.0,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("counts", "state"),
    [
        ({"queued": 3}, "queued"),
        ({"queued": 2, "running": 1}, "running"),
        ({"queued": 2, "succeeded": 1}, "running"),
        ({"succeeded": 3}, "succeeded"),
        # one run cancelled among runs that succeeded: the sweep succeeded, its counts tell the rest
        ({"succeeded": 2, "cancelled": 1}, "succeeded"),
        ({"cancelled": 3}, "cancelled"),
        ({"succeeded": 1, "cancelled": 1, "failed": 1}, "failed"),
    ],
)
def test_a_sweeps_state_from_its_runs(counts, state):
    g = plan.summarized(_group(3), counts, 42.0)
    assert g.state == state
    assert g.counts["queued"] == counts.get("queued", 0) and sum(g.counts.values()) == 3
    assert g.finished_at == (None if state in ("queued", "running") else 42.0)


def test_a_sweep_cancelled_as_a_whole_is_cancelled_whatever_succeeded_before():
    cancelled = _group(3).model_copy(update={"cancelled_at": 10.0})
    assert plan.summarized(cancelled, {"succeeded": 2, "cancelled": 1}, 42.0).state == "cancelled"
    assert plan.summarized(cancelled, {"succeeded": 2, "failed": 1}, 42.0).state == "failed"


def _cell(tags, outputs):
    return {"cell_type": "code", "metadata": {"tags": tags}, "outputs": outputs, "source": ""}


def test_recorded_values_from_a_results_cell_and_scrapbook():
    nb = {
        "cells": [
            _cell([], [{"output_type": "stream", "text": "hello"}]),
            _cell(["results"], [{"output_type": "execute_result", "data": {"text/plain": "{'loss': 0.25, 'acc': 0.9, 'shape': (2, 3)}"}}]),
            _cell([], [{"output_type": "display_data", "metadata": {"scrapbook": {"name": "epochs"}},
                        "data": {results.SCRAP_MIME: {"name": "epochs", "data": 12}}}]),
            _cell(["results"], [{"output_type": "execute_result", "data": {"application/json": {"acc": 0.95}}}]),
            _cell(["results"], [{"output_type": "execute_result", "data": {"text/plain": "array([1, 2])"}}]),
        ]
    }  # fmt: skip
    assert results.recorded(nb) == {"loss": 0.25, "acc": 0.95, "shape": [2, 3], "epochs": 12}


def test_output_notebooks_are_named_after_the_job_and_its_parameters():
    from jupyter_gpu_env.jobs.submission import output_name

    assert output_name("train", {"alpha": 0.1, "lr": 0.01}) == "train-alpha-0.1-lr-0.01.ipynb"
    assert output_name("train [alpha=2]", {"alpha": 2, "fixed": "x"}) == "train-alpha-2.ipynb"
    assert output_name("report", {}) == "report.ipynb"
    assert output_name("input", {}) == "input-output.ipynb"  # never the snapshot's own name


def test_a_runs_name_fits_a_jobs_name_and_is_renewed_when_sent_again():
    """A run is named after its sweep and its values; a sweep named at the limit shortens its own part,
    so that the run, sent again, is a request the server accepts (found by the conformance test)."""
    from jupyter_gpu_env.jobs.submission import request_of
    from jupyter_gpu_env.models.jobs import MAX_NAME

    assert plan.run_name("train", {"alpha": 2, "lr": 0.1}, ["alpha"]) == "train [alpha=2]"
    long = "n" * MAX_NAME
    name = plan.run_name(long, {"alpha": 2}, ["alpha"])
    assert len(name) == MAX_NAME and name.endswith("n… [alpha=2]")

    group = JobGroup(
        id="0123456789ab", name=long, backend="local", notebook_path="nb.ipynb", size=2, max_concurrent=1,
        varied=["alpha"], counts={}, state="succeeded", created_at=0.0,
    )  # fmt: skip
    run = job_record(
        "ba9876543210",
        "jobs/x",
        name=name,
        state="failed",
        parameters={"alpha": 2, "fixed": 1},
        group_id=group.id,
    )
    again = request_of(run, None, group)
    assert again.name == name and again.parameters == {"alpha": 2, "fixed": 1}
    changed = request_of(run, {"alpha": 12345}, group)
    assert len(changed.name) <= MAX_NAME and changed.name.endswith("n… [alpha=12345]")
    # A run whose sweep record is gone keeps its own name.
    assert request_of(run, {"alpha": 3}).name == name


def test_a_job_sent_again_keeps_its_priority_unless_the_rerun_changes_it():
    from jupyter_gpu_env.jobs.submission import request_of
    from jupyter_gpu_env.models.jobs import RerunRequest

    run = job_record("ba9876543210", "jobs/x", name="train", state="failed", priority="opportunistic")
    assert request_of(run).priority == "opportunistic"
    changes = RerunRequest.model_validate({"priority": "normal"}).changes()
    assert request_of(run, None, None, changes).priority == "normal"
