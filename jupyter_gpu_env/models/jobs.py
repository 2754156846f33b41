"""Batch jobs: what a submission asks for, what a job record holds, listings and log chunks."""

from __future__ import annotations

from itertools import combinations
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias, Union

from pydantic import ConfigDict, Field, JsonValue, model_validator
from typing_extensions import TypeAliasType

from .attempts import JobAttempt
from .automation.notifications import JobNotify
from .common import ApiModel, Page
from .fields import line, patterned, whole_number

# The GPU use models live in models/gpu/jobuse.py; named here too, where they were first.
from .gpu.jobuse import Cost as Cost
from .gpu.jobuse import JobGpuDevice as JobGpuDevice
from .gpu.jobuse import JobGpuSeries as JobGpuSeries
from .gpu.jobuse import JobGpuUsage as JobGpuUsage
from .resources import JobResources, Resources

JobState = Literal["queued", "running", "succeeded", "failed", "cancelled"]
# normal: runs to its end, never requeued. opportunistic: may be stopped when others need the GPU
# (preempted, evicted), then requeued and resumed; only where the site configured a backend for it.
JobPriority = Literal["normal", "opportunistic"]
PRIORITIES: tuple[JobPriority, ...] = ("normal", "opportunistic")
JOB_STATES: tuple[JobState, ...] = ("queued", "running", "succeeded", "failed", "cancelled")
TERMINAL_STATES: frozenset[str] = frozenset({"succeeded", "failed", "cancelled"})
ACTIVE_STATES: frozenset[str] = frozenset({"queued", "running"})


NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"  # a backend's name
IDENTIFIER_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]{0,99}$"
# A notebook under the server's root: one line, ending in .ipynb (in any case).
NOTEBOOK_PATTERN = r"^[^\x00-\x1f\x7f]*\.[iI][pP][yY][nN][bB]$"
KERNEL_NAME_PATTERN = r"^[A-Za-z0-9._-]{1,255}$"
# Listed environment names: a folder name, or `<name>@<parent>` for a managed one whose name is taken.
ENV_REF_PATTERN = r"^[^\x00-\x1f\x7f/]{1,255}$"
IMAGE_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,254}$"
# A SLURM partition or a Kueue LocalQueue (whose names are DNS labels, a subset).
QUEUE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,127}$"
MAX_PARAMETERS = 200
MAX_NAME = 200  # characters of a job's name, a sweep run's included
MAX_SWEEP_RUNS = 100_000  # the schema's ceiling; c.GpuEnvApp.max_sweep_runs is the one that applies
_RUNTIMES = ("kernel", "environment", "image")

# What requests name, each checked by its pattern: the same field type wherever a request takes one.
BackendName = Annotated[str, patterned(NAME_PATTERN, "backend")]
ParameterName = Annotated[str, patterned(IDENTIFIER_PATTERN, "parameter name")]
KernelName = Annotated[str, patterned(KERNEL_NAME_PATTERN, "kernel")]
EnvRef = Annotated[str, patterned(ENV_REF_PATTERN, "environment")]
ImageId = Annotated[str, patterned(IMAGE_ID_PATTERN, "image")]
QueueName = Annotated[str, patterned(QUEUE_PATTERN, "queue")]


# Values papermill injects: JSON whose strings (keys included) hold no NUL, which no Python source,
# file or command line can carry. Floats are finite (the body parser refuses NaN and Infinity).
_NO_NUL = r"^[^\x00]*$"
if TYPE_CHECKING:  # what the values are; the checks below are pydantic's business
    ParameterValue: TypeAlias = (
        "str | bool | int | float | None | list[ParameterValue] | dict[str, ParameterValue]"
    )
else:
    ParameterValue = TypeAliasType(
        "ParameterValue",
        Union[  # noqa: UP007 - a recursive alias needs the explicit Union
            Annotated[str, patterned(_NO_NUL, "text")],
            bool,
            int,
            float,
            None,
            list["ParameterValue"],
            dict[Annotated[str, patterned(_NO_NUL, "key")], "ParameterValue"],
        ],
    )


def _two_runtimes() -> list[JsonValue]:
    """What the schema says :func:`_one_runtime_at_most` refuses: any two of kernel, environment, image."""
    return [
        {"required": [a, b], "properties": {a: {"type": "string"}, b: {"type": "string"}}}
        for a, b in combinations(_RUNTIMES, 2)
    ]


def _one_runtime_at_most(request: ApiModel, then: str = "") -> None:
    chosen = [k for k in _RUNTIMES if getattr(request, k) is not None]
    if len(chosen) > 1:
        raise ValueError(
            f"choose at most one of kernel, environment and image (got {' and '.join(chosen)}){then}"
        )


class JobRequest(ApiModel):
    """`POST jobs`: run a saved notebook as a batch job."""

    model_config = ConfigDict(
        json_schema_extra={
            "not": {
                "anyOf": [
                    *_two_runtimes(),
                    {
                        "required": ["sweep", "sweep_runs"],
                        "properties": {"sweep": {"type": "object"}, "sweep_runs": {"type": "array"}},
                    },
                ]
            },
            # max_concurrent only with a sweep
            "if": {"required": ["max_concurrent"], "properties": {"max_concurrent": {"type": "integer"}}},
            "then": {
                "anyOf": [
                    {"required": ["sweep"], "properties": {"sweep": {"type": "object"}}},
                    {"required": ["sweep_runs"], "properties": {"sweep_runs": {"type": "array"}}},
                ]
            },
        }
    )

    notebook_path: Annotated[
        str,
        patterned(
            NOTEBOOK_PATTERN, "notebook path", hint="it must be a notebook (.ipynb) path", max_length=4096
        ),
    ] = Field(description="The notebook, relative to the server's root.", examples=["analysis.ipynb"])
    backend: BackendName = Field(default="local", description="A backend from `GET backends`.")
    kernel: KernelName | None = Field(default=None, description="A kernel name (`python3`, ...).")
    environment: EnvRef | None = Field(
        default=None, description="A conda environment to run in, by its listed name."
    )
    image: ImageId | None = Field(default=None, description="A packed image (squashfs) to run in, by id.")
    parameters: dict[ParameterName, ParameterValue] = Field(
        default_factory=dict,
        examples=[{"alpha": 2}],
        max_length=MAX_PARAMETERS,
        description="Values for names the notebook's `parameters` cell declares. Their JSON may take at "
        "most `c.GpuEnvApp.max_parameters_bytes` (64 KiB by default).",
    )
    resources: Resources = Field(default_factory=Resources)
    queue: QueueName | None = Field(default=None, description="A queue (SLURM partition, Kueue LocalQueue).")
    name: Annotated[str, line("name", max_length=MAX_NAME, min_length=1)] | None = Field(
        default=None, description="A label; the notebook's name if unset."
    )
    sweep: (
        dict[
            ParameterName,
            Annotated[list[ParameterValue], Field(min_length=1, max_length=MAX_SWEEP_RUNS)],
        ]
        | None
    ) = Field(
        default=None,
        max_length=MAX_PARAMETERS,
        examples=[{"alpha": [0.1, 0.5], "lr": [0.1, 0.01]}],
        description="Run the notebook once per combination of these values (the cartesian product, in "
        "the order given); `parameters` go to every run (a name also swept here takes its swept values). "
        "At most `c.GpuEnvApp.max_sweep_runs` runs.",
    )
    sweep_runs: (
        Annotated[
            list[dict[ParameterName, ParameterValue]],
            Field(min_length=1, max_length=MAX_SWEEP_RUNS),
        ]
        | None
    ) = Field(
        default=None,
        description="Run the notebook once per entry, with its values over `parameters`; instead of `sweep`.",
    )
    max_concurrent: Annotated[int, whole_number("runs at once", 1, MAX_SWEEP_RUNS)] | None = Field(
        default=None, description="With a sweep: how many runs at once at most (default: all it may)."
    )
    notify: JobNotify | None = Field(
        default=None,
        description="Notifications for this job (a sweep: once, when all its runs have ended) over the "
        "user's own (`PUT notifications`).",
    )
    priority: JobPriority = Field(
        default="normal",
        description="`opportunistic`: may be stopped when others need its GPU, then requeued and resumed "
        "(the notebook gets `checkpoint_dir`, `resumed`), where the backend's `priorities` offer it.",
    )

    @model_validator(mode="after")
    def _one_sweep(self) -> JobRequest:
        if self.sweep is not None and self.sweep_runs is not None:
            raise ValueError("give either sweep (values per parameter) or sweep_runs (one entry per run)")
        if self.max_concurrent is not None and self.sweep is None and self.sweep_runs is None:
            raise ValueError("max_concurrent applies to a sweep; give sweep or sweep_runs with it")
        return self

    @model_validator(mode="after")
    def _one_runtime(self) -> JobRequest:
        _one_runtime_at_most(self, "; with none, the notebook's own kernel runs it")
        return self


class RerunRequest(ApiModel):
    """`POST jobs/{job_id}/rerun`: what to change; what is left out stays as it was. The notebook is
    always the job's snapshot, never the file as it is now."""

    model_config = ConfigDict(json_schema_extra={"not": {"anyOf": _two_runtimes()}})

    parameters: dict[ParameterName, ParameterValue] = Field(
        default_factory=dict,
        max_length=MAX_PARAMETERS,
        examples=[{"alpha": 0.5}],
        description="Values over the job's own.",
    )
    backend: BackendName | None = Field(default=None, description="Another backend; left out, the job's.")
    queue: QueueName | None = Field(
        default=None, description="Another queue; null for the backend's default; left out, the job's."
    )
    resources: Resources | None = Field(
        default=None,
        description="The resources, whole (a field left out is the backend's default); left out, the job's.",
    )
    kernel: KernelName | None = Field(
        default=None, description="Run in this kernel instead (at most one of kernel, environment, image)."
    )
    environment: EnvRef | None = Field(default=None, description="Run in this conda environment instead.")
    image: ImageId | None = Field(default=None, description="Run in this packed image instead.")
    priority: JobPriority | None = Field(default=None, description="Another priority; left out, the job's.")
    name: Annotated[str, line("name", max_length=MAX_NAME, min_length=1)] | None = Field(
        default=None,
        description="A name for the new job, so that the two are told apart; left out, the job's (a sweep's "
        "run: named by its values).",
    )

    @model_validator(mode="after")
    def _one_runtime(self) -> RerunRequest:
        _one_runtime_at_most(self)
        return self

    def changes(self) -> dict[str, Any]:
        """What the request changes besides the parameters, as a submission's fields (JSON)."""
        return self.model_dump(mode="json", exclude_unset=True, exclude={"parameters"}, exclude_none=False)


MAX_CELLS = 1_000_000  # more code cells than any notebook has: a count beyond it is not believed


class JobProgress(ApiModel):
    cells_done: int = Field(default=0, ge=0, le=MAX_CELLS, description="Code cells executed so far.")
    cells_total: int = Field(
        default=0, ge=0, le=MAX_CELLS, description="Code cells in the notebook, parameters included."
    )

    @model_validator(mode="after")
    def _done_within_total(self) -> JobProgress:
        if self.cells_done > self.cells_total:
            raise ValueError(f"cells_done ({self.cells_done}) is more than cells_total ({self.cells_total})")
        return self


class Job(ApiModel):
    """A batch job: one run of a notebook snapshot, or an interactive kernel session (``kind``)."""

    id: str
    name: str
    kind: Literal["notebook", "kernel"] = Field(
        default="notebook", description="`kernel`: an interactive kernel session, with no notebook output."
    )
    backend: str
    state: JobState
    reason: str | None = Field(
        default=None, description="Machine-readable why for the state, e.g. `cell_error`."
    )
    message: str = Field(default="", description="Why the job is in its state, in words.")
    notebook_path: str = Field(description="The submitted notebook, relative to the server's root.")
    job_dir: str = Field(description="The job's folder: relative to the server's root when inside it.")
    input_path: str = Field(description="The snapshot that runs (inside job_dir).")
    output_path: str = Field(description="The executed notebook (inside job_dir), written cell by cell.")
    log_path: str
    parameters: dict[str, JsonValue] = Field(default_factory=dict)
    parameters_omitted: bool = Field(
        default=False,
        description="True in a listing whose job has parameters too large to list; `GET jobs/{job_id}` has them.",
    )
    resources: JobResources = Field(default_factory=JobResources)
    kernel: str | None = Field(default=None, description="The kernel that runs the notebook.")
    environment: str | None = None
    image: str | None = None
    queue: str | None = None
    created_at: float
    started_at: float | None = None
    finished_at: float | None = None
    progress: JobProgress = Field(default_factory=JobProgress)
    backend_job_id: str | None = Field(default=None, description="The backend's id: a pid, a SLURM job id.")
    node: str | None = Field(
        default=None, description="Where it runs or ran: the node's name or address, as its backend saw it."
    )
    pending_reason: str | None = Field(default=None, description="Why a queued job is not running yet.")
    queue_position: int | None = Field(
        default=None, ge=1, description="A queued job's place in `queue_name`: 1 is next; null when unknown."
    )
    queue_name: str | None = Field(
        default=None,
        description="The queue the position counts in: `local`, a SLURM partition, a Kueue LocalQueue.",
    )
    estimated_start: float | None = Field(
        default=None, description="When the scheduler expects it to start (Unix time), where it estimates it."
    )
    exit_code: int | None = None
    gpu: JobGpuUsage | None = Field(
        default=None, description="GPU use measured by the runner; null until its first sample."
    )
    group_id: str | None = Field(default=None, description="The sweep this job is a run of, if any.")
    group_index: int | None = Field(default=None, description="Its place in the sweep, from 0.")
    schedule_id: str | None = Field(default=None, description="The schedule that started this run, if any.")
    pipeline_id: str | None = Field(
        default=None, description="The pipeline this job is a node (or a run of one) of."
    )
    pipeline_node: str | None = Field(default=None, description="Its node's id in that pipeline.")
    waiting_for: list[str] = Field(
        default_factory=list,
        description="The pipeline nodes this queued job waits for before it is handed to its backend; "
        "empty once it has been (or where the backend holds it itself: SLURM's dependencies).",
    )
    notify: JobNotify | None = Field(
        default=None, description="The job's own notification choices, over the user's; null: the user's."
    )
    priority: JobPriority = "normal"
    attempts: list[JobAttempt] = Field(
        default_factory=list,
        max_length=1000,
        description="Earlier attempts that were stopped and requeued, oldest first; empty for a job that "
        "ran once. The job's `gpu` hours are summed over them and the current one.",
    )
    checkpoint_dir: str | None = Field(
        default=None, description="Where the notebook may save state to resume from, kept across attempts."
    )


class JobList(Page[Job]):
    total: int = Field(description="Jobs matching the filter, over all pages.")
    next_offset: int | None = Field(
        default=None, description="The offset of the next page; null on the last."
    )


class LogChunk(ApiModel):
    """A piece of a job's log from a byte offset; ask again from `next_offset` to follow it."""

    offset: int
    next_offset: int
    text: str
    eof: bool = Field(description="True when the job has ended and the whole log has been read.")
