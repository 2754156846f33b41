"""Sweeps on the real local backend with real papermill runs: every run its own parameters, at most
`max_concurrent` at once, results gathered side by side, failed runs retried alone, a sweep cancelled."""

from __future__ import annotations

import csv
import io
import shutil

import pytest
from helpers import wait_for_sweep, write_notebook

from jupyter_gpu_env.errors import Conflict, NotFound
from jupyter_gpu_env.jobs.sweeps.results import as_csv


def _notebook(batch, name: str, body: str) -> str:
    return write_notebook(
        batch.root, name, [body], parameters="alpha = 1\nlabel = 'x'",
        results="{'double': alpha * 2, 'label': label}",
    )  # fmt: skip


async def test_a_sweep_runs_each_value_one_at_a_time_and_gathers_results(batch, job_service):
    nb = _notebook(batch, "sweep/train.ipynb", "import time; time.sleep(0.3)")
    svc = job_service(max_concurrent=4)
    group = await svc.submit(
        {
            "notebook_path": nb,
            "parameters": {"label": "run"},
            "sweep": {"alpha": [1, 2, 3]},
            "max_concurrent": 1,
        }
    )
    assert (group.size, group.max_concurrent, group.varied, group.state) == (3, 1, ["alpha"], "running")
    runs = (await svc.list(sweep=group.id)).items
    assert [r.group_index for r in runs] == [0, 1, 2]
    assert [r.parameters for r in runs] == [{"label": "run", "alpha": a} for a in (1, 2, 3)]
    assert [r.state for r in runs] == ["running", "queued", "queued"]  # one at a time, though 4 slots
    # held by the sweep's own limit, and said so (not "waiting for a free slot" with 3 of 4 free)
    assert runs[1].pending_reason == (
        "Waiting for another run of its sweep to end: the sweep runs at most 1 at once."
    )
    assert all(r.job_dir.startswith(f"jobs/train-sweep-{group.id}/") for r in runs)
    # outputs are named after the job and its values, not all output.ipynb
    assert [r.output_path.rsplit("/", 1)[1] for r in runs] == [f"train-alpha-{a}.ipynb" for a in (1, 2, 3)]

    group = await wait_for_sweep(svc, group.id)
    assert group.state == "succeeded" and group.counts["succeeded"] == 3 and group.finished_at
    runs = (await svc.list(sweep=group.id)).items
    spans = sorted((r.started_at, r.finished_at) for r in runs)
    assert all(
        later[0] >= earlier[1] for earlier, later in zip(spans, spans[1:], strict=False)
    )  # never two at once

    table = await svc.sweeps.results(group.id)
    assert table.parameter_columns == ["alpha"] and table.value_columns == ["double", "label"]
    assert [(r.parameters, r.values, r.state) for r in table.rows] == [
        ({"alpha": a}, {"double": 2 * a, "label": "run"}, "succeeded") for a in (1, 2, 3)
    ]
    assert all(r.duration_seconds and r.duration_seconds > 0.3 for r in table.rows)
    rows = list(csv.reader(io.StringIO(as_csv(table))))
    assert rows[0][:4] == ["run", "alpha", "double", "label"] and rows[1][:5] == [
        "1",
        "1",
        "2",
        "run",
        "succeeded",
    ]


async def test_retry_runs_only_the_failed_ones_and_cancel_stops_the_rest(batch, job_service):
    nb = _notebook(
        batch,
        "sweep/flaky.ipynb",
        "import pathlib\nif alpha == 2 and not pathlib.Path('/tmp').joinpath(label).exists(): raise ValueError('bad alpha')",
    )
    svc = job_service(max_concurrent=2)
    marker = batch.root / "retry-ok"
    group = await svc.submit(
        {"notebook_path": nb, "sweep_runs": [{"alpha": 1}, {"alpha": 2, "label": str(marker)}]}
    )
    group = await wait_for_sweep(svc, group.id)
    assert group.state == "failed" and group.counts["failed"] == 1 and group.counts["succeeded"] == 1
    before = {r.group_index: r for r in (await svc.list(sweep=group.id)).items}

    # A retry the backend refuses loses nothing: the failed run stands, record and folder.
    backend = svc.backends["local"]

    async def refuse(jobs, max_concurrent):
        raise Conflict("no slot for you", reason="test_refusal")

    real, backend.submit_sweep = backend.submit_sweep, refuse
    with pytest.raises(Conflict, match="no slot for you"):
        await svc.sweeps.retry_failed(group.id)
    backend.submit_sweep = real
    assert {r.group_index: r.id for r in (await svc.list(sweep=group.id)).items} == {
        i: r.id for i, r in before.items()
    }
    assert (batch.root / before[1].job_dir / "job.json").exists()

    marker.touch()  # the cause of the failure is fixed: the retried run succeeds
    group = await svc.sweeps.retry_failed(group.id)
    group = await wait_for_sweep(svc, group.id)
    after = {r.group_index: r for r in (await svc.list(sweep=group.id)).items}
    assert group.state == "succeeded" and group.size == 2 and sum(group.counts.values()) == 2
    assert after[0].id == before[0].id  # the run that succeeded was left alone
    assert after[1].id != before[1].id and after[1].parameters == before[1].parameters
    with pytest.raises(NotFound):
        await svc.get(before[1].id)  # the failed record is replaced (its usage stays counted)
    with pytest.raises(Conflict, match="No run of sweep"):
        await svc.sweeps.retry_failed(group.id)

    slow = _notebook(batch, "sweep/slow.ipynb", "import time; time.sleep(60)")
    long = await svc.submit({"notebook_path": slow, "sweep": {"alpha": [1, 2, 3]}})
    cancelled = await svc.sweeps.cancel(long.id)
    assert cancelled.state == "cancelled" and cancelled.counts["cancelled"] == 3
    with pytest.raises(Conflict, match="already ended"):
        await svc.sweeps.cancel(long.id)


async def test_a_refused_sweep_leaves_nothing(batch, job_service):
    nb = _notebook(batch, "sweep/typed.ipynb", "pass")
    svc = job_service()
    with pytest.raises(Conflict, match=r"Run 3 of the sweep \(alpha=oops\)"):
        await svc.submit({"notebook_path": nb, "sweep": {"alpha": [1, 2, "oops"]}})
    assert (await svc.list()).total == 0 and batch.job_folders() == []


async def test_a_sweeps_cancel_leaves_the_runs_that_ended_as_they_ended(batch, job_service):
    """A run that succeeded before its record caught up is not rewritten cancelled by the sweep's cancel."""
    nb = _notebook(batch, "sweep/mixed.ipynb", "import time; time.sleep(60 if alpha == 2 else 0)")
    svc = job_service(max_concurrent=2, refresh_interval=60.0)  # not started: no round settles them
    group = await svc.submit({"notebook_path": nb, "sweep": {"alpha": [1, 2]}})
    quick, slow = (await svc.list(sweep=group.id)).items
    assert (quick.state, slow.state) == ("running", "running")
    await batch.wait_status(quick)
    assert (await svc.store.get(quick.id)).state == "running"  # the record lags the run
    cancelled = await svc.sweeps.cancel(group.id)
    assert (await svc.store.get(quick.id)).state == "succeeded"
    assert (await svc.store.get(slow.id)).state == "cancelled"
    assert cancelled.counts["succeeded"] == 1 and cancelled.counts["cancelled"] == 1


async def test_a_retry_of_runs_whose_folder_is_gone_is_refused_in_words(batch, job_service):
    nb = _notebook(batch, "sweep/fails.ipynb", "if alpha > 1: raise ValueError('bad alpha')")
    svc = job_service(max_concurrent=3)
    group = await svc.submit({"notebook_path": nb, "sweep": {"alpha": [1, 2, 3]}})
    group = await wait_for_sweep(svc, group.id)
    assert group.counts["failed"] == 2
    runs = (await svc.list(sweep=group.id)).items
    shutil.rmtree(batch.root / runs[2].job_dir)  # removed by hand, its record kept
    sweep_folder = (batch.root / runs[0].job_dir).parent
    before = sorted(p.name for p in sweep_folder.iterdir())

    with pytest.raises(Conflict, match=r"Run 3 of sweep .* \(alpha=3\) cannot be sent again") as refused:
        await svc.sweeps.retry_failed(group.id)
    assert refused.value.reason == "snapshot_missing"
    assert f"DELETE jobs/{runs[2].id}" in str(refused.value)
    # nothing changed: the same records, and no folder made for the run that could have been copied
    assert [r.id for r in (await svc.list(sweep=group.id)).items] == [r.id for r in runs]
    assert sorted(p.name for p in sweep_folder.iterdir()) == before


async def test_a_sweep_whose_runs_were_all_deleted_is_gone_not_succeeded(batch, job_service):
    nb = _notebook(batch, "sweep/gone.ipynb", "pass")
    svc = job_service(max_concurrent=2)
    group = await svc.submit({"notebook_path": nb, "sweep": {"alpha": [1, 2]}})
    group = await wait_for_sweep(svc, group.id)
    first, second = (await svc.list(sweep=group.id)).items
    sweep_folder = (batch.root / first.job_dir).parent

    await svc.delete(first.id)
    left = await svc.sweeps.get(group.id)  # one run left: the sweep is what that run is
    assert (left.state, left.counts["succeeded"], left.size) == ("succeeded", 1, 2)

    await svc.delete(second.id)
    with pytest.raises(NotFound, match="every run of it was deleted") as gone:
        await svc.sweeps.get(group.id)
    assert gone.value.reason == "group_not_found"
    listed = await svc.sweeps.list()
    assert (listed.total, listed.items) == (0, [])
    with pytest.raises(NotFound):
        await svc.list(sweep=group.id)
    assert not sweep_folder.exists()  # nothing of it is left on disk either
