"""Field constraints whose JSON schema states exactly what their validator accepts.

A pattern is written once, in Python's syntax, and used twice: as a full match by the validator and,
translated to ECMA-262 (named groups unnamed), as the ``pattern`` of the OpenAPI document. So a
request that the document calls valid is one the server accepts, and the reverse. Each is metadata for
``Annotated``: ``Annotated[str, patterned(...)]``, ``Annotated[int, whole_number(...)]``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

# One line of text: no control characters (tabs and line breaks included).
LINE_PATTERN = r"^[^\x00-\x1f\x7f]*$"
_NAMED_GROUP = re.compile(r"\(\?P<\w+>")


@dataclass(frozen=True)
class Checked:
    """``Annotated`` metadata: ``check`` runs after the type's own validation (before it, with ``before``),
    and ``schema`` is the JSON schema published for the field, in place of the type's."""

    check: Callable[[Any], Any]
    schema: dict[str, Any] = field(hash=False)
    before: bool = False

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        if self.before:
            return core_schema.no_info_before_validator_function(self.check, handler(source))
        return core_schema.no_info_after_validator_function(self.check, handler(source))

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return dict(self.schema)


def ecma(pattern: str) -> str:
    """``pattern`` in the regular-expression dialect of JSON Schema (ECMA-262)."""
    return _NAMED_GROUP.sub("(", pattern)


def matcher(pattern: str, what: str, hint: str = "") -> Callable[[str], str]:
    """A validator: the value must match ``pattern`` in full, else a ValueError that says so."""
    compiled = re.compile(pattern)

    def check(value: str) -> str:
        if not compiled.fullmatch(value):
            shown = value if len(value) <= 60 else value[:57] + "..."
            raise ValueError(f"{what} {shown!r} is not valid" + (f"; {hint}" if hint else ""))
        return value

    return check


def patterned(
    pattern: str,
    what: str,
    *,
    hint: str = "",
    max_length: int | None = None,
    min_length: int | None = None,
) -> Checked:
    """A string checked by ``pattern`` and lengths, with the matching schema."""
    schema: dict[str, Any] = {"type": "string", "pattern": ecma(pattern)}
    check = matcher(pattern, what, hint)
    if max_length is not None:
        schema["maxLength"] = max_length
    if min_length is not None:
        schema["minLength"] = min_length

    def bounded(value: str) -> str:
        if max_length is not None and len(value) > max_length:
            raise ValueError(f"{what} is longer than {max_length} characters")
        if min_length is not None and len(value) < min_length:
            raise ValueError(f"{what} must have at least {min_length} characters")
        return check(value)

    return Checked(bounded, schema)


def line(what: str, *, max_length: int, min_length: int = 0) -> Checked:
    """One line of free text: any characters but control characters, at most ``max_length``."""
    return patterned(
        LINE_PATTERN,
        what,
        hint="it must be one line without control characters",
        max_length=max_length,
        min_length=min_length or None,
    )


def whole_number(what: str, low: int, high: int) -> Checked:
    """An integer from ``low`` to ``high`` that says so in words, with the matching schema.

    JSON has one number type: 4.0 is the whole number 4 (JSON Schema's "integer" says so too); "4" and
    true are not numbers.
    """

    def check(value: object) -> int:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        message = f"{what} must be a whole number from {low} to {high}"
        if isinstance(value, bool) or not isinstance(value, int):
            # A type error, so that a union (bytes or '4G') reports the other branch's words instead.
            raise PydanticCustomError("int_type", message)
        if not low <= value <= high:
            raise ValueError(message)
        return value

    return Checked(check, {"type": "integer", "minimum": low, "maximum": high}, before=True)
