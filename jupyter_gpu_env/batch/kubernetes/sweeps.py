"""Sweeps on Kubernetes: one Indexed Job per submission of runs (:mod:`.indexed`), followed through the
runs' folders and the Job's ``failedIndexes``; a run cancelled alone has its line taken out of the runs
file (a pod not started yet then finds nothing to run) and its pod deleted.

Held by :class:`.backend.KubernetesBackend`, whose API, settings and folders it uses.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kubernetes import client

from ...atomic import write_atomic
from ...errors import InvalidRequest
from ...kube.client import ApiError
from ...models.jobs import Job
from .. import jobfiles
from ..backend import Observation, SweepSubmission
from . import indexed, status

if TYPE_CHECKING:
    from .backend import KubernetesBackend

RUNS_FILE = "runs-{first}.txt"


def _position(job: Job) -> tuple[str, int] | None:
    """``(Indexed Job name, index)`` from a run's ``backend_job_id`` (``NAME/INDEX``)."""
    name, _, index = (job.backend_job_id or "").partition("/")
    return (name, int(index)) if name and index.isdigit() else None


class IndexedJobs:
    def __init__(self, backend: KubernetesBackend) -> None:
        self.b = backend

    async def submit(self, jobs: Sequence[Job], max_concurrent: int) -> SweepSubmission:
        folders = [self.b.job_folder(j) for j in jobs]
        if self.b.check_job_folder_mounted:
            self.b._check_folder_shared(folders[0].parent)
        runs_path = folders[0].parent / RUNS_FILE.format(first=jobs[0].id)
        try:
            table = indexed.runs_file(jobs, folders)
            body = indexed.indexed_job_object(jobs, runs_path, max_concurrent, self.b.settings)
        except ValueError as e:
            raise InvalidRequest(f"{e}.", reason="invalid_request") from None
        await self.b.api.run(lambda: write_atomic(runs_path, table), "write the runs file")
        name = indexed.group_job_name(jobs[0])

        def create() -> dict[str, Any]:
            batch = client.BatchV1Api(self.b._connected())
            return self.b.api.raw(
                batch.create_namespaced_job, self.b.settings.namespace, body, what="create the Job"
            )

        await self.b.api.run(create, "submit the sweep")
        queue = jobs[0].queue or self.b.settings.local_queue
        where = f"Kueue queue '{queue}'" if queue else f"namespace '{self.b.settings.namespace}'"
        return SweepSubmission(
            name,
            {
                j.id: Observation(
                    state="queued",
                    backend_job_id=f"{name}/{i}",
                    pending_reason=f"Submitted to Kubernetes as index {i} of the Indexed Job {name} ({where}); "
                    "waiting for its pod.",
                )
                for i, j in enumerate(jobs)
            },
        )

    async def cancel(self, jobs: Sequence[Job]) -> None:
        """Delete each Indexed Job all of whose active runs are cancelled; else cancel runs one by one."""
        self.b._cancelled.update(j.id for j in jobs)
        names = {p[0] for j in jobs if (p := _position(j))}
        for name in names:

            def delete(name: str = name) -> None:
                try:
                    self.b._delete_job(name, "delete the Indexed Job")
                except ApiError as e:
                    if e.status != 404:
                        raise

            await self.b.api.run(delete, "cancel the sweep")

    async def cancel_run(self, job: Job) -> None:
        """One run of a sweep: out of the runs file, and its pod (if it has one) deleted."""
        where = _position(job)
        if where is None:
            return
        name, index = where
        folder = self.b.job_folder(job)

        def stop() -> None:
            for runs_path in folder.parent.glob("runs-*.txt"):
                lines = runs_path.read_text().splitlines(keepends=True)
                kept = [line for line in lines if line.split()[1:2] != [job.id]]
                if kept != lines:
                    write_atomic(runs_path, "".join(kept))
            api = client.CoreV1Api(self.b._connected())
            selector = f"batch.kubernetes.io/job-name={name},{indexed.INDEX_LABEL}={index}"
            for pod in self.b.api.items(
                "list pods", api.list_namespaced_pod, self.b.settings.namespace, label_selector=selector
            ):
                pod_name = (pod.get("metadata") or {}).get("name")
                if pod_name and str(
                    (pod.get("metadata") or {}).get("labels", {}).get(indexed.INDEX_LABEL)
                ) == str(index):
                    try:
                        self.b.api.raw(
                            api.delete_namespaced_pod,
                            pod_name,
                            self.b.settings.namespace,
                            what="delete the pod",
                        )
                    except ApiError as e:
                        if e.status != 404:
                            raise

        await self.b.api.run(stop, "cancel the run")

    def observe(self, runs: Sequence[Job], k8s_jobs: dict[Any, dict[str, Any]]) -> dict[str, Observation]:
        """Runs of sweeps, from their folders and their Indexed Job (``k8s_jobs`` by name)."""
        out: dict[str, Observation] = {}
        for job in runs:
            where = _position(job)
            folder = self.b.job_folder(job)
            written = jobfiles.read_status(folder)
            item = k8s_jobs.get(where[0]) if where else None
            if written is not None:
                out[job.id] = self.b._from_status(job, written, item)
            elif item is None:
                out[job.id] = self.b._vanished(job)
            elif where and where[1] in indexed.index_set((item.get("status") or {}).get("failedIndexes")):
                out[job.id] = Observation(
                    state="failed",
                    reason="pod_failed",
                    message=f"The pod of index {where[1]} of {where[0]} failed before the runner wrote its status; "
                    "see the job's log.",
                )
            elif (folder / jobfiles.HEARTBEAT).exists():
                out[job.id] = Observation(state="running", backend_job_id=job.backend_job_id)
            else:
                suspended = bool((item.get("spec") or {}).get("suspend"))
                out[job.id] = Observation(
                    state="queued",
                    backend_job_id=job.backend_job_id,
                    pending_reason=(
                        "Waiting for Kueue to admit the sweep."
                        if suspended and status.kueue_managed(item)
                        else f"Waiting for its pod (index {where[1] if where else '?'} of {where[0] if where else '?'})."
                    ),
                )
        return out
