"""Schedules: a notebook run again and again at times a cron line or an ISO-8601 interval gives."""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo
from typing import Annotated, Literal, cast

from pydantic import ConfigDict, Field, JsonValue, StrictBool, model_validator
from pydantic.config import JsonDict

from ..common import ApiModel, Page
from ..fields import line, patterned
from ..jobs import NOTEBOOK_PATTERN, JobRequest, JobState, ParameterName, ParameterValue
from ..resources import JobResources, Resources
from .pipelines import PIPELINE_FILE_PATTERN

MAX_EXPRESSION = 200
# An IANA zone name (Europe/Rome, America/Argentina/Buenos_Aires, UTC, Etc/GMT+5): checked against the
# zone database by the schedule's parser, this only keeps the shape sane.
TIMEZONE_PATTERN = r"^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$"

Overlap = Literal["skip", "allow"]
RunOutcome = Literal["started", "skipped", "missed"]

_EXPRESSION_HELP = (
    "When it runs: a cron line (five fields, minute hour day month weekday, as `0 6 * * *`; or "
    "`@hourly`, `@daily`, `@weekly`, `@monthly`) or an ISO-8601 repeating interval as Chronos writes it "
    "(`R/2026-12-01T06:00:00Z/PT6H`: every 6 hours from then; `R5/.../P1D`: 5 times, daily)."
)
Expression = Annotated[str, line("schedule", max_length=MAX_EXPRESSION, min_length=1)]
Timezone = Annotated[
    str, patterned(TIMEZONE_PATTERN, "timezone", hint="an IANA time zone name, such as Europe/Rome")
]


# What a scheduled pipeline takes from its file, not from the schedule.
_OptionalNotebook = (
    Annotated[
        str,
        patterned(
            NOTEBOOK_PATTERN, "notebook_path", hint="it must be a notebook (.ipynb) path", max_length=4096
        ),
    ]
    | None
)
_NODE_FIELDS = ("kernel", "environment", "image", "parameters", "resources", "queue", "sweep", "sweep_runs")


class ScheduleRequest(JobRequest):
    """`POST schedules`: what `POST jobs` takes for one run (or a sweep), and when to run it; or a
    pipeline file (`pipeline_path`) to run whole at those times."""

    # A notebook or a pipeline file, one of them (said in the document as the validator below checks it);
    # a pipeline takes its nodes' settings from its file, so none of them comes with it.
    model_config = ConfigDict(
        json_schema_extra={
            **cast(JsonDict, JobRequest.model_config.get("json_schema_extra")),
            "oneOf": [
                {"required": ["notebook_path"], "properties": {"notebook_path": {"type": "string"}}},
                {
                    "required": ["pipeline_path"],
                    "properties": {"pipeline_path": {"type": "string"}},
                    "not": {"anyOf": [{"required": [k]} for k in (*_NODE_FIELDS, "backend")]},
                },
            ],
        }
    )

    notebook_path: _OptionalNotebook = Field(  # type: ignore[assignment]  # or a pipeline file instead
        default=None, description="The notebook, relative to the server's root (or give `pipeline_path`)."
    )
    pipeline_path: (
        Annotated[
            str,
            patterned(
                PIPELINE_FILE_PATTERN,
                "pipeline_path",
                hint="it must be a .pipeline.yaml file",
                max_length=4096,
            ),
        ]
        | None
    ) = Field(
        default=None,
        description="Instead of a notebook: a `*.pipeline.yaml` run whole at each due time, as it is then "
        "(its nodes, backends and parameters come from the file). The server starts each run; its nodes "
        "then go on in their batch system.",
    )

    schedule: Expression = Field(description=_EXPRESSION_HELP, examples=["0 6 * * *"])
    timezone: Timezone = Field(
        default="UTC",
        description="The time zone the schedule's times are in (the UI sends the browser's).",
        examples=["Europe/Rome"],
    )
    overlap: Overlap = Field(
        default="skip",
        description="`skip`: a run due while the previous one still runs is not started, and is recorded "
        "as skipped; `allow`: it starts anyway.",
    )
    active: StrictBool = Field(default=True, description="False: created paused.")

    @model_validator(mode="after")
    def _notebook_or_pipeline(self) -> ScheduleRequest:
        if (self.notebook_path is None) == (self.pipeline_path is None):
            raise ValueError("give either notebook_path (a notebook) or pipeline_path (a .pipeline.yaml)")
        given = [k for k in _NODE_FIELDS if k in self.model_fields_set] + (
            ["backend"] if "backend" in self.model_fields_set else []
        )
        if self.pipeline_path is not None and given:
            raise ValueError(
                f"a scheduled pipeline takes {', '.join(given)} from its file, node by node; leave them out"
            )
        return self


class SchedulePatch(ApiModel):
    """`PATCH schedules/{id}`: what to change; what is left out stays as it was."""

    schedule: Expression | None = Field(default=None, description=_EXPRESSION_HELP)
    timezone: Timezone | None = None
    overlap: Overlap | None = None
    active: StrictBool | None = Field(default=None, description="False pauses it; true resumes it.")
    name: Annotated[str, line("name", max_length=200, min_length=1)] | None = None
    parameters: dict[ParameterName, ParameterValue] | None = Field(
        default=None, description="The parameters, whole (they replace the schedule's)."
    )
    resources: Resources | None = Field(default=None, description="The resources, whole.")


class DueTime(ApiModel):
    at: float = Field(description="Unix time.")
    utc: str = Field(description="ISO-8601 in UTC.", examples=["2026-12-01T05:00:00Z"])
    local: str = Field(
        description="ISO-8601 in the schedule's time zone, with its offset.",
        examples=["2026-12-01T06:00:00+01:00"],
    )

    @classmethod
    def of(cls, at: float, zone: tzinfo) -> DueTime:
        """``at`` in UTC and on the zone's clocks: a time a schedule computes, so a date in both (its
        parser keeps every one a day within Python's years 1 and 9999)."""
        utc = datetime.fromtimestamp(at, UTC)
        return cls(at=at, utc=utc.strftime("%Y-%m-%dT%H:%M:%SZ"), local=utc.astimezone(zone).isoformat())


class SchedulePreview(ApiModel):
    """What an expression means, before anything is made: what the send dialog shows as one types."""

    schedule: str
    timezone: str
    description: str = Field(description="The expression in words.")
    next_runs: list[DueTime] = Field(description="The next three due times (fewer when it ends sooner).")


class ScheduleRun(ApiModel):
    """One due time of a schedule and what became of it."""

    due_at: float
    outcome: RunOutcome = Field(
        description="`started` (a job, `job_id`), `skipped` (the previous run still ran; `overlap` is "
        "`skip`) or `missed` (nothing could start it then: the server that runs it was down)."
    )
    job_id: str | None = None
    group_id: str | None = Field(default=None, description="The sweep it started, for a scheduled sweep.")
    pipeline_id: str | None = Field(
        default=None, description="The pipeline it started, for a scheduled pipeline."
    )
    state: JobState | None = Field(
        default=None, description="The job's (or the sweep's) state now, for a started run."
    )
    message: str = ""


class Keeper(ApiModel):
    """Who starts the runs, and how it stands."""

    kind: Literal["server", "backend"] = Field(
        description="`server`: this Jupyter server starts the runs, only while it runs; `backend`: the "
        "batch system holds the schedule (a waiting SLURM job, a CronJob) and runs it with no server."
    )
    handle: str | None = Field(default=None, description="The waiting SLURM job's id; the CronJob's name.")
    present: bool = Field(
        default=True,
        description="False: the batch system no longer holds it (cancelled by an administrator, lost in a "
        "restart): `POST schedules/{id}/rearm` sets it up again.",
    )
    message: str = Field(default="", description="How it stands, in words.")


class Schedule(ApiModel):
    """A notebook's snapshot run on a schedule."""

    id: str
    name: str
    backend: str
    notebook_path: str = Field(
        description="The notebook it was made from; its snapshot is what runs. A scheduled pipeline: its file."
    )
    pipeline_path: str | None = Field(default=None, description="The pipeline file it runs, if it runs one.")
    schedule: str = Field(description="The expression, as given.")
    description: str = Field(description="The expression in words.", examples=["every day at 06:00"])
    timezone: str
    overlap: Overlap
    active: bool
    kernel: str | None = None
    environment: str | None = None
    image: str | None = None
    queue: str | None = None
    parameters: dict[str, JsonValue] = Field(default_factory=dict)
    resources: JobResources = Field(default_factory=JobResources)
    sweep_size: int | None = Field(
        default=None, description="For a scheduled sweep: its runs at each due time."
    )
    created_at: float
    updated_at: float
    snapshot_at: float = Field(
        description="When the notebook's snapshot was taken (creation, or the last update)."
    )
    next_runs: list[DueTime] = Field(
        default_factory=list, description="The next three due times; empty when paused or finished."
    )
    keeper: Keeper
    last_runs: list[ScheduleRun] = Field(
        default_factory=list,
        description="The latest due times first: ten in a listing, fifty for one schedule.",
    )


class ScheduleList(Page[Schedule]):
    pass
