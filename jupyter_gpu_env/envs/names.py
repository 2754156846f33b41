"""Validation of environment names chosen by users.

A name becomes a folder under the user's environment directory, so anything that could escape it
(``..``, ``/``), hide it (a leading dot, which also marks our temporaries) or confuse a command line
(a leading dash, whitespace, control characters) is refused.
"""

from __future__ import annotations

import re

from ..errors import InvalidRequest

MAX_NAME_LENGTH = 64
_ALLOWED = re.compile(r"[A-Za-z0-9._-]+")
# The same rules as one pattern, for the OpenAPI document (tested to agree with env_name_problem).
ENV_NAME_PATTERN = r"^(?!.*\.\.)[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$"


def env_name_problem(name: object) -> str | None:
    """Why ``name`` is not a valid environment name, or None when it is."""
    if not isinstance(name, str):
        return "The name must be a string."
    if not name:
        return "The name must not be empty."
    if len(name) > MAX_NAME_LENGTH:
        return f"The name is {len(name)} characters long; at most {MAX_NAME_LENGTH} are allowed."
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        return "The name must not contain control characters."
    if any(c.isspace() for c in name):
        return "The name must not contain spaces or other whitespace."
    if "/" in name or "\\" in name:
        return "The name must be a plain folder name, without '/' or '\\'."
    if ".." in name:
        return "The name must not contain '..'."
    if name[0] in ".-":
        return "The name must not start with '.' or '-'."
    if not _ALLOWED.fullmatch(name):
        bad = sorted({c for c in name if not _ALLOWED.fullmatch(c)})
        return (
            f"The name may only contain letters, digits, '.', '_' and '-' (not {' '.join(map(repr, bad))})."
        )
    return None


def check_env_name(name: str) -> str:
    """Return ``name`` if valid, else raise ValueError (for pydantic validators)."""
    problem = env_name_problem(name)
    if problem:
        raise ValueError(problem)
    return name


def validate_env_name(name: str) -> str:
    """Return ``name`` if valid, else raise :class:`InvalidRequest` (400)."""
    problem = env_name_problem(name)
    if problem:
        raise InvalidRequest(f"Invalid environment name {name!r}: {problem}", reason="invalid_name")
    return name
