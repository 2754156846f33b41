"""What the server accepts from a caller, checked once: JSON bodies, query values and text.

Every request body goes through :func:`parse_json_body` and every query value through
:func:`parse_query_value`, so the rules below hold for every route without each handler repeating
them: no NaN or Infinity, no number beyond 64 bits, no nesting deeper than :data:`MAX_DEPTH`, no NUL
character or lone UTF-16 surrogate in any string (they cannot be written to a file name, a notebook or
a shell line), integers written in plain ASCII digits. Problems raise :class:`InvalidRequest`, a 400.
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import Any

from .errors import Forbidden, InvalidRequest, NotFound

MAX_DEPTH = 32
# Larger integers lose precision in the browser and in SQLite; no field of this API needs them.
MAX_INT = (1 << 63) - 1
_INT = re.compile(r"-?[0-9]{1,19}", re.ASCII)
_NUMBER = re.compile(r"-?[0-9]{1,30}(\.[0-9]{1,30})?([eE][-+]?[0-9]{1,3})?", re.ASCII)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# A component of a path: Linux refuses longer ones with ENAMETOOLONG.
MAX_NAME_BYTES = 255
MAX_PATH_BYTES = 4096


def string_problem(value: str) -> str | None:
    """Why ``value`` cannot be accepted in any field, or None: NUL and lone surrogates."""
    if "\x00" in value:
        return "contains a NUL character"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "contains a lone surrogate (not valid Unicode)"
    return None


def text_problem(value: str, *, multiline: bool = False) -> str | None:
    """Why ``value`` is not acceptable as one line of text (a name, a label), or None."""
    problem = string_problem(value)
    if problem:
        return problem
    if not multiline and ("\n" in value or "\r" in value):
        return "contains a line break"
    if _CONTROL.search(value):
        return "contains a control character"
    return None


def path_problem(value: str) -> str | None:
    """Why ``value`` cannot be a path on this machine, or None (checked before any file is touched)."""
    problem = text_problem(value)
    if problem:
        return problem
    encoded = value.encode("utf-8")
    if len(encoded) > MAX_PATH_BYTES:
        return f"is longer than the {MAX_PATH_BYTES} bytes a path may have"
    longest = max((len(part) for part in encoded.split(b"/")), default=0)
    if longest > MAX_NAME_BYTES:
        return f"has a component of {longest} bytes; a file or folder name may have at most {MAX_NAME_BYTES}"
    return None


def resolve_in_root(root: Path, value: str, field: str, what: str) -> Path:
    """The real path of ``value`` (relative to ``root``, as the file browser shows it, or absolute),
    which must lie inside ``root``: symlinks are resolved before the check, so a link inside the root
    cannot lead outside it. ``what`` names the thing in messages ("notebook", "file")."""
    if problem := path_problem(value):
        if "longer than" in problem or "component of" in problem:
            raise NotFound(f"There is no {what} at '{value[:200]}': the path {problem}.")
        raise InvalidRequest(f"{field} {problem}.")
    rel = value.replace("\\", "/")
    root = root.resolve()
    candidate = Path(rel) if os.path.isabs(rel) else root / rel.lstrip("/")
    try:
        real = candidate.resolve(strict=False)
    except (OSError, RuntimeError) as e:
        raise NotFound(f"{field} '{value}' cannot be resolved: {e}") from e
    if real != root and root not in real.parents:
        raise Forbidden(f"{field} '{value}' is outside the server's root directory.", reason="outside_root")
    return real


def _bad_constant(name: str) -> Any:
    raise InvalidRequest(f"The request body holds {name}, which is not a number JSON allows.")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise InvalidRequest(f"The number {text[:40]} in the request body is out of range.")
    return value


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > 19 or abs(value := int(text)) > MAX_INT:
        raise InvalidRequest(f"The number {text[:40]}… in the request body is larger than 2^63.")
    return value


def check_tree(data: Any) -> None:
    """Depth and strings of a parsed document, iteratively (a recursive walk could itself overflow)."""
    stack: list[tuple[Any, int, str]] = [(data, 0, "body")]
    while stack:
        node, depth, where = stack.pop()
        if depth > MAX_DEPTH:
            raise InvalidRequest(f"The request body is nested deeper than {MAX_DEPTH} levels.")
        if isinstance(node, str):
            if problem := string_problem(node):
                raise InvalidRequest(f"{where} {problem}.")
        elif isinstance(node, dict):
            for key, value in node.items():
                if problem := string_problem(key):
                    raise InvalidRequest(f"A key in {where} {problem}.")
                stack.append((value, depth + 1, f"{where}.{key}"[:200]))
        elif isinstance(node, list):
            stack.extend((item, depth + 1, f"{where}[{i}]") for i, item in enumerate(node))


def parse_json_body(raw: bytes) -> Any:
    """The JSON document in ``raw``, held to the rules above; an empty body reads as ``{}``, one of
    only blanks is no JSON document (400), as the published schema says."""
    if not raw:
        return {}
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InvalidRequest(f"The request body is not UTF-8: {e}", reason="invalid_json") from None
    try:
        data = json.loads(
            text, parse_constant=_bad_constant, parse_float=_finite_float, parse_int=_bounded_int
        )
    except RecursionError:
        raise InvalidRequest(
            f"The request body is nested deeper than {MAX_DEPTH} levels.", reason="invalid_json"
        ) from None
    except ValueError as e:
        raise InvalidRequest(f"The request body is not valid JSON: {e}", reason="invalid_json") from None
    check_tree(data)
    return data


def parse_query_value(name: str, raw: str, schema: dict[str, Any]) -> Any:
    """A query value parsed and checked by the JSON schema the OpenAPI document states for it.

    Types: ``boolean`` (``true`` or ``false``), ``integer`` (ASCII digits, within ``minimum``/``maximum``), ``number`` (finite, within its
    bounds), ``string`` (``enum``, ``maxLength``, ``pattern`` as a full match).
    """
    kind = schema.get("type", "string")
    if kind == "boolean":
        if raw not in ("true", "false"):
            raise InvalidRequest(f"'{name}' must be true or false, not '{raw[:40]}'.")
        return raw == "true"
    if kind == "integer":
        if not _INT.fullmatch(raw):
            raise InvalidRequest(f"'{name}' must be a whole number written in digits, not '{raw[:40]}'.")
        value: Any = int(raw)
    elif kind == "number":
        if not _NUMBER.fullmatch(raw):
            raise InvalidRequest(f"'{name}' must be a number, not '{raw[:40]}'.")
        value = float(raw)
        if not math.isfinite(value):
            raise InvalidRequest(f"'{name}' is out of range: {raw[:40]}.")
    else:
        if problem := text_problem(raw):
            raise InvalidRequest(f"'{name}' {problem}.")
        if "enum" in schema and raw not in schema["enum"]:
            raise InvalidRequest(f"'{name}' must be one of {', '.join(schema['enum'])}, not '{raw[:40]}'.")
        if "maxLength" in schema and len(raw) > schema["maxLength"]:
            raise InvalidRequest(f"'{name}' is longer than {schema['maxLength']} characters.")
        if "pattern" in schema and not re.fullmatch(schema["pattern"], raw):
            raise InvalidRequest(f"'{name}' is not of the form {schema['pattern']}: '{raw[:40]}'.")
        return raw
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None and value < low:
        raise InvalidRequest(f"'{name}' must be at least {low}, not {raw[:40]}.")
    if high is not None and value > high:
        raise InvalidRequest(f"'{name}' must be at most {high}, not {raw[:40]}.")
    above = schema.get("exclusiveMinimum")
    if above is not None and not value > above:
        raise InvalidRequest(f"'{name}' must be greater than {above}, not {raw[:40]}.")
    return value
