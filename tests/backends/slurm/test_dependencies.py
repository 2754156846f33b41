"""A pipeline's nodes held by the real single-node SLURM itself: ``submit_after`` / ``submit_sweep_after``
write ``--dependency`` and ``--kill-on-invalid-dep=yes``, and the observer reads what SLURM then does.

The records and folders are the JobService's own; where the pipeline service would hand a node over
after its parents, the test routes the service's next submission through ``submit_after`` (or
``submit_sweep_after``) with the parents' SLURM ids, as the pipeline service does on this backend.
"""

from __future__ import annotations

from pathlib import Path

from helpers import wait_until

from jupyter_gpu_env.backends.base import Dependency
from jupyter_gpu_env.backends.slurm import SlurmBackend
from jupyter_gpu_env.backends.slurm.script import SCRIPT
from jupyter_gpu_env.contracts import jobfiles


def held(backend: SlurmBackend) -> list[Dependency]:
    """Route the backend's next submissions through submit_after / submit_sweep_after: each one takes
    the next dependency appended to the returned list (none: an ordinary submission)."""
    after: list[Dependency] = []
    submit, submit_sweep = backend.submit, backend.submit_sweep

    async def submit_held(job):
        return await (backend.submit_after(job, after.pop(0)) if after else submit(job))

    async def submit_sweep_held(jobs, max_concurrent):
        if after:
            return await backend.submit_sweep_after(jobs, max_concurrent, after.pop(0))
        return await submit_sweep(jobs, max_concurrent)

    backend.submit = submit_held  # type: ignore[method-assign]
    backend.submit_sweep = submit_sweep_held  # type: ignore[method-assign]
    return after


def gated(slurm, name: str, gate: Path, *, fail: bool = False) -> str:
    """A notebook that runs until ``gate`` exists (so the test sees it running), then ends, failing
    when asked."""
    wait = f"import os, time\nwhile not os.path.exists({str(gate)!r}):\n    time.sleep(0.05)"
    return slurm.notebook(name, [wait, "raise RuntimeError('this step fails')" if fail else "print('done')"])


def ran(slurm, job) -> tuple[float, float]:
    """When the job's runner started and ended, as its status.json says (SLURM's times are whole seconds)."""
    status = jobfiles.read_status(slurm.root / job.job_dir)
    assert status is not None, job
    return status["started_at"], status["finished_at"]


async def squeue(slurm, *ids: str, states: str = "all") -> dict[str, tuple[str, str, str]]:
    """Each job (array tasks one by one): its state, reason and dependency (``%E``) as squeue says."""
    argv = ["squeue", "-h", "--array", f"--states={states}", f"--jobs={','.join(ids)}", "-o", "%i|%T|%r|%E"]
    res = await slurm.sh(*argv)
    rows = (line.split("|") for line in res.stdout.splitlines() if line.strip())
    return {r[0]: (r[1], r[2], r[3]) for r in rows}


async def test_a_job_after_another_waits_in_slurm_and_runs_once_it_succeeded(slurm, slurm_service, gate):
    backend = slurm.backend()
    after = held(backend)
    svc = slurm_service(backend)
    a = await svc.submit({"notebook_path": gated(slurm, "a.ipynb", gate), "backend": "slurm"})
    after.append(Dependency((a.backend_job_id,), "succeeded"))
    b = await svc.submit({"notebook_path": slurm.notebook("b.ipynb", ["print('b ran')"]), "backend": "slurm"})
    assert b.pending_reason == (
        f"Submitted to SLURM as job {b.backend_job_id}; waits for SLURM job {a.backend_job_id}: it starts "
        f"once it has succeeded (SLURM dependency afterok:{a.backend_job_id})."
    )
    text = (slurm.root / b.job_dir / SCRIPT).read_text()
    assert f"#SBATCH --dependency=afterok:{a.backend_job_id}\n#SBATCH --kill-on-invalid-dep=yes\n" in text

    await slurm.wait_for(svc, a.id, lambda j: j.state == "running", within=60)
    b = await slurm.wait_for(svc, b.id, lambda j: (j.pending_reason or "").startswith("Dependency"))
    assert b.state == "queued"
    assert b.pending_reason == "Dependency: waiting for the jobs it depends on to end (SLURM dependency)."
    shown = await squeue(slurm, a.backend_job_id, b.backend_job_id)
    assert shown[a.backend_job_id][0] == "RUNNING"
    assert shown[b.backend_job_id] == (
        "PENDING",
        "Dependency",
        f"afterok:{a.backend_job_id}(unfulfilled)",
    )

    gate.touch()
    a = await slurm.wait_for(svc, a.id, slurm.ended, within=60)
    b = await slurm.wait_for(svc, b.id, slurm.ended, within=60)
    assert (a.state, b.state) == ("succeeded", "succeeded"), (a.message, b.message)
    assert ran(slurm, b)[0] >= ran(slurm, a)[1]  # SLURM started it after A's runner had ended


async def test_a_failed_parent_gets_its_descendants_killed_by_slurm_and_observed_so(
    slurm, slurm_service, gate
):
    """A fails: B (afterok A) and C (afterok B) can never start; SLURM cancels both at once
    (--kill-on-invalid-dep), nothing stays pending, and both read cancelled, dependency_never_satisfied."""
    backend = slurm.backend()
    after = held(backend)
    svc = slurm_service(backend)
    a = await svc.submit({"notebook_path": gated(slurm, "a.ipynb", gate, fail=True), "backend": "slurm"})
    nb = slurm.notebook("next.ipynb", ["print('must not run')"])
    after.append(Dependency((a.backend_job_id,), "succeeded"))
    b = await svc.submit({"notebook_path": nb, "backend": "slurm"})
    after.append(Dependency((b.backend_job_id,), "succeeded"))
    c = await svc.submit({"notebook_path": nb, "backend": "slurm"})
    await slurm.wait_for(svc, a.id, lambda j: j.state == "running", within=60)
    gate.touch()

    a = await slurm.wait_for(svc, a.id, slurm.ended, within=60)
    assert a.state == "failed"
    for child in (b, c):
        child = await slurm.wait_for(svc, child.id, slurm.ended, within=30)
        assert (child.state, child.reason) == ("cancelled", "dependency_never_satisfied"), child.message
        assert "the jobs it depended on did not end as it needed" in child.message
        assert child.started_at is None
        assert not (slurm.root / child.output_path).exists()  # it never ran
    ids = (a.backend_job_id, b.backend_job_id, c.backend_job_id)
    assert await squeue(slurm, *ids, states="PENDING") == {}  # nothing left waiting
    shown = await squeue(slurm, *ids)
    assert shown[c.backend_job_id] == (
        "CANCELLED",
        "DependencyNeverSatisfied",
        f"afterok:{b.backend_job_id}(failed)",
    )


async def test_sweeps_as_parent_and_as_child(slurm, slurm_service, gate):
    """P, then a sweep held after P (submit_sweep_after: one array, every task waiting), then R after the
    whole sweep (afterok on the array id): R starts only once every run has succeeded."""
    backend = slurm.backend()
    after = held(backend)
    svc = slurm_service(backend)
    p = await svc.submit({"notebook_path": gated(slurm, "p.ipynb", gate), "backend": "slurm"})
    square = slurm.notebook("square.ipynb", [], parameters="alpha = 1")
    after.append(Dependency((p.backend_job_id,), "succeeded"))
    sweep = await svc.submit({"notebook_path": square, "backend": "slurm", "sweep": {"alpha": [1, 2]}})
    array = sweep.backend_job_id
    after.append(Dependency((array,), "succeeded"))
    r = await svc.submit({"notebook_path": slurm.notebook("r.ipynb", ["print('r')"]), "backend": "slurm"})
    assert f"--dependency=afterok:{array}\n" in (slurm.root / r.job_dir / SCRIPT).read_text()

    await slurm.wait_for(svc, p.id, lambda j: j.state == "running", within=60)
    shown = await squeue(slurm, p.backend_job_id, array, r.backend_job_id)
    assert shown[f"{array}_0"][2] == shown[f"{array}_1"][2] == f"afterok:{p.backend_job_id}(unfulfilled)"
    assert shown[r.backend_job_id][2] == f"afterok:{array}_*(unfulfilled)"  # every task of the array

    gate.touch()
    r = await slurm.wait_for(svc, r.id, slurm.ended, within=120)
    assert r.state == "succeeded", r.message
    runs = (await svc.list(sweep=sweep.id)).items
    assert [run.state for run in runs] == ["succeeded", "succeeded"]
    assert min(ran(slurm, run)[0] for run in runs) >= ran(slurm, p)[1]
    assert ran(slurm, r)[0] >= max(ran(slurm, run)[1] for run in runs)

    async def sweep_ended():
        await svc.refresh()
        g = await svc.sweeps.get(sweep.id)
        return g if g.state not in ("queued", "running") else None

    assert (await wait_until(sweep_ended, within=30, what="the sweep's record ending")).state == "succeeded"
