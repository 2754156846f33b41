"""`schedules`, `schedules/{schedule_id}` and its actions: run now, re-arm, update the snapshot."""

from __future__ import annotations

from ..models.automation.pipelines import Pipeline
from ..models.automation.schedules import (
    MAX_EXPRESSION,
    TIMEZONE_PATTERN,
    Schedule,
    ScheduleList,
    SchedulePatch,
    SchedulePreview,
    ScheduleRequest,
)
from ..models.jobs import Job
from ..models.sweeps import JobGroup
from .base import GpuEnvHandler, Param, id_links, operation
from .jobs import JOB_LINKS, RUN_CODE

SCHEDULE_LINKS = id_links(
    "schedule_id",
    ("GetSchedule", "get_schedules_schedule_id"),
    ("UpdateSchedule", "patch_schedules_schedule_id"),
    ("RunSchedule", "post_schedules_schedule_id_run"),
    ("RearmSchedule", "post_schedules_schedule_id_rearm"),
    ("DeleteSchedule", "delete_schedules_schedule_id"),
)


# What no JSON Schema pattern can say about an expression (a 400 says which part is wrong).
_EXPRESSION_MEANING = (
    "what the schedule expression means: each cron field within its range (minute 0-59, ...), an ISO "
    "date that exists, times within the years 0001 to 9999, a period of at least "
    "`c.GpuEnvApp.schedule_minimum_period`, a time zone the server knows."
)


class SchedulesHandler(GpuEnvHandler):
    @operation("Schedules, newest first", response=ScheduleList)
    async def get(self) -> ScheduleList:
        return await self.services.schedules.list()

    @operation(
        "Run a notebook on a schedule",
        request=ScheduleRequest,
        response=Schedule,
        status=201,
        errors=(404, 409, 413),
        permissions=RUN_CODE,
        links=SCHEDULE_LINKS,
        description="Takes what `POST jobs` takes for one run, and when to run it. The notebook is "
        "snapshotted now: the schedule runs what was scheduled, not what is edited later (`POST "
        "schedules/{id}/snapshot` takes a new snapshot). Where the backend has a scheduler (SLURM: a job "
        "waiting for the next due time, which submits its successor when it starts; Kubernetes: a "
        "CronJob), the schedule lives there and goes on with no Jupyter server; on the local backend this "
        "server runs it while it runs (`keeper` says which). A bad expression (one whose times leave the "
        "years 0001 to 9999 too: a start, a period or a repeat count too large), a period under "
        "`c.GpuEnvApp.schedule_minimum_period` or an unknown time zone is a 400 saying what is wrong; "
        "the rest is checked as `POST jobs` checks it.",
        beyond_schema=_EXPRESSION_MEANING,
    )
    async def post(self, body: ScheduleRequest) -> Schedule:
        made = await self.services.schedules.create(body)
        self.set_header("Location", self.api_url("schedules", made.id))
        return made


class SchedulePreviewHandler(GpuEnvHandler):
    @operation(
        "What a schedule expression means",
        response=SchedulePreview,
        query=(
            Param(
                "schedule",
                {"type": "string", "minLength": 1, "maxLength": MAX_EXPRESSION},
                "A cron line or an ISO-8601 repeating interval, as `POST schedules` takes it.",
                required=True,
            ),
            Param(
                "timezone", {"type": "string", "pattern": TIMEZONE_PATTERN}, "An IANA time zone; default UTC."
            ),
        ),
        errors=(400,),
        description="Checked as `POST schedules` checks it (a 400 says what is wrong); nothing is made.",
        beyond_schema=_EXPRESSION_MEANING,
    )
    async def get(self) -> SchedulePreview:
        return self.services.schedules.preview(self.query["schedule"], self.query["timezone"] or "UTC")


class ScheduleHandler(GpuEnvHandler):
    @operation("One schedule, with its last runs", response=Schedule, errors=(404,))
    async def get(self, schedule_id: str) -> Schedule:
        return await self.services.schedules.get(schedule_id)

    @operation(
        "Change, pause or resume a schedule",
        request=SchedulePatch,
        response=Schedule,
        errors=(404, 409),
        permissions=RUN_CODE,
        description="What is left out stays as it was. The batch system's waiting job (or CronJob) is "
        "replaced in the same step: never two for one schedule; pausing removes it, resuming sets it up "
        "for the next due time (the times passed meanwhile are not run). A 409 `busy` when the schedule's "
        "lock stays held for a few seconds (its batch job starting a run, another change of it): nothing is "
        "changed; try again.",
        beyond_schema=_EXPRESSION_MEANING,
    )
    async def patch(self, schedule_id: str, body: SchedulePatch) -> Schedule:
        return await self.services.schedules.update(schedule_id, body)

    @operation(
        "Delete a schedule",
        status=204,
        errors=(404, 409),
        description="Stops it where it is kept (the waiting SLURM job cancelled, the CronJob deleted); "
        "its runs stay, as jobs. A 409 `busy` when the schedule's "
        "lock stays held for a few seconds (its batch job starting a run, another change of it): nothing is "
        "changed; try again.",
    )
    async def delete(self, schedule_id: str) -> None:
        await self.services.schedules.delete(schedule_id)


class ScheduleRunHandler(GpuEnvHandler):
    @operation(
        "Run a schedule's notebook now",
        response=Job,
        also=((201, JobGroup), (201, Pipeline)),
        status=201,
        errors=(404, 409),
        permissions=RUN_CODE,
        links=JOB_LINKS,
        description="One run at once from the schedule's snapshot, outside its times (overlap does not "
        "apply); a scheduled sweep answers the sweep (a JobGroup), a scheduled pipeline the pipeline.",
    )
    async def post(self, schedule_id: str) -> Job | JobGroup | Pipeline:
        made = await self.services.schedules.run_now(schedule_id)
        where = (
            ("jobs", made.id)
            if isinstance(made, Job)
            else ("pipelines", made.id)
            if isinstance(made, Pipeline)
            else ("sweeps", made.id)
        )
        self.set_header("Location", self.api_url(*where))
        return made


class ScheduleRearmHandler(GpuEnvHandler):
    @operation(
        "Set a schedule up again in its batch system",
        response=Schedule,
        errors=(404, 409),
        permissions=RUN_CODE,
        description="For a schedule whose waiting job vanished (`keeper.present` false: cancelled by an "
        "administrator, lost in a restart). 409 for a paused schedule or one this server runs.",
    )
    async def post(self, schedule_id: str) -> Schedule:
        return await self.services.schedules.rearm(schedule_id)


class ScheduleSnapshotHandler(GpuEnvHandler):
    @operation(
        "Take a new snapshot of a schedule's notebook",
        response=Schedule,
        errors=(404, 409),
        permissions=RUN_CODE,
        description="The notebook as saved now becomes what the next runs run; runs already started keep theirs.",
    )
    async def post(self, schedule_id: str) -> Schedule:
        return await self.services.schedules.update_snapshot(schedule_id)
