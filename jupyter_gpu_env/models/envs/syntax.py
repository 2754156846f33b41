"""What users may write, checked in pure Python: environment names and conda package specs.

A name becomes a folder under the user's environment directory, so anything that could escape it
(``..``, ``/``), hide it (a leading dot, which also marks our temporaries) or confuse a command line
(a leading dash, whitespace, control characters) is refused.

The server process never imports py-rattler, so package specs are checked here first, conservatively,
and parsed for real in the engine's child process. Channel prefixes (``conda-forge::x``), URLs and
bracket syntax are refused on purpose: users install from the channels the platform configured.
"""

from __future__ import annotations

import re

from ...errors import InvalidRequest

# ----- environment names -----

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


# ----- conda package names and match specs -----

MAX_SPEC_LENGTH = 200
_NAME = r"[A-Za-z0-9_][A-Za-z0-9_.+-]*"
_NAME_RE = re.compile(_NAME)
# name, then optionally a version constraint and a build string, e.g. "numpy >=1.26,<2", "scipy=1.13=py311*"
_SPEC = rf"(?P<name>{_NAME})(?P<rest>( *[=<>!~]{{0,2}} *[A-Za-z0-9_.*+!=<>,|~ -]+)?)"
_SPEC_RE = re.compile(_SPEC)
# What the API accepts, blanks around included (they are stripped), for the OpenAPI document.
SPEC_PATTERN = rf"^ *{_SPEC} *$"
NAME_PATTERN = rf"^ *{_NAME} *$"


def check_package_name(name: str) -> str:
    too_long = isinstance(name, str) and len(name) > MAX_SPEC_LENGTH  # as sent: the document's maxLength
    name = name.strip() if isinstance(name, str) else name
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name) or too_long:
        raise ValueError(f"{name!r} is not a conda package name")
    return name.lower()


def check_spec(spec: str) -> str:
    if not isinstance(spec, str):
        raise ValueError("a package spec must be a string")
    too_long = len(spec) > MAX_SPEC_LENGTH  # as sent, blanks included: the document's maxLength
    spec = spec.strip()
    if not spec or too_long or not _SPEC_RE.fullmatch(spec):
        raise ValueError(
            f"{spec!r} is not a package spec this server accepts; use a name with an optional version, "
            "e.g. 'tensorboard', 'numpy >=1.26', 'scipy=1.13'"
        )
    return spec


def spec_name(spec: str) -> str:
    """The package name of a spec accepted by :func:`check_spec`."""
    m = _SPEC_RE.fullmatch(spec.strip())
    return (m.group("name") if m else spec.split()[0]).lower()


# ----- PyPI requirements: a name, extras, version clauses (no URLs, markers or options) -----

_PIP_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_PIP_RELEASE = r"[0-9]+(?:\.[0-9]+)*"
_PIP_VERSION = rf"{_PIP_RELEASE}(?:(?:a|b|rc)[0-9]+)?(?:\.post[0-9]+)?(?:\.dev[0-9]+)?"
# `.*` only after a plain release (PEP 440: not after a pre-, post- or dev-release).
_PIP_CLAUSE = (
    rf"(?:(?:==|!=) *(?:{_PIP_RELEASE}\.\*|{_PIP_VERSION})|~= *[0-9]+(?:\.[0-9]+)+(?:(?:a|b|rc)[0-9]+)?"
    rf"|(?:<=|>=|<|>) *{_PIP_VERSION})"
)
_PIP_REQUIREMENT = (
    rf"(?P<name>{_PIP_NAME}) *(?:\[ *{_PIP_NAME}(?: *, *{_PIP_NAME})* *\])? *"
    rf"(?:{_PIP_CLAUSE}(?: *, *{_PIP_CLAUSE})*)?"
)
_PIP_REQUIREMENT_RE = re.compile(_PIP_REQUIREMENT)
PIP_REQUIREMENT_PATTERN = rf"^ *{_PIP_REQUIREMENT} *$"
PIP_NAME_PATTERN = rf"^ *{_PIP_NAME} *$"


def check_pip_requirement(requirement: str) -> str:
    """A requirement as pip takes it, limited to what an index serves: ``name[extra] >=1,<2``."""
    from packaging.requirements import InvalidRequirement, Requirement

    if not isinstance(requirement, str):
        raise ValueError("a PyPI requirement must be a string")
    too_long = len(requirement) > MAX_SPEC_LENGTH  # as sent, blanks included: the document's maxLength
    requirement = requirement.strip()
    problem = f"{requirement!r} is not a PyPI requirement this server accepts; use a name with optional extras and versions, e.g. 'tabulate', 'requests >=2.31', 'torch==2.4.*'"
    if not requirement or too_long or not _PIP_REQUIREMENT_RE.fullmatch(requirement):
        raise ValueError(problem)
    try:
        Requirement(requirement)
    except InvalidRequirement as e:
        raise ValueError(f"{problem}: {e}") from None
    return requirement


def check_pip_name(name: str) -> str:
    if not isinstance(name, str) or not re.fullmatch(_PIP_NAME, name.strip()) or len(name) > MAX_SPEC_LENGTH:
        raise ValueError(f"{name!r} is not a PyPI package name")
    return name.strip()
