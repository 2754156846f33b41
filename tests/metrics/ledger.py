"""Job records with known usage, shared by the metrics tests: what each series must say of them."""

from __future__ import annotations

from helpers import job_record

from jupyter_gpu_env.jobs.store import JobStore
from jupyter_gpu_env.models.resources import JobResources

H = 3600.0
T0 = 1_700_000_000.0


def ledger_jobs():
    """A: local, 1 GPU for 1 h at 50 %, idle a quarter of its samples, waited 10 s; B: local, running, no
    GPU, waited 600 s; C: slurm, 2 GPUs for 30 min, not measured, waited 4000 s; D: local, queued; E:
    local, 1 GPU for 6 min, waited 45 s, then deleted."""
    gpu_a = {
        "available": True,
        "samples": 720,
        "mean_utilization_percent": 50.0,
        "idle_fraction": 0.25,
        "gpu_hours_allocated": 1.0,
        "gpu_hours_used": 0.5,
    }
    return [
        job_record("a", state="succeeded", created_at=T0, started_at=T0 + 10, finished_at=T0 + 10 + H,
                   resources=JobResources(gpus=1), gpu=gpu_a),
        job_record("b", state="running", created_at=T0 + 100, started_at=T0 + 700),
        job_record("c", backend="slurm", state="failed", created_at=T0, started_at=T0 + 4000,
                   finished_at=T0 + 4000 + H / 2, resources=JobResources(gpus=2)),
        job_record("d", state="queued", created_at=T0 + 200),
        job_record("e", state="succeeded", created_at=T0, started_at=T0 + 45, finished_at=T0 + 45 + 360,
                   resources=JobResources(gpus=1)),
    ]  # fmt: skip


async def energy(store: JobStore, job_id: str, joules: float) -> None:
    """The runner's energy in the record's GPU summary, as the energy work writes it
    (`gpu.energy_joules`); set in the row itself, whatever this version's model says of it."""

    def run() -> None:
        store.db.conn().execute(
            "UPDATE jobs SET data = json_set(data, '$.gpu.energy_joules', ?) WHERE id = ?", (joules, job_id)
        )

    await store.db.call(run)


def running_on_a_gpu(now: float):
    """G: slurm, running on 1 GPU since a minute ago, after a minute queued: its GPU-seconds grow (a test
    server has no SLURM backend configured, so no poll of its own ends it)."""
    return job_record(
        "g",
        backend="slurm",
        state="running",
        created_at=now - 120,
        started_at=now - 60,
        resources=JobResources(gpus=1),
    )
