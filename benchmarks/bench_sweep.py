"""Sweeps: a 1,000-run sweep against 1,000 single submissions on the local SLURM; results from 1,000 outputs.

Needs the single-node SLURM of scripts/slurm-local.sh (started here when it is not up, and stopped again;
root). The jobs are held (`--hold`, an extra sbatch option of the backend) so none runs on this 2-core
machine while it is measured, and cancelled at the end. For each way: the time until every run is
accepted (the service's submit returned), the controller RPCs it cost (sbatch and squeue calls, counted
at the backend's one command seam), and the time of one refresh that observes all 1,000 (ours: one
squeue for all, as for single jobs). Gathering results: a sweep's 1,000 output notebooks (written here in
the shape papermill writes, with a `results`-tagged cell and a scrapbook value) read by the results
table, against reading each with nbformat (what a notebook-by-notebook gatherer does).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import nbformat
from jupyter_client.kernelspec import KernelSpecManager

from jupyter_gpu_env import proc
from jupyter_gpu_env.backends.slurm import SlurmBackend
from jupyter_gpu_env.jobs.service import JobService
from jupyter_gpu_env.jobs.store import JobStore

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "slurm-local.sh"
RUNS = 1000


def _cluster(action: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(SCRIPT), action], capture_output=True, text=True, check=False)


def _notebook(root: Path) -> str:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    params = nbformat.v4.new_code_cell("alpha = 0.0")
    params.metadata["tags"] = ["parameters"]
    result = nbformat.v4.new_code_cell("{'loss': 1 / (1 + alpha)}")
    result.metadata["tags"] = ["results"]
    nb.cells = [params, nbformat.v4.new_code_cell("import time; time.sleep(1)"), result]
    nbformat.write(nb, root / "scan.ipynb")
    return "scan.ipynb"


class _Counting(SlurmBackend):
    """The SLURM backend, counting the commands it sends the controller."""

    def __init__(self, **kw: Any) -> None:
        super().__init__("slurm", **kw)
        self.calls: dict[str, int] = {}
        run = self.controller.run

        async def counted(argv: list[str], *, check: bool = True) -> Any:
            name = Path(argv[0]).name
            self.calls[name] = self.calls.get(name, 0) + 1
            return await run(argv, check=check)

        self.controller.run = counted  # type: ignore[method-assign]


def _service(tmp: Path, conf: str) -> tuple[JobService, _Counting]:
    backend = _Counting(slurm_conf=conf, extra_sbatch_options=["--hold"], command_timeout=120.0)
    svc = JobService(
        JobStore(tmp / "jobs.sqlite"),
        {"slurm": backend},
        tmp / "root",
        "jobs",
        kernel_names=lambda: set(KernelSpecManager().find_kernel_specs()),
        max_sweep_runs=RUNS,
    )
    return svc, backend


async def _way(conf: str, tmp: Path, sweep: bool) -> dict[str, float]:
    (tmp / "root").mkdir(parents=True)
    path = _notebook(tmp / "root")
    svc, backend = _service(tmp, conf)
    values = [round(i / RUNS, 4) for i in range(RUNS)]
    try:
        await backend._ensure_info()  # sinfo once, before the clock: both ways need it
        backend.calls.clear()
        t0 = time.perf_counter()
        if sweep:
            await svc.submit({"notebook_path": path, "backend": "slurm", "sweep": {"alpha": values}})
        else:
            for v in values:
                await svc.submit({"notebook_path": path, "backend": "slurm", "parameters": {"alpha": v}})
        accepted = time.perf_counter() - t0
        submitted = dict(backend.calls)
        backend.calls.clear()
        t0 = time.perf_counter()
        await svc.refresh()
        polled = time.perf_counter() - t0
        polls = dict(backend.calls)
        active = await svc.store.active("slurm")
        assert len(active) == RUNS, len(active)
        assert all(j.state == "queued" for j in active)
        return {
            "accepted_s": accepted,
            "sbatch": submitted.get("sbatch", 0),
            "squeue_at_submit": submitted.get("squeue", 0),
            "poll_s": polled,
            "squeue_per_poll": polls.get("squeue", 0),
            "scontrol_per_poll": polls.get("scontrol", 0),
        }
    finally:
        held = [j.backend_job_id for j in await svc.store.active("slurm") if j.backend_job_id]
        arrays = sorted({i.split("_")[0] for i in held})
        for start in range(0, len(arrays), 200):
            await proc.run(
                ["scancel", *arrays[start : start + 200]],
                env=backend.controller.command_env(),
                timeout=60,
                check=False,
            )
        await svc.stop()


def _gather(tmp: Path) -> dict[str, float]:
    """1,000 executed notebooks of a sweep, read by the results table and by nbformat one by one."""
    from jupyter_gpu_env.jobs.sweeps import results

    folder = tmp / "outputs"
    folder.mkdir()
    paths = []
    for i in range(RUNS):
        nb = nbformat.v4.new_notebook()
        params = nbformat.v4.new_code_cell(f"alpha = {i}")
        params.metadata["tags"] = ["injected-parameters"]
        work = nbformat.v4.new_code_cell("for step in range(100): print(step)")
        work.outputs = [
            nbformat.v4.new_output("stream", name="stdout", text="".join(f"{s}\n" for s in range(100)))
        ]
        res = nbformat.v4.new_code_cell("{'loss': loss, 'acc': acc}")
        res.metadata["tags"] = ["results"]
        res.outputs = [
            nbformat.v4.new_output(
                "execute_result",
                data={"text/plain": f"{{'loss': {1 / (i + 1)}, 'acc': 0.9}}"},
                execution_count=3,
            )
        ]
        glue = nbformat.v4.new_code_cell("sb.glue('epochs', 12)")
        glue.outputs = [
            nbformat.v4.new_output(
                "display_data",
                data={results.SCRAP_MIME: {"name": "epochs", "data": 12, "encoder": "json", "version": 1}},
                metadata={"scrapbook": {"name": "epochs", "data": True, "display": False}},
            )
        ]
        nb.cells = [params, work, res, glue]
        path = folder / f"run-{i}.ipynb"
        nbformat.write(nb, path)
        paths.append(path)
    t0 = time.perf_counter()
    ours = [results.read_recorded(p) for p in paths]
    ours_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    theirs = [nbformat.read(p, as_version=4) for p in paths]
    nbformat_s = time.perf_counter() - t0
    assert all(r and r.values == {"loss": 1 / (i + 1), "acc": 0.9, "epochs": 12} for i, r in enumerate(ours))
    assert len(theirs) == RUNS
    return {"ours_s": ours_s, "nbformat_s": nbformat_s, "bytes": sum(p.stat().st_size for p in paths)}


def main() -> list[str]:
    lines: list[str] = []
    was_up = _cluster("status").returncode == 0
    started = _cluster("start")
    with tempfile.TemporaryDirectory(prefix="bench-sweep-") as d:
        tmp = Path(d)
        if started.returncode != 0:
            lines.append(
                f"SLURM part skipped: the local SLURM did not start: {started.stderr.strip()[-300:]}"
            )
        else:
            conf = started.stdout.strip().splitlines()[-1]
            try:
                single = asyncio.run(_way(conf, tmp / "single", sweep=False))
                swept = asyncio.run(_way(conf, tmp / "sweep", sweep=True))
            finally:
                if not was_up:
                    _cluster("stop")
            lines.append(
                f"{'1,000 runs':<28}{'accepted s':>11}{'sbatch':>8}{'squeue':>8}{'poll s':>9}{'squeue/poll':>12}"
            )
            for label, r in (("1,000 single submissions", single), ("one sweep of 1,000 runs", swept)):
                lines.append(
                    f"{label:<28}{r['accepted_s']:>11.2f}{r['sbatch']:>8}{r['squeue_at_submit']:>8}"
                    f"{r['poll_s']:>9.3f}{r['squeue_per_poll']:>12}"
                )
            lines.append(
                f"ratio sweep/single: time until accepted {swept['accepted_s'] / single['accepted_s']:.3f}x, "
                f"sbatch calls {swept['sbatch']}/{single['sbatch']}, "
                f"poll time {swept['poll_s'] / single['poll_s']:.2f}x"
            )
        g = _gather(tmp)
        lines.append(
            f"results of 1,000 output notebooks ({g['bytes'] / 1e6:.1f} MB): ours {g['ours_s']:.2f} s, "
            f"nbformat.read each {g['nbformat_s']:.2f} s; ratio {g['ours_s'] / g['nbformat_s']:.2f}x"
        )
    return lines


if __name__ == "__main__":
    print(json.dumps(main(), indent=1))
