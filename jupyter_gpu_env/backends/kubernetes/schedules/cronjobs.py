"""Schedules' CronJobs in one namespace: armed (made, or changed in place), disarmed (deleted) and read
back with one list call. Held by :class:`..backend.KubernetesBackend`; its client calls run in the API's
worker thread, and the API's refusals (403, 422, ...) come back as the project's errors with its message.

- Arming a schedule that has a CronJob changes that one object (a JSON merge patch that makes it what
  the builder makes now): a changed schedule is never two CronJobs. A paused schedule keeps its CronJob
  with ``suspend: true``.
- Disarming deletes the CronJob with ``propagationPolicy: Orphan``: no Job starts any more, and a run
  already started goes on to its end (Background or Foreground would have the garbage collector delete
  its Job and kill its pod); the orphaned Job is removed ``ttlSecondsAfterFinished`` after it ends.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kubernetes import client

from ....contracts import jobfiles
from ....contracts.schedules import folder as files
from ....contracts.schedules.plan import Armed, SchedulePlan
from ....errors import Conflict, InvalidRequest
from .. import objects, status
from ..api.client import ApiError
from ..api.kueue import KueueReader
from ..api.namespace import Namespace, gone_already
from .cronjob import (
    SCHEDULE_LABEL,
    CronRequired,
    cronjob_name,
    cronjob_object,
    replacing_patch,
    schedule_selector,
)

MERGE_PATCH = "application/merge-patch+json"


class CronJobs:
    """The CronJobs of this user's schedules in ``ns``; ``kueue`` tells whether the cluster has Kueue."""

    def __init__(self, ns: Namespace, kueue: KueueReader) -> None:
        self.ns = ns
        self.kueue = kueue

    async def arm(self, plan: SchedulePlan) -> Armed:
        if plan.sweep_size:
            raise Conflict(
                "A CronJob starts one run at each due time; scheduled sweeps run on SLURM and the local "
                "backend. Schedule one run here, or send the sweep as a job.",
                reason="sweep_not_schedulable",
            )
        try:
            body = cronjob_object(plan, self.ns.settings)
        except CronRequired as e:
            raise Conflict(str(e), reason="cron_required") from None
        except ValueError as e:
            raise InvalidRequest(f"{e}.", reason="invalid_request") from None
        reply: dict[str, Any] = await self.ns.api.run(lambda: self._put(plan, body), "arm the schedule")
        return self._armed(plan, reply)

    def _put(self, plan: SchedulePlan, body: client.V1CronJob) -> dict[str, Any]:
        """Create the CronJob, or make the one there what ``body`` says. Blocks."""
        api = self.ns.api
        batch = client.BatchV1Api(self.ns.connected())
        ns, name = self.ns.name, cronjob_name(plan)
        assert body.metadata is not None and body.spec is not None  # cronjob_object builds them
        body.metadata.namespace = ns  # settled by connected() when the options named none
        template = body.spec.job_template.metadata
        queue = (template.labels or {}).get(objects.QUEUE_LABEL) if template is not None else None
        if queue and self.kueue.version() is None:
            raise Conflict(
                f"The schedule's runs go to the Kueue queue '{queue}', but this cluster serves no Kueue API: "
                "its CronJob's Jobs would wait suspended for ever. Choose no queue, or install Kueue.",
                reason="kueue_missing",
            )
        try:
            return api.one(batch.create_namespaced_cron_job, ns, body, what="create the CronJob")
        except ApiError as e:
            if e.status != 409:
                raise
        existing = api.one(batch.read_namespaced_cron_job, name, ns, what="read the existing CronJob")
        if status.labels_of(existing).get(SCHEDULE_LABEL) != objects.label_value(plan.id):
            raise Conflict(
                f"A CronJob named '{name}' already exists in namespace '{ns}' and is not this schedule's.",
                reason="kubernetes_conflict",
            )
        desired = objects.as_dict(body)
        meta = existing.get("metadata") or {}
        patch: dict[str, Any] = {
            "metadata": {
                "labels": replacing_patch(meta.get("labels") or {}, desired["metadata"].get("labels") or {}),
                "annotations": replacing_patch(
                    meta.get("annotations") or {}, desired["metadata"].get("annotations") or {}
                ),
            },
            "spec": replacing_patch(existing.get("spec") or {}, desired["spec"]),
        }
        if meta.get("resourceVersion"):  # changed by someone else meanwhile: 409, not a silent overwrite
            patch["metadata"]["resourceVersion"] = meta["resourceVersion"]
        return api.one(
            batch.patch_namespaced_cron_job,
            name,
            ns,
            patch,
            _content_type=MERGE_PATCH,
            what="change the CronJob",
        )

    async def disarm(self, plan: SchedulePlan) -> None:
        def delete() -> None:
            with gone_already():
                self.ns.api.raw(
                    client.BatchV1Api(self.ns.connected()).delete_namespaced_cron_job,
                    cronjob_name(plan),
                    self.ns.name,
                    propagation_policy="Orphan",
                    what="delete the CronJob",
                )

        await self.ns.api.run(delete, "disarm the schedule")

    async def armed(self, plans: Sequence[SchedulePlan]) -> dict[str, Armed]:
        """Each plan's CronJob, from one list call (labels checked here as well as on the server)."""
        if not plans:
            return {}

        def listed() -> list[dict[str, Any]]:
            batch = client.BatchV1Api(self.ns.connected())
            return self.ns.api.items(
                "list CronJobs",
                batch.list_namespaced_cron_job,
                self.ns.name,
                label_selector=schedule_selector(self.ns.settings),
            )

        items, unmade = await self.ns.api.run(
            lambda: (listed(), self._without_run(plans)), "read the schedules' CronJobs"
        )
        mine = objects.label_value(self.ns.settings.user)
        by_schedule = {
            labels.get(SCHEDULE_LABEL): item
            for item in items
            if (labels := status.labels_of(item)).get(objects.MANAGED_BY_KEY) == objects.MANAGED_BY
            and labels.get(objects.USER_LABEL) == mine
        }
        out: dict[str, Armed] = {}
        for plan in plans:
            item = by_schedule.get(objects.label_value(plan.id))
            if item is not None:
                armed = self._armed(plan, item)
                if plan.id in unmade:
                    armed = Armed(armed.handle, armed.present, f"{armed.message} {unmade[plan.id]}")
                out[plan.id] = armed
            elif not plan.cron:
                out[plan.id] = Armed(
                    None,
                    False,
                    "The Kubernetes backend keeps cron schedules only; write this one as a cron line.",
                )
            else:
                out[plan.id] = Armed(
                    None,
                    False,
                    f"Its CronJob {cronjob_name(plan)} is gone from namespace '{self.ns.name}' "
                    "(deleted from outside?): no run starts until it is armed again.",
                )
        return out

    def _without_run(self, plans: Sequence[SchedulePlan]) -> dict[str, str]:
        """For each schedule whose newest ended Job made no run (no run's record names it), in words: the
        CronJob started it, and its pod ended before the tick recorded a run. Blocks (lists and reads)."""
        batch = client.BatchV1Api(self.ns.connected())
        jobs = self.ns.api.items(
            "list the schedules' Jobs",
            batch.list_namespaced_job,
            self.ns.name,
            label_selector=schedule_selector(self.ns.settings),
        )
        newest: dict[str, dict[str, Any]] = {}
        mine = objects.label_value(self.ns.settings.user)
        for item in jobs:
            labels = status.labels_of(item)
            if (
                labels.get(objects.MANAGED_BY_KEY) != objects.MANAGED_BY
                or labels.get(objects.USER_LABEL) != mine
            ):
                continue
            key = labels.get(SCHEDULE_LABEL) or ""
            made = str((item.get("metadata") or {}).get("creationTimestamp") or "")
            if made >= str(((newest.get(key) or {}).get("metadata") or {}).get("creationTimestamp") or ""):
                newest[key] = item
        out: dict[str, str] = {}
        for plan in plans:
            started = newest.get(objects.label_value(plan.id))
            ended = status.job_observation(started) if started is not None else None
            if started is None or ended is None:
                continue
            name = str((started.get("metadata") or {}).get("name"))
            if name in _recorded_jobs(plan.folder):
                continue
            how = (
                f"its pod failed ({ended.message})"
                if ended.state == "failed"
                else "its pod found the schedule paused, or could not see its folder"
            )
            out[plan.id] = (
                f"Its Job {name} ended without making a run: {how}. See the pod's log "
                f"(kubectl logs -n {self.ns.name} job/{name})."
            )
        return out

    def _armed(self, plan: SchedulePlan, item: dict[str, Any]) -> Armed:
        """How the CronJob ``item`` holds ``plan``, in words."""
        name = (item.get("metadata") or {}).get("name") or cronjob_name(plan)
        spec = item.get("spec") or {}
        where = f"the CronJob {name} in namespace '{self.ns.name}'"
        zone = spec.get("timeZone") or "the cluster's zone"
        if spec.get("suspend"):
            message = f"Paused: {where} is suspended; no run starts until it is resumed."
        else:
            message = (
                f"Kept on the cluster by {where} ('{spec.get('schedule')}', {zone}): it runs on the "
                "cluster's clock, with no Jupyter server needed."
            )
        last = (item.get("status") or {}).get("lastScheduleTime")
        if last:
            message += f" Last started a run at {last}."
        if spec.get("schedule") != plan.cron or bool(spec.get("suspend")) == (
            plan.active and plan.next_due is not None
        ):
            message += " It differs from the schedule as saved: arm it again."
        return Armed(name, True, message)


def _recorded_jobs(folder: Path, look_back: int = 20) -> set[str]:
    """The Jobs that the schedule's newest runs were made in, by their records (made by the tick)."""
    out = set()
    for name in files.run_names(folder)[-look_back:]:
        try:
            record = files.read_record(folder / files.RUNS / name)
        except jobfiles.Damaged:
            continue
        if record is not None and record.backend_job_id:
            out.add(record.backend_job_id)
    return out
