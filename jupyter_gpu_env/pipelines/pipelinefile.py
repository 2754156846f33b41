"""``*.pipeline.yaml``: a pipeline kept next to its notebooks (in git), as ``POST pipelines`` takes it.

The file's notebook paths are relative to the file's own folder, so a folder of notebooks and its
pipeline file can be moved or cloned anywhere. ``nodes`` is a list of nodes with their ``id``, or a
mapping from id to node (the shorter form to write)::

    name: nightly
    nodes:
      prepare: {notebook_path: prepare.ipynb}
      train:
        notebook_path: train.ipynb
        after: [prepare]
        sweep: {lr: [0.1, 0.01, 0.001]}
      report: {notebook_path: report.ipynb, after: [train]}
"""

from __future__ import annotations

import posixpath
from pathlib import Path
from typing import Any

from ..errors import FileRefused, InvalidRequest, NotFound
from ..inputs import resolve_in_root
from ..models.automation.pipelines import PipelineRequest
from ..system import untrusted
from ..system.boundedyaml import YamlTooBig, load_yaml
from .build import parse_request

SUFFIXES = (".pipeline.yaml", ".pipeline.yml")
MAX_FILE = 1 << 20
MAX_DEPTH = 32
MAX_VALUES = 200_000


def is_pipeline_file(name: str) -> bool:
    return name.lower().endswith(SUFFIXES)


def read_pipeline_file(root: Path, path: str) -> PipelineRequest:
    """The pipeline that the file at ``path`` (under ``root``) describes, checked as a request is; a
    400 saying what is wrong with the file (where YAML can say, its line)."""
    real = resolve_in_root(root, path, "path", "pipeline file")
    if not is_pipeline_file(real.name):
        raise InvalidRequest(f"'{path}' is not a pipeline file: its name must end in .pipeline.yaml.")
    if not real.is_file():
        raise NotFound(f"There is no pipeline file at '{path}'.", reason="file_not_found")
    try:
        text = untrusted.read_regular_file(real, MAX_FILE, name=real.name).decode("utf-8")
    except FileRefused as e:
        raise InvalidRequest(f"'{path}' cannot be read: {e.message}", reason=e.reason) from None
    except UnicodeDecodeError:
        raise InvalidRequest(f"'{path}' is not UTF-8 text.") from None
    return parse_text(text, path)


def parse_text(text: str, path: str) -> PipelineRequest:
    """The request a pipeline file's ``text`` holds; ``path`` (under the server's root) places its
    notebooks and names it."""
    import yaml  # type: ignore[import-untyped]

    try:
        data: Any = load_yaml(text, MAX_DEPTH, MAX_VALUES)
    except YamlTooBig as e:
        raise InvalidRequest(f"'{path}' is too large a pipeline file: {e}.") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise InvalidRequest(
            f"'{path}' is not valid YAML{where}: {getattr(e, 'problem', None) or e}."
        ) from None
    if not isinstance(data, dict):
        raise InvalidRequest(f"'{path}' must be a mapping with `name` and `nodes`.")
    data = dict(data)
    stem = posixpath.basename(path)
    for suffix in SUFFIXES:
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
    data.setdefault("name", stem or "pipeline")
    nodes = data.get("nodes")
    if isinstance(nodes, dict):  # id: node
        nodes = [
            {"id": key, **value} if isinstance(value, dict) else {"id": key, "notebook_path": value}
            for key, value in nodes.items()
        ]
    if isinstance(nodes, list):
        folder = posixpath.dirname(path.replace("\\", "/"))
        data["nodes"] = [_placed(node, folder) for node in nodes]
    data["file_path"] = path
    try:
        return parse_request(data)
    except InvalidRequest as e:
        raise InvalidRequest(f"'{path}': {e.message}", reason=e.reason, details=e.details) from None


def _placed(node: Any, folder: str) -> Any:
    """The node with its notebook's path made relative to the server's root, not the file's folder."""
    if isinstance(node, dict) and isinstance(node.get("notebook_path"), str):
        notebook = node["notebook_path"]
        if not posixpath.isabs(notebook):
            node = {**node, "notebook_path": posixpath.normpath(posixpath.join(folder, notebook))}
    return node
