"""Pipelines: notebooks run as a graph, each node once its parents have ended as it asks, their folders
and results handed down to it."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from ..common import ApiModel, Page
from ..fields import line, patterned
from ..jobs import JobRequest, JobState
from .notifications import JobNotify

# A node's id: what `after` names and the key of `upstream` in its children's notebooks.
NODE_ID_PATTERN = r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$"
JOB_ID_PATTERN = r"^[0-9a-f]{12}$"
MAX_NODES = 1000  # the schema's ceiling; c.GpuEnvApp.max_pipeline_nodes is the one that applies
UPSTREAM = "upstream"  # the parameter each node with parents receives
# A `*.pipeline.yaml` (or .yml) under the server's root: one line.
PIPELINE_FILE_PATTERN = r"^[^\x00-\x1f\x7f]*\.[pP][iI][pP][eE][lL][iI][nN][eE]\.[yY][aA]?[mM][lL]$"

When = Literal["succeeded", "failed", "always"]
NodeState = Literal["waiting", "queued", "running", "succeeded", "failed", "cancelled", "skipped"]
NodeKind = Literal["job", "sweep", "external"]
NodeId = Annotated[
    str,
    patterned(NODE_ID_PATTERN, "node id", hint="a letter or '_' first, then letters, digits, '_' or '-'"),
]
JobId = Annotated[str, patterned(JOB_ID_PATTERN, "job id", hint="a job's id, 12 hexadecimal digits")]

_WHEN_HELP = (
    "When the node runs once all its parents have ended: `succeeded` (default) if every one succeeded; "
    "`failed` if any failed; `always` however they ended. Otherwise it is skipped, saying why."
)


class PipelineNodeRequest(JobRequest):
    """One node: what `POST jobs` takes for one job or one sweep, its parents and when it runs."""

    id: NodeId = Field(description="The node's name in the pipeline.", examples=["train"])
    after: list[NodeId] = Field(
        default_factory=list,
        max_length=MAX_NODES,
        description="The nodes (or `after_jobs` keys) it waits for; its notebook receives their folders "
        "and results as the parameter `upstream`.",
    )
    when: When = Field(default="succeeded", description=_WHEN_HELP)


class PipelineRequest(ApiModel):
    """`POST pipelines` (and the content of a `*.pipeline.yaml` file)."""

    name: Annotated[str, line("name", max_length=200, min_length=1)] = Field(examples=["nightly-training"])
    nodes: list[PipelineNodeRequest] = Field(min_length=1, max_length=MAX_NODES)
    after_jobs: dict[NodeId, JobId] = Field(
        default_factory=dict,
        max_length=20,
        description="Jobs that exist already (queued, running or ended) that nodes may name in `after` by "
        'the key given here: "run after" an earlier submission. They are shown as nodes, never run again.',
    )
    notify: JobNotify | None = Field(
        default=None, description="Notifications for the pipeline's jobs, over the user's."
    )
    file_path: Annotated[str, line("file path", max_length=4096)] | None = Field(
        default=None,
        description="The `*.pipeline.yaml` it was read from, for the record; set by the file's reader.",
    )

    @model_validator(mode="after")
    def _ids_once(self) -> PipelineRequest:
        seen: set[str] = set(self.after_jobs)
        for node in self.nodes:
            if node.id in seen:
                raise ValueError(f"node id '{node.id}' is used twice")
            seen.add(node.id)
        return self


class PipelineRerunRequest(ApiModel):
    """`POST pipelines/{id}/rerun`: run a node again, and everything below it."""

    from_node: NodeId = Field(
        alias="from",
        description="The node to run again; its descendants run again after it, the other nodes' "
        "outputs are reused.",
    )


class PipelineNode(ApiModel):
    id: str
    kind: NodeKind = Field(description="`job`, `sweep`, or `external` (a job of `after_jobs`).")
    name: str
    notebook_path: str
    backend: str
    after: list[str]
    when: When
    state: NodeState = Field(
        description="`waiting` until its parents have ended; `skipped` when they did not end as `when` "
        "asks, or the pipeline was cancelled before it ran (`message` says which)."
    )
    message: str = ""
    job_id: str | None = Field(default=None, description="Its job (a `job` or `external` node).")
    group_id: str | None = Field(default=None, description="Its sweep (a `sweep` node).")
    job_dir: str | None = Field(default=None, description="Its folder: the job's, or the sweep's.")
    counts: dict[str, int] = Field(
        default_factory=dict, description="A sweep node's runs per state; a job node's own state, once."
    )
    cells_done: int = 0
    cells_total: int = 0
    started_at: float | None = None
    finished_at: float | None = None
    attempts: int = Field(default=1, description="How many times it was sent (a rerun adds one).")


class Pipeline(ApiModel):
    """A pipeline run: its nodes and how they stand."""

    id: str
    name: str
    state: JobState = Field(
        description="`queued` until a node starts; `running` while a node is queued, running or waiting "
        "for one that is; once all have ended or been skipped: `cancelled` if it was cancelled, `failed` "
        "if a node failed, else `succeeded`."
    )
    created_at: float
    finished_at: float | None = None
    cancelled_at: float | None = None
    file_path: str | None = None
    counts: dict[str, int] = Field(description="Nodes per state.")
    nodes: list[PipelineNode] = Field(description="In an order where each node comes after its parents.")
    schedule_id: str | None = Field(default=None, description="The schedule that started it, if any.")


class PipelineList(Page[Pipeline]):
    pass
