"""A pipeline's folder: the contract between the server and whatever carries the pipeline on without it
(a node's runner in a Kubernetes pod creating the node's children).

``pipeline.json`` (written by the server only, replaced whole) names every node: its parents, when it
runs, its backend, and the folders of its current jobs (one for a job node, one per run of a sweep).
Each node's jobs live in folders under the pipeline's. A node is skipped by a ``skipped.json`` in its
folders (written by whoever decided it), and has ended when every one of its folders holds a
``status.json`` or a ``skipped.json``: the same files the server reads, read the same bounded way.

Kept free of heavy imports: a node's runner reads it on the node.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from ...system.atomic import write_json_atomic
from .. import jobfiles
from .graph import ACTIVE, WAITING, Edge

DOC = "pipeline.json"
SKIPPED = "skipped.json"
MAX_DOC = 4 << 20
_Id = Annotated[str, Field(max_length=64)]


class NodeDoc(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: _Id
    kind: Literal["job", "sweep", "external"]
    after: list[_Id] = Field(default_factory=list, max_length=1000)
    when: Literal["succeeded", "failed", "always"] = "succeeded"
    backend: Annotated[str, Field(max_length=64)]
    folder: Annotated[str, Field(max_length=8192)] = Field(description="The job's folder, or the sweep's.")
    folders: list[Annotated[str, Field(max_length=8192)]] = Field(
        default_factory=list,
        max_length=100_000,
        description="Absolute: each job's folder (a sweep: each run's).",
    )
    job_ids: list[Annotated[str, Field(max_length=64)]] = Field(default_factory=list, max_length=100_000)
    group_id: Annotated[str, Field(max_length=64)] | None = None


class PipelineDoc(BaseModel):
    """``pipeline.json``."""

    model_config = ConfigDict(extra="ignore")

    format: Literal[1] = 1
    id: Annotated[str, Field(pattern=r"^[0-9a-f]{12}$")]
    name: Annotated[str, Field(max_length=200)]
    cancelled: bool = False
    nodes: list[NodeDoc] = Field(max_length=1000)

    def edges(self) -> dict[str, Edge]:
        return {n.id: Edge(tuple(n.after), n.when) for n in self.nodes if n.kind != "external"}

    def node(self, node_id: str) -> NodeDoc:
        return next(n for n in self.nodes if n.id == node_id)


def write_doc(folder: Path, doc: PipelineDoc) -> None:
    write_json_atomic(folder / DOC, doc.model_dump(mode="json"), durable=True)


def read_doc(folder: Path) -> PipelineDoc | None:
    """``pipeline.json``, or None when it is missing or damaged."""
    try:
        return jobfiles.read_model(folder / DOC, PipelineDoc, MAX_DOC)
    except jobfiles.Damaged:
        return None


def mark_skipped(node: NodeDoc, why: str) -> None:
    """Record in each of the node's folders that it was skipped, and why (kept if already there)."""
    skip_folders(node.folders, why)


def skip_folders(folders: Sequence[str], why: str) -> None:
    """Write ``skipped.json`` into each of ``folders`` that has none yet."""
    for folder in folders:
        path = Path(folder) / SKIPPED
        if Path(folder).is_dir() and not path.exists():
            write_json_atomic(path, {"reason": "skipped", "message": why}, durable=True)


def read_skip(folder: Path) -> str | None:
    """Why the job of ``folder`` was skipped, or None when it was not."""
    try:
        data = jobfiles.read_json(folder / SKIPPED, jobfiles.MAX_SMALL)
    except jobfiles.Damaged:
        return "skipped"
    if data is None:
        return None
    message = data.get("message")
    return message[:500] if isinstance(message, str) else "skipped"


def standing_from_files(doc: PipelineDoc, handed: Mapping[str, bool]) -> dict[str, str]:
    """How each node stands as its folders tell it, for :func:`.graph.decide`: ended (its jobs' final
    states combined as a sweep's are), :data:`ACTIVE` when ``handed`` says its jobs were given to their
    backend, else :data:`WAITING`. The folders are the job's code's to write: only the state word of a
    status is used, and anything else counts as not ended."""
    out: dict[str, str] = {}
    for node in doc.nodes:
        states = []
        for folder in node.folders:
            path = Path(folder)
            if read_skip(path) is not None:
                states.append("skipped")
                continue
            try:
                status = jobfiles.read_status(path)
            except jobfiles.Damaged:
                status = None
            state = status.get("state") if status else None
            states.append(state if state in ("succeeded", "failed", "cancelled") else "")
        if states and all(states):
            out[node.id] = combined(states)
        else:
            out[node.id] = ACTIVE if handed.get(node.id) else WAITING
    return out


def combined(states: list[str]) -> str:
    """A node's end from its jobs' ends (a sweep's runs): failed if any failed, skipped if all were,
    cancelled if any was, else succeeded."""
    if "failed" in states:
        return "failed"
    if all(s == "skipped" for s in states):
        return "skipped"
    if "cancelled" in states or "skipped" in states:
        return "cancelled"
    return "succeeded"
