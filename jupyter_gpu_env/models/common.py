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


# Errors pydantic reports for the branches of a union that the value was not meant for, with what each
# branch wanted, in words (said only when no branch had a more specific complaint).
_WRONG_BRANCH = {
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "string_type": "text",
    "float_type": "a number",
    "bool_type": "true or false",
    "none_required": "empty",
    "dict_type": "a mapping",
    "list_type": "a list",
}
# Containers whose keys the user chose (a parameter's name): an error inside one names the key.
_USER_KEYED = {"parameters": "parameter", "sweep": "parameter", "env": "variable"}


def _named_parts(loc: tuple[Any, ...]) -> list[str | int]:
    # Union branches appear in the location ("function-after[...]", "list[...]", "bool"): not fields.
    branch = ("str", "int", "float", "bool", "none")
    return [p for p in loc if not (isinstance(p, str) and ("[" in p or "-" in p or p in branch))]


def _field_words(parts: list[str | int]) -> str:
    """A field as a user knows it, never a dotted path: ``time limit``, ``parameter 'alpha'``."""
    if len(parts) >= 2 and isinstance(parts[0], str) and parts[0] in _USER_KEYED:
        words = f"{_USER_KEYED[parts[0]]} '{parts[1]}'"
        items = [p for p in parts[2:] if isinstance(p, int)]
        return words + (f" (item {items[-1] + 1})" if items else "")
    names = [p for p in parts if isinstance(p, str)]
    if not names:
        return "the request"
    # A list's item is named by its place in words ("after (node 1)"), the list by its singular.
    within = [
        f"{str(parts[i - 1]).removesuffix('s').replace('_', ' ')} {p + 1}"
        for i, p in enumerate(parts)
        if isinstance(p, int) and i > 0 and i < len(parts) - 1
    ]
    return names[-1].replace("_", " ") + (f" ({', '.join(within)})" if within else "")


def _ours(error: Any) -> bool:
    # The project's own checks (models.fields) name what they check in their message; pydantic's
    # built-in ones ("List should have at least 1 item") do not, and carry a documentation url.
    return error.get("type") == "value_error" or error.get("url") is None


def _problem(where: str, errors: list[Any]) -> str:
    """One sentence for one field: its own message where it names the field, else the field's words."""
    meant = [e for e in errors if e.get("type") not in _WRONG_BRANCH] or [e for e in errors if _ours(e)]
    if not meant:
        wanted = list(dict.fromkeys(_WRONG_BRANCH[e["type"]] for e in errors))
        either = wanted[0] if len(wanted) == 1 else ", ".join(wanted[:-1]) + " or " + wanted[-1]
        return f"{where} must be {either}"
    sentences = []
    for e in meant:
        kind, msg = e.get("type"), str(e.get("msg", "")).removeprefix("Value error, ")
        if kind == "missing":
            sentences.append(f"{where} is required")
        elif kind == "extra_forbidden":
            sentences.append(f"'{where}' is not something this takes")
        elif _ours(e):
            sentences.append(msg)
        else:
            sentences.append(f"{where}: {msg[:1].lower()}{msg[1:]}")
    return "; ".join(dict.fromkeys(sentences))


def describe_validation_error(err: ValidationError, what: str = "Invalid request") -> str:
    """One sentence per field in a user's words: no dotted field paths, no pydantic prefixes or union
    noise. The paths stay in the error's ``details`` for programs."""
    by_field: dict[str, list[Any]] = {}
    for e in err.errors():
        by_field.setdefault(_field_words(_named_parts(tuple(e.get("loc", ())))), []).append(e)
    parts = [_problem(where, errors) for where, errors in by_field.items()]
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
