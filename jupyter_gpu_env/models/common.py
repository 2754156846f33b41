from __future__ import annotations

from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema


class ApiModel(BaseModel):
    """Base of every API model: unknown fields in a request are an error, not silently dropped."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


T = TypeVar("T")

# The paging query parameters of every listing, as JSON Schema: `limit` items from `offset`.
PAGE_LIMIT_SCHEMA: dict[str, Any] = {"type": "integer", "minimum": 1, "maximum": 500, "default": 50}
PAGE_OFFSET_SCHEMA: dict[str, Any] = {"type": "integer", "minimum": 0, "maximum": 1_000_000_000, "default": 0}


class Page(ApiModel, Generic[T]):
    """One page of a listing (``class JobList(Page[Job])``): the items, how many match over all pages,
    where this page starts and its size, and where the next one starts (null on the last). A listing
    may redeclare a field to describe it."""

    items: list[T]
    total: int
    offset: int
    limit: int
    next_offset: int | None = None


class ApiError(ApiModel):
    """The body of every error response."""

    message: str = Field(description="What went wrong, in words a user can act on.")
    reason: str = Field(description="A short machine-readable code, e.g. `not_found`, `invalid_request`.")
    details: list[dict[str, Any]] | None = Field(
        default=None,
        description="Per-field validation problems when the request was invalid; for `kernels_running`, "
        "the kernels in the way (`kernel_id`, `name`, `notebook_path`).",
    )


# Errors pydantic reports for the branches of a union that the value was not meant for.
_WRONG_BRANCH = {
    "int_type",
    "int_parsing",
    "string_type",
    "float_type",
    "bool_type",
    "none_required",
    "dict_type",
}


def _field_path(loc: tuple[Any, ...]) -> str:
    # Union branches appear in the location ("constrained-int", "function-after[...]"): not field names.
    parts = [
        str(p) for p in loc if not (isinstance(p, str) and ("[" in p or "-" in p or p in ("str", "int")))
    ]
    return ".".join(parts)


def describe_validation_error(err: ValidationError, what: str = "Invalid request") -> str:
    """One sentence per field, without pydantic's prefixes and union noise."""
    by_field: dict[str, list[Any]] = {}
    for e in err.errors():
        by_field.setdefault(_field_path(tuple(e.get("loc", ()))) or "body", []).append(e)
    parts = []
    for where, errors in by_field.items():
        meant = [e for e in errors if e.get("type") not in _WRONG_BRANCH] or errors
        messages = dict.fromkeys(str(e.get("msg", "")).removeprefix("Value error, ") for e in meant)
        parts.append(f"{where}: {'; '.join(messages)}")
    return f"{what}: " + "; ".join(parts)


class ApiJsonSchema(GenerateJsonSchema):
    """pydantic's JSON schema, with dicts whose keys are constrained closed to other keys.

    pydantic writes ``dict[Key, V]`` as ``patternProperties`` alone, which lets a key that does not
    match through; the model refuses such a key, so the document must too.
    """

    def dict_schema(self, schema: core_schema.DictSchema) -> JsonSchemaValue:
        out = super().dict_schema(schema)
        if "patternProperties" in out and "additionalProperties" not in out:
            out["additionalProperties"] = False
        return out
