"""The backend contract's defaults: what a backend that implements only the four required methods does."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from helpers import job_record

from jupyter_gpu_env.backends.base import Backend, Dependency, Observation
from jupyter_gpu_env.backends.local import LocalBackend
from jupyter_gpu_env.errors import Conflict
from jupyter_gpu_env.models.backends import BackendInfo
from jupyter_gpu_env.models.jobs import Job


class Minimal(Backend):
    kind = "minimal"

    def __init__(self) -> None:
        super().__init__()
        self.submitted: list[str] = []

    def info(self) -> BackendInfo:
        return BackendInfo(name=self.name, kind=self.kind)

    async def submit(self, job: Job) -> Observation:
        self.submitted.append(job.id)
        return Observation(state="queued", backend_job_id=f"m-{job.id}")

    async def poll(self, jobs: Sequence[Job]) -> dict[str, Observation]:
        return {}

    async def cancel(self, job: Job) -> None:
        return None


def _job(job_id: str) -> Job:
    return job_record(job_id, backend="minimal")


@pytest.mark.parametrize("backend", [Minimal(), LocalBackend()], ids=["minimal", "local"])
async def test_a_backend_that_cannot_hold_a_job_says_so_and_hands_nothing_over(backend):
    """A pipeline holds such a backend's jobs itself and hands each over when its parents end."""
    assert backend.holds_dependencies is False
    with pytest.raises(Conflict) as refused:
        await backend.submit_after(_job("b2"), Dependency(("a1",)))
    assert refused.value.reason == "dependencies_unsupported"
    with pytest.raises(Conflict) as refused:
        await backend.submit_sweep_after([_job("r0")], 1, Dependency(("a1",), "always"))
    assert refused.value.reason == "dependencies_unsupported"
    await backend.stage([_job("b2")])  # nothing to store: the server starts it later
    assert getattr(backend, "submitted", []) == []  # nothing was handed over


async def test_a_sweep_is_submitted_run_by_run_by_default():
    backend = Minimal()
    made = await backend.submit_sweep([_job("r0"), _job("r1")], max_concurrent=1)
    assert made.backend_job_id is None and set(made.runs) == {"r0", "r1"}
    assert backend.submitted == ["r0", "r1"]
