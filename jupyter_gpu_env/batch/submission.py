"""Checks a submission passes before anything is written (path, notebook, parameters, runtime), and
the writing of its folder.

Plain functions on paths and notebooks, run in a worker thread by the service (they read files and
import papermill, which takes a second the first time).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import Conflict, InvalidRequest
from ..models.jobs import JobRequest
from . import jobfiles as jf
from .base import Backend
from .jobfiles import first_tagged_cell

MAX_NOTEBOOK_BYTES = 100 << 20  # a snapshot is copied into every job; refuse what no one means to run


def parse_request(data: JobRequest | Mapping[str, Any]) -> JobRequest:
    """A validated request; a dict that does not validate is an :class:`InvalidRequest` naming each field."""
    if isinstance(data, JobRequest):
        return data
    try:
        return JobRequest.model_validate(data)
    except ValidationError as e:
        parts = []
        for err in e.errors():
            where = ".".join(str(p) for p in err.get("loc", ())) or "request"
            msg = str(err.get("msg", "")).removeprefix("Value error, ")
            parts.append(f"{where}: {msg}")
        raise InvalidRequest("Invalid job request: " + "; ".join(parts)) from e


def resolve_notebook(root: Path, notebook_path: str) -> Path:
    """The notebook's real path, which must be an existing ``.ipynb`` file inside ``root``.

    Symlinks are resolved before the check, so a link inside the root cannot lead outside it.
    """
    if "\x00" in notebook_path:
        raise InvalidRequest("notebook_path contains a NUL character.")
    rel = notebook_path.replace("\\", "/")
    root = root.resolve()
    candidate = Path(rel) if os.path.isabs(rel) else root / rel.lstrip("/")
    try:
        real = candidate.resolve(strict=False)
    except (OSError, RuntimeError) as e:
        raise InvalidRequest(f"notebook_path '{notebook_path}' cannot be resolved: {e}") from e
    if real != root and root not in real.parents:
        raise InvalidRequest(f"notebook_path '{notebook_path}' is outside the server's root directory.")
    if real.suffix.lower() != ".ipynb":
        raise InvalidRequest(f"'{notebook_path}' is not a notebook (.ipynb).")
    if not real.is_file():
        raise InvalidRequest(f"There is no notebook at '{notebook_path}'; save it first.")
    return real


def read_notebook(path: Path, snapshot: bytes | None) -> tuple[bytes, Any]:
    """The snapshot's bytes (``snapshot``, else the file) and the notebook parsed from them."""
    import nbformat

    if snapshot is None:
        if path.stat().st_size > MAX_NOTEBOOK_BYTES:
            raise InvalidRequest(f"The notebook is larger than {MAX_NOTEBOOK_BYTES >> 20} MiB.")
        snapshot = path.read_bytes()
    elif len(snapshot) > MAX_NOTEBOOK_BYTES:
        raise InvalidRequest(f"The notebook is larger than {MAX_NOTEBOOK_BYTES >> 20} MiB.")
    try:
        nb = nbformat.reads(snapshot.decode("utf-8"), as_version=4)
    except Exception as e:  # nbformat raises several unrelated types for a broken file
        raise InvalidRequest(f"'{path.name}' is not a readable notebook: {type(e).__name__}: {e}") from e
    return snapshot, nb


def notebook_kernel(nb: Any) -> str | None:
    spec = nb.metadata.get("kernelspec") or {}
    return spec.get("name") or None


def declared_parameters(nb: Any) -> list[str] | None:
    """Names the notebook's `parameters` cell assigns, by papermill's own inspection.

    ``[]`` when there is no such cell; None when papermill cannot inspect this language.
    """
    from papermill.exceptions import PapermillException
    from papermill.translators import papermill_translators

    idx = first_tagged_cell(nb, "parameters")
    if idx < 0:
        return []
    spec = nb.metadata.get("kernelspec") or {}
    language = spec.get("language") or (nb.metadata.get("language_info") or {}).get("name")
    try:
        translator = papermill_translators.find_translator(spec.get("name"), language)
        return [p.name for p in translator.inspect(nb.cells[idx])]
    except (PapermillException, NotImplementedError):
        return None


_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def check_parameters(nb: Any, parameters: Mapping[str, Any]) -> None:
    """Refuse parameters the notebook does not declare, listing those it does."""
    if not parameters:
        return
    bad_names = [k for k in parameters if not _IDENT.match(k)]
    if bad_names:
        raise InvalidRequest(f"Parameter names must be identifiers: {', '.join(map(repr, bad_names))}.")
    declared = declared_parameters(nb)
    if declared is None:
        return  # papermill cannot inspect this language; it will inject what it is given
    if not declared:
        raise InvalidRequest(
            "The notebook declares no parameters: no cell is tagged `parameters`. Tag the cell that sets "
            "the defaults, or send no parameters."
        )
    unknown = [k for k in parameters if k not in declared]
    if unknown:
        raise InvalidRequest(
            f"The notebook does not declare {', '.join(map(repr, unknown))}; its `parameters` cell "
            f"declares {', '.join(declared)}.",
            reason="unknown_parameter",
        )


def slug(text: str, limit: int = 40) -> str:
    """A folder-name-safe form of a job's name."""
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-._")
    return (s[:limit].rstrip("-._") or "job").lower()


def resolve_runtime(
    request: JobRequest,
    nb: Any,
    backend: Backend,
    *,
    kernel_names: Callable[[], Iterable[str]],
    environments: Callable[[str], str | None],
    images: Callable[[str], str | None],
    image_runtime: Callable[[], str | None],
) -> dict[str, Any]:
    """What job.json says to run in: ``{"kernel": name}``, ``{"environment": {name, prefix}}`` or an image."""
    if request.environment:
        prefix = environments(request.environment)
        if not prefix:
            raise InvalidRequest(f"Unknown environment '{request.environment}'.")
        if not (Path(prefix) / "bin" / "python").exists():
            raise InvalidRequest(f"Environment '{request.environment}' has no Python at {prefix}/bin/python.")
        return {"environment": {"name": request.environment, "prefix": str(prefix)}}
    if request.image:
        path = images(request.image)
        if not path:
            raise InvalidRequest(f"Unknown image '{request.image}'.")
        if not image_runtime():
            raise Conflict(
                "Running a notebook in a packed image needs apptainer or squashfuse on the machine that runs "
                "it; neither is installed here. Choose its environment instead.",
                reason="image_runtime_missing",
            )
        if not backend.info().supports_images:
            raise Conflict(
                f"The '{backend.name}' backend cannot run packed images yet. Choose its environment instead.",
                reason="images_unsupported",
            )
        return {"image": {"name": request.image, "path": str(path)}}
    kernel = request.kernel or notebook_kernel(nb)
    if not kernel:
        raise InvalidRequest("The notebook names no kernel; choose a kernel or an environment.")
    known = set(kernel_names())
    if kernel not in known:
        which = "Kernel" if request.kernel else "The notebook's kernel"
        raise InvalidRequest(
            f"{which} '{kernel}' is not installed on this server; kernels: {', '.join(sorted(known)) or 'none'}."
        )
    return {"kernel": kernel}


def build_folder(folder: Path, raw: bytes, spec: dict[str, Any]) -> None:
    """Write the job folder (snapshot and job.json) aside, then rename it into place.

    A crash leaves a ``.tmp-`` folder that the service's start removes, never a job folder without
    its job.json.
    """
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = folder.with_name(f".tmp-{folder.name}")
    tmp.mkdir()
    try:
        (tmp / jf.INPUT).write_bytes(raw)
        jf.write_json_atomic(tmp / jf.JOB_JSON, spec, durable=True)
        tmp.rename(folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
