"""Conservative, pure-Python checks of conda package names and match specs.

The server process never imports py-rattler, so requests are checked here first and parsed for
real in the engine's child process. Channel prefixes (``conda-forge::x``), URLs and bracket syntax are
refused on purpose: users install from the channels the platform configured, nothing else.
"""

from __future__ import annotations

import re

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
    name = name.strip() if isinstance(name, str) else name
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name) or len(name) > MAX_SPEC_LENGTH:
        raise ValueError(f"{name!r} is not a conda package name")
    return name.lower()


def check_spec(spec: str) -> str:
    if not isinstance(spec, str):
        raise ValueError("a package spec must be a string")
    spec = spec.strip()
    if not spec or len(spec) > MAX_SPEC_LENGTH or not _SPEC_RE.fullmatch(spec):
        raise ValueError(
            f"{spec!r} is not a package spec this server accepts; use a name with an optional version, "
            "e.g. 'tensorboard', 'numpy >=1.26', 'scipy=1.13'"
        )
    return spec


def spec_name(spec: str) -> str:
    """The package name of a spec accepted by :func:`check_spec`."""
    m = _SPEC_RE.fullmatch(spec.strip())
    return (m.group("name") if m else spec.split()[0]).lower()
