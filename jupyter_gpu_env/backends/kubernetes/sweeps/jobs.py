"""Sweeps on Kubernetes: one Indexed Job per submission of runs (:mod:`.indexed`), followed through the
runs' folders and the Job's ``failedIndexes``; a run cancelled alone has its line taken out of the runs
file (a pod not started yet then finds nothing to run) and its pod deleted.

Held by :class:`.backend.KubernetesBackend`; the runs are observed with the other jobs, by
:class:`.observe.KubernetesObserver`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from kubernetes import client

from ....contracts import jobfiles
from ....errors import Conflict, InvalidRequest
from ....models.jobs import Job
from ....system.atomic import write_atomic
from ...base import Observation, SweepSubmission
from ..api.client import ApiError
from ..api.namespace import Namespace, gone_already
from ..objects import label_value
from ..status import labels_of
from . import indexed

RUNS_FILE = "runs-{first}.txt"


class IndexedJobs:
    """Sweeps' Indexed Jobs in ``ns``; ``cancelled`` is the backend's record of the jobs it stopped."""

    def __init__(self, ns: Namespace, cancelled: set[str]) -> None:
        self.ns = ns
        self.cancelled = cancelled

    def build(
        self, jobs: Sequence[Job], folders: Sequence[Path], max_concurrent: int
    ) -> tuple[Path, str, client.V1Job]:
        """The runs file's path and text and the Indexed Job of ``jobs``: what :meth:`submit` writes and
        creates, and what a pipeline stages for a node's parent to create. InvalidRequest if none can be."""
        runs_path = folders[0].parent / RUNS_FILE.format(first=jobs[0].id)
        try:
            table = indexed.runs_file(jobs, folders)
            body = indexed.indexed_job_object(jobs, runs_path, max_concurrent, self.ns.settings)
        except ValueError as e:
            raise InvalidRequest(f"{e}.", reason="invalid_request") from None
        return runs_path, table, body

    async def submit(
        self, jobs: Sequence[Job], folders: Sequence[Path], max_concurrent: int
    ) -> SweepSubmission:
        """One Indexed Job for ``jobs`` (their ``folders`` complete, on the pods' volume). Its name is the
        sweep's, so a second creation (a retry, or a pipeline's parent that created it first) finds the
        sweep's own Job and takes it; a Job of that name that is not this sweep's is a Conflict."""
        runs_path, table, body = self.build(jobs, folders, max_concurrent)
        api = self.ns.api
        await api.run(lambda: write_atomic(runs_path, table), "write the runs file")
        name = indexed.sweep_job_name(jobs[0])
        group = label_value(jobs[0].group_id or jobs[0].id)

        def create() -> None:
            batch = client.BatchV1Api(self.ns.connected())
            try:
                api.one(batch.create_namespaced_job, self.ns.name, body, what="create the Job")
                return
            except ApiError as e:
                if e.status != 409:
                    raise
            existing = api.one(batch.read_namespaced_job, name, self.ns.name, what="read the existing Job")
            if labels_of(existing).get(indexed.SWEEP_LABEL) != group:
                raise Conflict(
                    f"A Kubernetes Job named '{name}' already exists in namespace '{self.ns.name}' and "
                    "is not this sweep's.",
                    reason="kubernetes_conflict",
                )

        await api.run(create, "submit the sweep")
        where = self.ns.where(jobs[0].queue)
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
        """Delete the Indexed Job of each sweep of ``jobs`` (its name from the runs' ids; a run never
        handed over, a pipeline's held node, by the name its Job would have, which a pod may have made)."""
        self.cancelled.update(j.id for j in jobs)
        names = {p[0] if (p := indexed.position(j)) else indexed.sweep_job_name(j) for j in jobs}
        for name in names:

            def delete(name: str = name) -> None:
                with gone_already():
                    self.ns.delete_job(name, "delete the Indexed Job")

            await self.ns.api.run(delete, "cancel the sweep")

    async def cancel_run(self, job: Job, folder: Path) -> None:
        """One run of a sweep (in ``folder``): out of the runs file, and its pod (if it has one) deleted."""
        where = indexed.position(job)
        if where is None:
            return
        name, index = where
        api = self.ns.api

        def stop() -> None:
            for runs_path in folder.parent.glob("runs-*.txt"):
                try:  # beside the runs' folders, where their code can reach
                    raw = jobfiles.read_bytes(runs_path, jobfiles.MAX_JSON * 16)
                except jobfiles.Damaged:
                    continue
                lines = (raw or b"").decode("utf-8", "replace").splitlines(keepends=True)
                kept = [line for line in lines if line.split()[1:2] != [job.id]]
                if kept != lines:
                    write_atomic(runs_path, "".join(kept))
            core = client.CoreV1Api(self.ns.connected())
            selector = f"batch.kubernetes.io/job-name={name},{indexed.INDEX_LABEL}={index}"
            for pod in api.items(
                "list pods", core.list_namespaced_pod, self.ns.name, label_selector=selector
            ):
                pod_name = (pod.get("metadata") or {}).get("name")
                if pod_name and str(
                    (pod.get("metadata") or {}).get("labels", {}).get(indexed.INDEX_LABEL)
                ) == str(index):
                    with gone_already():
                        api.raw(core.delete_namespaced_pod, pod_name, self.ns.name, what="delete the pod")

        await api.run(stop, "cancel the run")
