"""What the server reads of a notebook for the submit dialog: its parameters."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, JsonValue

from .common import ApiModel

ParameterKind = Literal["int", "float", "str", "bool", "literal"]


class NotebookParameter(ApiModel):
    """One name the notebook's `parameters` cell assigns, as papermill sees it."""

    name: str
    kind: ParameterKind = Field(
        description="What values it takes, from its default as written: `int`, `float`, `str`, `bool`, or "
        "`literal` (any JSON value: lists, dicts, null, text of several lines, or a default that is an "
        "expression)."
    )
    default: JsonValue = Field(
        default=None, description="The default as JSON (tuples as lists); null when not a literal."
    )
    default_text: str = Field(description="The default as written in the cell.")
    annotation: str | None = Field(
        default=None, description="The type annotation, if any (`epochs: int = 3`)."
    )
    help: str = Field(default="", description="The comment beside the assignment.")


class NotebookParameters(ApiModel):
    """A notebook's `parameters` cell, read by the server (papermill's inspection and a safe reading)."""

    cell_index: int | None = Field(
        description="The index of the cell tagged `parameters`; null when none is."
    )
    inspectable: bool = Field(
        description="False when papermill cannot inspect this kernel's language: any name is passed on."
    )
    kernel: str | None = None
    language: str | None = None
    source: str = Field(default="", description="The cell's source.")
    parameters: list[NotebookParameter] = Field(default_factory=list)
