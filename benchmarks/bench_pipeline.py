"""Pipelines: a 100-node pipeline submitted whole on the local SLURM, against its nodes submitted one by one as they become ready.

Needs the single-node SLURM of scripts/slurm-local.sh (started here when it is not up, and stopped again;
root). Two shapes of 100 nodes: a chain (n0 -> n1 -> ... -> n99, 100 levels) and a fan-out (root -> 98
children -> a reduce after all of them, 3 levels).

Ours: one PipelineService.submit of the whole request; SLURM holds each node after its parents
(``--dependency``). Timed until it returns (every node accepted by SLURM), its controller commands
counted at the backend's one command seam (they include the one poll of its jobs with which submit
returns the pipeline as it stands); every job is held (``--hold``, an extra sbatch option) so
nothing runs on this 2-core machine, and squeue is then asked (uncounted) whether each node's dependency
on its parents' SLURM ids was recorded.

The baseline, "one by one as they become ready" (a user, or a tool without dependencies): each node is
a plain JobService.submit once its parents have ended, the driver learning that by polling as the
tracker polls (every ``job_refresh_interval``, 2 s; one poll is what JobService.refresh sends: a squeue
of the jobs and one of the partition's pending queue, for queue positions). Nothing may run here, so it is
measured in parts: the 100 plain submissions themselves (really made, held, each timed), one real poll
of 100 active jobs, and SLURM's latency per level, measured on a tiny job (``sbatch --wrap=true``: from
sbatch to squeue saying COMPLETED, polled every 20 ms). Its time until all are accepted is the sum of
the submissions plus, per level after the first, the wait until the driver's poll sees the parents ended
(ceil(latency / interval) polls). The nodes' own run times are left out of both ways. Beside it, SLURM's
own latency per level of a dependency chain of tiny jobs: what the whole-pipeline way pays per level
once its nodes do run.
"""

from __future__ import annotations

import asyncio
import json
import math
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import nbformat
from bench_sweep import _cluster, _Counting
from bench_sweep import _service as sweep_service

from jupyter_gpu_env import proc
from jupyter_gpu_env.jobs.service import JobService
from jupyter_gpu_env.pipelines.service import PipelineService

NODES = 100
LATENCY_SAMPLES = 6
CHAIN_LEVELS = 6  # the tiny dependency chain that gives SLURM's own latency per level
ENDED = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL")


def _shape(name: str) -> tuple[list[dict[str, Any]], int]:
    """The nodes of a 100-node shape, and its number of levels."""
    step = {"notebook_path": "step.ipynb", "backend": "slurm"}
    if name == "chain":
        nodes = [{"id": f"n{i}", **step, "after": [f"n{i - 1}"] if i else []} for i in range(NODES)]
        return nodes, NODES
    children = [f"c{i}" for i in range(NODES - 2)]
    nodes = [
        {"id": "root", **step},
        *({"id": c, **step, "after": ["root"]} for c in children),
        {"id": "reduce", **step, "after": children},
    ]
    return nodes, 3


def _notebook(root: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    params = nbformat.v4.new_code_cell("upstream = {}")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell("print(sorted(upstream))")]
    nbformat.write(nb, root / "step.ipynb")


def _service(tmp: Path, conf: str) -> tuple[JobService, _Counting]:
    """bench_sweep's service (held jobs, counted commands) over a root holding the step notebook."""
    (tmp / "root").mkdir(parents=True)
    _notebook(tmp / "root")
    return sweep_service(tmp, conf)


async def _squeue(env: dict[str, str], ids: list[str]) -> dict[str, tuple[str, str, str]]:
    """Each job's state, reason and dependency (``%E``) as squeue says (uncounted)."""
    out: dict[str, tuple[str, str, str]] = {}
    for start in range(0, len(ids), 200):
        res = await proc.run(
            [
                "squeue",
                "-h",
                "--states=all",
                f"--jobs={','.join(ids[start : start + 200])}",
                "-o",
                "%i|%T|%r|%E",
            ],
            env=env,
            timeout=60,
        )
        for line in res.stdout.splitlines():
            if line.strip():
                sid, state, reason, dep = line.split("|", 3)
                out[sid] = (state, reason, dep)
    return out


async def _cancel(env: dict[str, str], ids: list[str]) -> None:
    for start in range(0, len(ids), 200):
        await proc.run(["scancel", *ids[start : start + 200]], env=env, timeout=60, check=False)


async def _ours(conf: str, tmp: Path, shape: str) -> dict[str, Any]:
    svc, backend = _service(tmp, conf)
    pipes = PipelineService(svc)
    nodes, _levels = _shape(shape)
    ids: list[str] = []
    try:
        await backend._ensure_info()  # sinfo once, before the clock: both ways need it
        backend.calls.clear()
        t0 = time.perf_counter()
        made = await pipes.submit({"name": f"bench-{shape}", "nodes": nodes})
        accepted = time.perf_counter() - t0
        calls = dict(backend.calls)
        jobs = {j.pipeline_node: j for j in (await svc.list(pipeline=made.id, limit=NODES)).items}
        assert len(jobs) == NODES and not any(j.waiting_for for j in jobs.values()), (
            "a node was not handed over"
        )
        sid = {node: j.backend_job_id or "" for node, j in jobs.items()}
        ids = list(sid.values())
        shown = await _squeue(backend.controller.command_env(), ids)
        for node in nodes:  # every node held by SLURM, after exactly its parents
            state, reason, dep = shown[sid[node["id"]]]
            want = sorted(f"afterok:{sid[p]}(unfulfilled)" for p in node.get("after", [])) or ["(null)"]
            assert (state, reason) == ("PENDING", "JobHeldUser"), (node["id"], state, reason)
            assert sorted(dep.split(",")) == want, (node["id"], dep, want)
        return {"accepted_s": accepted, "calls": calls, "dependencies_checked": len(nodes)}
    finally:
        await _cancel(backend.controller.command_env(), ids)
        await svc.stop()


async def _one_by_one(conf: str, tmp: Path) -> dict[str, Any]:
    """100 plain submissions, each timed; then one poll of the 100 active jobs."""
    svc, backend = _service(tmp, conf)
    ids: list[str] = []
    try:
        await backend._ensure_info()
        backend.calls.clear()
        each = []
        for _ in range(NODES):
            t0 = time.perf_counter()
            job = await svc.submit({"notebook_path": "step.ipynb", "backend": "slurm"})
            each.append(time.perf_counter() - t0)
            ids.append(job.backend_job_id or "")
        calls = dict(backend.calls)
        backend.calls.clear()
        t0 = time.perf_counter()
        await svc.refresh()
        poll_s = time.perf_counter() - t0
        return {"each_s": each, "calls": calls, "poll_s": poll_s, "poll_calls": dict(backend.calls)}
    finally:
        await _cancel(backend.controller.command_env(), ids)
        await svc.stop()


async def _ended(env: dict[str, str], sid: str) -> None:
    deadline = time.monotonic() + 60
    while (await _squeue(env, [sid])).get(sid, ("PENDING",))[0] not in ENDED:
        if time.monotonic() > deadline:
            raise TimeoutError(f"the tiny SLURM job {sid} did not end within 60 s")
        await asyncio.sleep(0.02)


async def _latency(conf: str) -> dict[str, Any]:
    """SLURM's latency per level: a tiny job from sbatch to COMPLETED; and a dependency chain of them."""
    env = {**_Counting(slurm_conf=conf).controller.command_env()}
    tiny = ["sbatch", "--parsable", "--output=/dev/null", "--wrap=true"]
    singles = []
    for _ in range(LATENCY_SAMPLES):
        t0 = time.perf_counter()
        sid = (await proc.run(tiny, env=env, timeout=60)).stdout.strip()
        await _ended(env, sid)
        singles.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    prev = (await proc.run(tiny, env=env, timeout=60)).stdout.strip()
    chain = [prev]
    for _ in range(CHAIN_LEVELS - 1):
        argv = [*tiny[:-1], f"--dependency=afterok:{prev}", tiny[-1]]
        prev = (await proc.run(argv, env=env, timeout=60)).stdout.strip()
        chain.append(prev)
    for sid in chain:
        await _ended(env, sid)
    return {"single_s": statistics.median(singles), "singles": singles,
            "chain_per_level_s": (time.perf_counter() - t0) / CHAIN_LEVELS}  # fmt: skip


def _total(calls: dict[str, int]) -> int:
    return sum(calls.values())


def main() -> list[str]:
    lines: list[str] = []
    was_up = _cluster("status").returncode == 0
    started = _cluster("start")
    if started.returncode != 0:
        return [f"skipped: the local SLURM did not start: {started.stderr.strip()[-300:]}"]
    conf = started.stdout.strip().splitlines()[-1]
    try:
        with tempfile.TemporaryDirectory(prefix="bench-pipeline-") as d:
            tmp = Path(d)
            lat = asyncio.run(_latency(conf))  # first, on an idle cluster
            ours = {s: asyncio.run(_ours(conf, tmp / f"ours-{s}", s)) for s in ("chain", "fan-out")}
            base = asyncio.run(_one_by_one(conf, tmp / "one-by-one"))
    finally:
        if not was_up:
            _cluster("stop")
    interval = 2.0  # JobService's refresh_interval, c.GpuEnvApp.job_refresh_interval's default
    polls_per_level = max(1, math.ceil(lat["single_s"] / interval))
    submits = sum(base["each_s"])
    per_poll = _total(base["poll_calls"])
    lines.append(
        f"SLURM latency per level: a tiny job sbatch -> COMPLETED {lat['single_s']:.2f} s (median of "
        f"{', '.join(f'{x:.2f}' for x in lat['singles'])}); a {CHAIN_LEVELS}-level afterok chain of them "
        f"{lat['chain_per_level_s']:.2f} s per level"
    )
    lines.append(
        f"one-by-one parts: 100 plain submissions {submits:.2f} s (p50 {statistics.median(base['each_s']) * 1e3:.1f} ms), "
        f"calls {base['calls']}; one poll of 100 active jobs {base['poll_s']:.3f} s, calls {base['poll_calls']}; "
        f"the driver polls every {interval:g} s: {polls_per_level} poll(s) per level"
    )
    lines.append(
        f"{'100 nodes':<22}{'accepted s':>11}{'lower bound s':>14}{'sbatch':>8}{'squeue':>8}{'all calls':>10}"
    )
    for shape in ("chain", "fan-out"):
        _nodes, levels = _shape(shape)
        waits = levels - 1
        b_time = submits + waits * polls_per_level * interval
        b_bound = submits + waits * lat["single_s"]
        b_calls = dict(base["calls"])
        for name, n in base["poll_calls"].items():
            b_calls[name] = b_calls.get(name, 0) + n * polls_per_level * waits
        o = ours[shape]
        lines.append(
            f"{shape + ', one by one':<22}{b_time:>11.2f}{b_bound:>14.2f}{b_calls.get('sbatch', 0):>8}"
            f"{b_calls.get('squeue', 0):>8}{_total(b_calls):>10}"
        )
        lines.append(
            f"{shape + ', one pipeline':<22}{o['accepted_s']:>11.2f}{'':>14}{o['calls'].get('sbatch', 0):>8}"
            f"{o['calls'].get('squeue', 0):>8}{_total(o['calls']):>10}"
        )
        lines.append(
            f"ratio pipeline/one-by-one ({shape}, {levels} levels): time until all accepted "
            f"{o['accepted_s'] / b_time:.3f}x (against the lower bound {o['accepted_s'] / b_bound:.3f}x), "
            f"controller calls {_total(o['calls'])}/{_total(b_calls)} = {_total(o['calls']) / _total(b_calls):.2f}x; "
            f"all {o['dependencies_checked']} nodes held by SLURM after exactly their parents (squeue %E)"
        )
    lines.append(f"(one poll of all the active jobs costs {per_poll} call(s) either way)")
    return lines


if __name__ == "__main__":
    print(json.dumps(main(), indent=1))
