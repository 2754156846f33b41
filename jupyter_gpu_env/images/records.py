"""conda-pack's rewrite of a package record (``conda-meta/NAME.json``), byte for byte, in less time.

conda-pack blanks the record's local paths and writes it back with ``json.dumps(data, indent=True,
sort_keys=True)``. With an indent, Python's json module cannot use its C encoder and walks the data
with nested generators: on a 10,000-file environment that is most of the time spent on records,
and the records are on a pack's critical path (mksquashfs cannot start before they are written).
This writes the same text with one recursive function over the decoded data, about a third faster,
still using the json module's own C string escaper and its number spellings.

It is only ever given what ``json.loads`` returns (dicts with string keys, lists, strings, ints,
floats, booleans, None). ``tests/images/test_records.py`` compares it with conda-pack's own function on
every record of a real environment and on the awkward cases (escapes, non-ASCII, floats, empty and
nested containers).
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii as _string  # what json.dumps uses (ensure_ascii)
from typing import Any

_LOCAL_PATHS = ("extracted_package_dir", "package_tarball_full_path")


def rewrite(source: str) -> tuple[bytes, dict[str, Any]]:
    """What ``conda_pack.core.rewrite_conda_meta(source)`` returns: the record without its local
    paths, as bytes, and the decoded record."""
    with open(source) as f:
        data = json.loads(f.read())
    for name in _LOCAL_PATHS:
        if name in data:
            data[name] = ""
    link = data.get("link")
    if link and "source" in link:
        link["source"] = ""
    return dumps(data).encode(), data


def dumps(value: Any) -> str:
    """``json.dumps(value, indent=True, sort_keys=True)`` for decoded JSON."""
    if isinstance(value, (dict, list)):
        out: list[str] = []
        _container(value, "", out)
        return "".join(out)
    return _string(value) if isinstance(value, str) else _scalar(value)


def _container(value: dict[str, Any] | list[Any], indent: str, out: list[str]) -> None:
    if not value:
        out.append("{}" if isinstance(value, dict) else "[]")
        return
    inner = indent + " "  # indent=True is an indent of one space
    separator = "\n" + inner
    # The value step is written out in both branches: a shared helper (or one loop over key and value
    # pairs) costs a call or a tuple per value, which measured as a third of the time saved.
    if isinstance(value, dict):
        out.append("{")
        for key, item in sorted(value.items()):
            out.append(separator)
            separator = ",\n" + inner
            out.append(_string(key))
            out.append(": ")
            if isinstance(item, str):
                out.append(_string(item))
            elif isinstance(item, (dict, list)):
                _container(item, inner, out)
            else:
                out.append(_scalar(item))
        out.append("\n" + indent + "}")
    else:
        out.append("[")
        for item in value:
            out.append(separator)
            separator = ",\n" + inner
            if isinstance(item, str):
                out.append(_string(item))
            elif isinstance(item, (dict, list)):
                _container(item, inner, out)
            else:
                out.append(_scalar(item))
        out.append("\n" + indent + "]")


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        if value != value:
            return "NaN"
        if value in (float("inf"), float("-inf")):
            return "Infinity" if value > 0 else "-Infinity"
        return float.__repr__(value)
    raise TypeError(f"not decoded JSON: {type(value).__name__}")
