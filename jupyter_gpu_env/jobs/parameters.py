"""A notebook's parameters, read once on the server: names, kinds, defaults and the comments beside them.

papermill's own inspection of the cell tagged ``parameters`` decides which names a notebook declares
(it is what papermill will accept); each default is then read safely, with ``ast.literal_eval`` on the
assignment's value, never executed. The kind of a parameter follows its default as written, as people
read it: ``3`` is an int, ``0.1`` a float, ``'adam'`` a str, ``True`` a bool; anything else (lists,
dicts, None, several lines of text, an expression) is a ``literal`` that takes any JSON value.

The submit dialog builds its form from :func:`inspect_notebook` and the service checks every submission
with :func:`check_values`, so the UI, the REST API and the CLI refuse the same values.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping
from typing import Any

from ..contracts.jobfiles import first_tagged_cell
from ..errors import Conflict
from ..models.notebooks import NotebookParameter, NotebookParameters, ParameterKind

# Longer default texts are not evaluated: a literal that large is data, not a parameter default.
_MAX_LITERAL = 10_000


def _language(nb: Any) -> tuple[str | None, str | None]:
    meta = nb.get("metadata") or {}
    spec = meta.get("kernelspec")
    info = meta.get("language_info")
    if spec is not None and not isinstance(spec, dict):
        raise Conflict(
            "The notebook's metadata.kernelspec is not an object: open the notebook in JupyterLab, choose "
            "its kernel and save it again.",
            reason="invalid_notebook",
        )
    spec = spec or {}
    info = info if isinstance(info, dict) else {}
    name, language = spec.get("name"), spec.get("language") or info.get("name")
    if (name is not None and not isinstance(name, str)) or (
        language is not None and not isinstance(language, str)
    ):
        raise Conflict(
            "The notebook's metadata.kernelspec names its kernel or language with something other than "
            "text: choose its kernel again in JupyterLab and save it.",
            reason="invalid_notebook",
        )
    return name, language


def notebook_kernel(nb: Any) -> str | None:
    """The kernel the notebook names in its metadata, if any (Conflict when that metadata is malformed)."""
    return _language(nb)[0] or None


def _kind(value: Any) -> ParameterKind:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str) and "\n" not in value:
        return "str"
    return "literal"


def _jsonable(value: Any) -> Any:
    """The JSON form of a Python literal (tuples as lists), or raise ValueError when it has none."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("not finite")
        return value
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: _jsonable(v) for k, v in value.items()}
    raise ValueError(f"{type(value).__name__} has no JSON form")


def _defaults(source: str) -> dict[str, str]:
    """name -> the source text of its last plain assignment, when the cell is valid Python."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    out: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            out[node.targets[0].id] = ast.get_source_segment(source, node.value) or ""
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            out[node.target.id] = ast.get_source_segment(source, node.value) or ""
    return out


def _read_default(text: str) -> tuple[ParameterKind, Any]:
    if not text or len(text) > _MAX_LITERAL:
        return "literal", None
    try:
        value = _jsonable(ast.literal_eval(text))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return "literal", None
    return _kind(value), value


def inspect_notebook(nb: Any) -> NotebookParameters:
    """What the notebook's `parameters` cell declares, by papermill's inspection and a safe reading."""
    from papermill.exceptions import PapermillException
    from papermill.translators import papermill_translators

    kernel, language = _language(nb)
    idx = first_tagged_cell(nb, "parameters")
    if idx < 0:
        return NotebookParameters(cell_index=None, inspectable=True, kernel=kernel, language=language)
    cell = nb.cells[idx]
    source = cell.get("source") or ""
    source = "".join(source) if isinstance(source, list) else str(source)
    try:
        translator = papermill_translators.find_translator(kernel, language)
        found = translator.inspect(cell)
    except (PapermillException, NotImplementedError):
        return NotebookParameters(
            cell_index=idx, inspectable=False, kernel=kernel, language=language, source=source
        )
    exact = _defaults(source) if (language or "python").lower() == "python" else {}
    params: dict[str, NotebookParameter] = {}
    for p in found:
        text = exact.get(p.name, str(p.default or "").strip())
        kind, value = _read_default(text)
        annotation = None if p.inferred_type_name in (None, "None") else str(p.inferred_type_name)
        params[p.name] = NotebookParameter(
            name=p.name,
            kind=kind,
            default=value,
            default_text=text,
            annotation=annotation,
            help=str(p.help or "").strip(),
        )
    return NotebookParameters(
        cell_index=idx,
        inspectable=True,
        kernel=kernel,
        language=language,
        source=source,
        parameters=list(params.values()),
    )


def _fits(kind: ParameterKind, value: Any) -> bool:
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "float":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "str":
        return isinstance(value, str)
    if kind == "bool":
        return isinstance(value, bool)
    return True


_A = {"int": "a whole number", "float": "a number", "str": "text", "bool": "true or false"}


def check_values(declared: NotebookParameters, values: Mapping[str, Any]) -> None:
    """Refuse (409) values for names the notebook does not declare, or of another kind than its default."""
    if not values or not declared.inspectable:
        return  # papermill cannot inspect this language; it will inject what it is given
    if declared.cell_index is None:
        raise Conflict(
            "The notebook declares no parameters: no cell is tagged `parameters`. Tag the cell that sets "
            "the defaults, or send no parameters.",
            reason="unknown_parameter",
        )
    by_name = {p.name: p for p in declared.parameters}
    unknown = [k for k in values if k not in by_name]
    if unknown:
        raise Conflict(
            f"The notebook does not declare {', '.join(map(repr, unknown))}; its `parameters` cell "
            f"declares {', '.join(by_name) or 'nothing papermill can set'}.",
            reason="unknown_parameter",
        )
    wrong = [
        f"'{name}' must be {_A[by_name[name].kind]} like its default {by_name[name].default_text}, "
        f"not {_shown(value)}"
        for name, value in values.items()
        if not _fits(by_name[name].kind, value)
    ]
    if wrong:
        raise Conflict("; ".join(wrong)[:1000] + ".", reason="parameter_type")


def _shown(value: Any) -> str:
    import json

    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."
