"""Sweeps: one notebook run once per set of parameter values, their listing and their results table."""

from __future__ import annotations

from pydantic import Field, JsonValue

from .common import ApiModel, Page
from .gpu.jobuse import Cost
from .jobs import JobState


class JobGroup(ApiModel):
    """A sweep: one notebook run once per set of parameter values, as one submission."""

    id: str
    name: str
    backend: str
    notebook_path: str
    size: int = Field(description="How many runs.")
    max_concurrent: int
    varied: list[str] = Field(description="The parameters whose values differ between runs.")
    parameters: dict[str, JsonValue] = Field(default_factory=dict, description="The values every run has.")
    counts: dict[str, int] = Field(description="Runs per state.")
    state: JobState = Field(
        description="`running` while a run is queued or running and another has started; `queued` while "
        "none has; once all have ended, `failed` if any failed, else `cancelled` if the sweep was cancelled "
        "(`cancelled_at`) or none succeeded, else `succeeded` (`counts` tells the runs cancelled one by one)."
    )
    cancelled_at: float | None = Field(
        default=None,
        description="When the sweep as a whole was cancelled (`POST sweeps/{id}/cancel`); null again "
        "once its runs are retried or one is sent again.",
    )
    created_at: float
    finished_at: float | None = None
    backend_job_id: str | None = Field(
        default=None,
        description="The backend's one object for the whole sweep: a SLURM array, an Indexed Job.",
    )
    schedule_id: str | None = Field(default=None, description="The schedule that started this sweep, if any.")
    pipeline_id: str | None = Field(default=None, description="The pipeline this sweep is a node of.")
    pipeline_node: str | None = Field(default=None, description="Its node's id in that pipeline.")
    gpu_idle_runs: list[str] = Field(
        default_factory=list,
        description="Running runs whose GPU has been idle at least `c.GpuEnvApp.job_gpu_idle_seconds`.",
    )


class JobGroupList(Page[JobGroup]):
    pass


class SweepRow(ApiModel):
    """One run of a sweep in its results table."""

    index: int
    job_id: str
    state: JobState
    duration_seconds: float | None = Field(default=None, description="From its start to its end (or now).")
    energy_joules: float | None = Field(
        default=None,
        description="What the run's GPUs drew (its `gpu.energy_joules`); null where not measured.",
    )
    co2e_grams: float | None = Field(
        default=None, description="Its CO2e at the site's carbon intensity and PUE; null where not set."
    )
    cost: Cost | None = Field(default=None, description="Its cost at the site's prices; null where not set.")
    parameters: dict[str, JsonValue] = Field(description="The values of the sweep's varied parameters.")
    values: dict[str, JsonValue] = Field(
        description="What the run recorded: a `results`-tagged cell's dict, and scrapbook's glued values. "
        "A value named in `cut` is the beginning of its text only."
    )
    cut: list[str] = Field(
        default_factory=list,
        description="The values cut short (at `c.GpuEnvApp.sweep_result_value_bytes` each, or where the "
        "answer reached `c.GpuEnvApp.sweep_results_bytes`): whole, they are in the output notebook.",
    )
    note: str | None = Field(
        default=None,
        description="What was cut or could not be read, and where the whole is (`output_path`).",
    )
    output_path: str


class SweepResults(ApiModel):
    """A sweep's runs side by side: parameters, recorded values, state, duration and GPU energy."""

    group: JobGroup
    parameter_columns: list[str]
    value_columns: list[str] = Field(description="Every name any run recorded, in first-seen order.")
    rows: list[SweepRow]
    cut: bool = Field(
        default=False, description="Whether any value was cut short (each row's `cut` names them)."
    )
