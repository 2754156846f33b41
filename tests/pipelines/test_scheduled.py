"""A schedule that starts a pipeline file at its times, run by the server's timer (driven here as the
server's loops drive it), on the real local backend."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest
from helpers import wait_until
from pipeline_notebooks import diamond

from jupyter_gpu_env.errors import Conflict, InvalidRequest
from jupyter_gpu_env.pipelines.service import PipelineService
from jupyter_gpu_env.schedules.pipelined import PIPELINE_KEPT
from jupyter_gpu_env.schedules.service import ScheduleService

FILE = "nodes:\n  prepare: prepare.ipynb\n  check: {notebook_path: check.ipynb, after: [prepare]}\n"


def _every(seconds: int) -> str:
    start = datetime.fromtimestamp(time.time() + 1, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return f"R/{start}/PT{seconds}S"


async def test_a_schedule_runs_a_pipeline_file_whole_at_its_times(batch, job_service):
    svc = job_service(max_concurrent=3)
    pipes = PipelineService(svc)
    sched = ScheduleService(svc, minimum_period=1, pipelines=pipes)
    diamond(batch.root, "work")
    (batch.root / "work" / "two.pipeline.yaml").write_text(FILE)
    with pytest.raises(InvalidRequest, match="takes parameters from its file"):
        await sched.create(
            {"pipeline_path": "work/two.pipeline.yaml", "schedule": "@daily", "parameters": {}}
        )
    (batch.root / "work" / "bad.pipeline.yaml").write_text("nodes:\n  a: {notebook_path: gone.ipynb}\n")
    with pytest.raises(Exception, match="Node 'a': There is no notebook"):
        await sched.create({"pipeline_path": "work/bad.pipeline.yaml", "schedule": "@daily"})
    made = await sched.create(
        {"pipeline_path": "work/two.pipeline.yaml", "schedule": _every(3), "name": "nightly"}
    )
    assert made.pipeline_path == "work/two.pipeline.yaml" and made.keeper.message == PIPELINE_KEPT
    assert made.keeper.kind == "server" and len(made.next_runs) == 3

    async def two_started():
        await sched.tick()
        await svc.refresh()
        await pipes.advance()
        shown = await sched.get(made.id)
        started = [r for r in shown.last_runs if r.outcome == "started" and r.state == "succeeded"]
        return shown if len(started) >= 2 else None

    shown = await wait_until(two_started, within=90, what="two scheduled pipelines succeeding")
    ids = {r.pipeline_id for r in shown.last_runs if r.outcome == "started"}
    listed = [p for p in (await pipes.list()).items if p.id in ids]
    assert len(listed) >= 2 and {p.schedule_id for p in listed} == {made.id}
    assert all(p.state == "succeeded" and p.name == "two" for p in listed if p.state != "running")
    runs = (await svc.list(schedule=made.id, limit=50)).items
    assert {j.pipeline_node for j in runs} == {
        "prepare",
        "check",
    }  # the nodes' jobs are the schedule's runs

    with pytest.raises(Conflict, match="runs a pipeline"):
        await sched.update(made.id, {"parameters": {"x": 1}})
    with pytest.raises(Conflict, match="no snapshot to take"):
        await sched.update_snapshot(made.id)
    paused = await sched.update(made.id, {"active": False})
    assert paused.next_runs == [] and paused.pipeline_path == "work/two.pipeline.yaml"
    now = await sched.run_now(made.id)
    assert now.schedule_id == made.id and [n.id for n in now.nodes] == ["prepare", "check"]
