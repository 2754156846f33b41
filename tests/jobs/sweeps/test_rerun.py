"""A run sent again with changes (real local backend, real papermill): from its snapshot, not the file as it
is now; into its sweep, numbered after its runs and in its results and CSV; and a sweep that had one run
cancelled among runs that succeeded is not a cancelled sweep."""

from __future__ import annotations

import csv
import io

import pytest
from helpers import ended, wait_for_job, wait_for_sweep, write_notebook

from jupyter_gpu_env.errors import Conflict
from jupyter_gpu_env.jobs.sweeps.results import as_csv
from jupyter_gpu_env.models.jobs import RerunRequest


async def test_a_sweeps_run_sent_again_is_a_new_run_of_that_sweep_from_its_snapshot(batch, job_service):
    nb = write_notebook(batch.root, "sq.ipynb", [], parameters="alpha = 1", results="{'square': alpha ** 2}")
    svc = job_service(max_concurrent=2)
    group = await svc.submit({"notebook_path": nb, "sweep": {"alpha": [2, 3]}})
    group = await wait_for_sweep(svc, group.id)
    first, second = (await svc.list(sweep=group.id)).items
    # the file changes after the sweep was sent: the run sent again is the snapshot's
    write_notebook(batch.root, "sq.ipynb", [], parameters="beta = 1", results="{'cube': beta ** 3}")
    declared = await svc.snapshot_parameters(second.id)
    assert [p.name for p in declared.parameters] == ["alpha"]

    body = RerunRequest.model_validate({"parameters": {"alpha": 5}, "resources": {"cpus": 1}})
    again = await svc.rerun(second.id, body.parameters, body.changes())
    assert (again.group_id, again.group_index) == (group.id, 2)  # after the sweep's runs
    assert again.parameters == {"alpha": 5} and again.resources.cpus == 1
    assert again.name == "sq [alpha=5]" and again.job_dir.startswith(f"jobs/sq-sweep-{group.id}/0002-")
    group = await wait_for_sweep(svc, group.id)
    ends = [(r.name, r.state, r.reason, r.message) for r in (await svc.list(sweep=group.id)).items]
    assert (group.state, group.size, group.counts["succeeded"]) == ("succeeded", 3, 3), ends
    assert (await svc.get(second.id)).state == "succeeded"  # the run it came from stays as it was

    table = await svc.sweeps.results(group.id)
    assert [(r.index, r.parameters, r.values) for r in table.rows] == [
        (0, {"alpha": 2}, {"square": 4}),
        (1, {"alpha": 3}, {"square": 9}),
        (2, {"alpha": 5}, {"square": 25}),
    ]
    rows = list(csv.reader(io.StringIO(as_csv(table))))
    assert [r[:3] for r in rows] == [
        ["run", "alpha", "square"],
        ["1", "2", "4"],
        ["2", "3", "9"],
        ["3", "5", "25"],
    ]

    # a value the notebook does not take is refused, and nothing is added to the sweep
    with pytest.raises(Conflict):
        await svc.rerun(first.id, {"alpha": "text"})
    assert (await svc.sweeps.get(group.id)).size == 3
    assert len((await svc.list(sweep=group.id)).items) == 3


async def test_a_job_sent_again_with_changed_resources_keeps_the_rest(batch, job_service):
    nb = write_notebook(batch.root, "one.ipynb", [], parameters="alpha = 1\nlabel = 'x'")
    svc = job_service(max_concurrent=2)
    job = await svc.submit({"notebook_path": nb, "parameters": {"label": "y"}, "resources": {"cpus": 1}})
    job = await wait_for_job(svc, job.id, ended, within=120)
    body = RerunRequest.model_validate({"parameters": {"alpha": 4}, "resources": {}, "queue": None})
    again = await svc.rerun(job.id, body.parameters, body.changes())
    assert again.group_id is None and again.name == job.name and again.kernel == job.kernel
    assert again.parameters == {"label": "y", "alpha": 4}
    assert again.resources.cpus is None  # the resources are given whole: cpus left to the backend
    plain = await svc.rerun(job.id)
    assert plain.resources.cpus == 1 and plain.parameters == {"label": "y"}
    # Renamed as it is sent again, so the two rows are told apart.
    body = RerunRequest.model_validate({"parameters": {"alpha": 7}, "name": "one alpha=7"})
    named = await svc.rerun(job.id, body.parameters, body.changes())
    assert named.name == "one alpha=7" and named.parameters == {"label": "y", "alpha": 7}
    with pytest.raises(ValueError, match="name"):
        RerunRequest.model_validate({"name": "two\nlines"})
    with pytest.raises(ValueError, match="at most one of kernel, environment and image"):
        RerunRequest.model_validate({"kernel": "python3", "environment": "base"})


async def test_one_run_cancelled_among_runs_that_succeeded_leaves_the_sweep_succeeded(batch, job_service):
    nb = write_notebook(
        batch.root, "nine.ipynb", ["import time; time.sleep(60 if alpha == 2 else 0)"], parameters="alpha = 1"
    )
    svc = job_service(max_concurrent=3)
    group = await svc.submit({"notebook_path": nb, "sweep": {"alpha": [1, 2, 3]}})
    slow = next(r for r in (await svc.list(sweep=group.id)).items if r.parameters["alpha"] == 2)
    await svc.cancel(slow.id)
    group = await wait_for_sweep(svc, group.id)
    assert (group.state, group.counts["succeeded"], group.counts["cancelled"]) == ("succeeded", 2, 1)
    assert group.cancelled_at is None

    # the sweep cancelled as a whole is a cancelled sweep, whatever had succeeded before
    long = await svc.submit({"notebook_path": nb, "sweep": {"alpha": [2, 4]}})
    cancelled = await svc.sweeps.cancel(long.id)
    assert cancelled.state == "cancelled" and cancelled.cancelled_at is not None
    # its runs retried, it is no longer cancelled
    retried = await svc.sweeps.retry_failed(long.id)
    assert retried.cancelled_at is None and retried.state != "cancelled"


def test_a_value_named_like_a_parameter_is_told_apart_in_the_csv():
    from jupyter_gpu_env.models.sweeps import JobGroup, SweepResults, SweepRow

    group = JobGroup(
        id="g", name="n", backend="local", notebook_path="n.ipynb", size=1, max_concurrent=1, varied=["alpha"],
        counts={"succeeded": 1}, state="succeeded", created_at=0,
    )  # fmt: skip
    row = SweepRow(
        index=0, job_id="j", state="succeeded", parameters={"alpha": 1}, values={"alpha": 0.5, "loss": 2},
        output_path="o.ipynb",
    )  # fmt: skip
    table = SweepResults(
        group=group, parameter_columns=["alpha"], value_columns=["alpha", "loss"], rows=[row]
    )
    rows = list(csv.reader(io.StringIO(as_csv(table))))
    assert rows[0][:4] == ["run", "alpha", "value: alpha", "loss"] and rows[1][:4] == ["1", "1", "0.5", "2"]
