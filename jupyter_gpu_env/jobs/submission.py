"""Checks a submission passes before anything is written (path, notebook, parameters, runtime), and
the writing of its folder.

Plain functions on paths and notebooks, run in a worker thread by the service (they read files and
import papermill, which takes a second the first time).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..backends.base import Backend
from ..contracts import jobfiles
from ..errors import Conflict, FileRefused, InvalidRequest, NotFound, TooLarge
from ..inputs import check_tree, resolve_in_root
from ..models.common import describe_validation_error
from ..models.jobs import MAX_NAME, Job, JobRequest
from ..models.resources import format_time_limit
from ..models.sweeps import JobGroup
from ..system import untrusted
from .parameters import check_values, inspect_notebook, notebook_kernel
from .sweeps.plan import label, run_name

MAX_NOTEBOOK_BYTES = 100 << 20  # a snapshot is copied into every job; refuse what no one means to run


def parse_request(data: JobRequest | Mapping[str, Any]) -> JobRequest:
    """A validated request; a dict that does not validate is an :class:`InvalidRequest` naming each field.

    Strict, as the REST API parses bodies: ``"4"`` is not a number of CPUs.
    """
    if isinstance(data, JobRequest):
        return data
    check_tree(data)  # the rules every REST body obeys (no NUL, no lone surrogate, bounded depth)
    try:
        return JobRequest.model_validate(data, strict=True)
    except ValidationError as e:
        raise InvalidRequest(describe_validation_error(e, "Invalid job request")) from e


def resolve_notebook(root: Path, notebook_path: str) -> Path:
    """The notebook's real path, which must be an existing ``.ipynb`` file inside ``root``.

    Symlinks are resolved before the check, so a link inside the root cannot lead outside it.
    """
    real = resolve_in_root(root, notebook_path, "notebook_path", "notebook")
    if not real.name.lower().endswith(".ipynb"):  # as the schema's pattern: '.ipynb' alone is one too
        raise InvalidRequest(f"'{notebook_path}' is not a notebook (.ipynb).")
    if not real.is_file():
        raise NotFound(
            f"There is no notebook at '{notebook_path}'; save it first.", reason="notebook_not_found"
        )
    return real


def read_notebook(path: Path, snapshot: bytes | None) -> tuple[bytes, Any]:
    """The snapshot's bytes (``snapshot``, else the file) and the notebook parsed from them."""
    import nbformat

    if snapshot is None:
        try:  # never waits on a FIFO put where the notebook was, never reads past the bound
            snapshot = untrusted.read_regular_file(path, MAX_NOTEBOOK_BYTES, name=path.name)
        except FileRefused as e:
            if e.reason == "file_too_large":
                raise TooLarge(f"The notebook is larger than {MAX_NOTEBOOK_BYTES >> 20} MiB.") from None
            raise Conflict(e.message, reason="invalid_notebook") from None
    elif len(snapshot) > MAX_NOTEBOOK_BYTES:
        raise TooLarge(f"The notebook is larger than {MAX_NOTEBOOK_BYTES >> 20} MiB.")
    try:
        nb = nbformat.reads(snapshot.decode("utf-8"), as_version=4)  # type: ignore[no-untyped-call]  # nbformat has no type hints
    except Exception as e:  # nbformat raises several unrelated types for a broken file
        raise Conflict(
            f"'{path.name}' is not a readable notebook: {type(e).__name__}: {e}", reason="invalid_notebook"
        ) from e
    if not isinstance(nb.get("cells"), list) or not isinstance(nb.get("metadata"), dict):
        raise Conflict(
            f"'{path.name}' is not a readable notebook: it has no cells.", reason="invalid_notebook"
        )
    return snapshot, nb


def warm_up() -> None:
    """Import papermill and compile nbformat's validator now, not in the first submission's request."""
    import nbformat

    nb = nbformat.v4.new_notebook()  # type: ignore[no-untyped-call]  # nbformat has no type hints
    cell = nbformat.v4.new_code_cell("x = 1")  # type: ignore[no-untyped-call]  # nbformat has no type hints
    cell.metadata["tags"] = ["parameters"]
    nb.cells.append(cell)
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Python 3"}
    text: str = nbformat.writes(nb)  # type: ignore[no-untyped-call]  # nbformat has no type hints
    _, parsed = read_notebook(Path("warm-up.ipynb"), text.encode())
    check_parameters(parsed, {"x": 2})


def check_parameters(nb: Any, parameters: Mapping[str, Any]) -> None:
    """Refuse parameters the notebook does not declare, or whose values are not of their default's kind."""
    if parameters:
        check_values(inspect_notebook(nb), parameters)


def output_name(name: str, parameters: Mapping[str, Any]) -> str:
    """The executed notebook's file name: the job's name and its parameters (``train-alpha-0.1.ipynb``),
    so downloaded outputs of many runs keep telling which is which. A sweep run's name holds its
    varied values already."""
    shown = name if "[" in name or not parameters else f"{name} {label(parameters, list(parameters), 60)}"
    stem = jobfiles.slug(shown, 80)
    return f"{stem}-output.ipynb" if stem in ("input", "job") else f"{stem}.ipynb"


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
            raise NotFound(f"Unknown environment '{request.environment}'.", reason="env_not_found")
        if not (Path(prefix) / "bin" / "python").exists():
            raise Conflict(
                f"Environment '{request.environment}' has no Python at {prefix}/bin/python.",
                reason="no_python",
            )
        return {"environment": {"name": request.environment, "prefix": str(prefix)}}
    if request.image:
        path = images(request.image)
        if not path:
            raise NotFound(f"Unknown image '{request.image}'.", reason="image_not_found")
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
        raise Conflict("The notebook names no kernel; choose a kernel or an environment.", reason="no_kernel")
    known = set(kernel_names())
    if kernel not in known:
        which = "Kernel" if request.kernel else "The notebook's kernel"
        raise NotFound(
            f"{which} '{kernel}' is not installed on this server; kernels: {', '.join(sorted(known)) or 'none'}.",
            reason="kernel_not_found",
        )
    return {"kernel": kernel}


def build_folder(folder: Path, raw: bytes | None, spec: dict[str, Any]) -> None:
    """Write the job folder (snapshot and job.json; job.json alone for a kernel session, ``raw`` None)
    aside, then rename it into place.

    A crash leaves a ``.tmp-`` folder that the service's start removes, never a job folder without
    its job.json.
    """
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = folder.with_name(f".tmp-{folder.name}")
    tmp.mkdir()
    try:
        if raw is not None:
            (tmp / jobfiles.INPUT).write_bytes(raw)
        jobfiles.write_json_atomic(tmp / jobfiles.JOB_JSON, spec, durable=True)
        tmp.rename(folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def request_of(
    job: Job,
    parameters: Mapping[str, Any] | None = None,
    sweep: JobGroup | None = None,
    changes: Mapping[str, Any] | None = None,
) -> JobRequest:
    """The request that makes ``job`` again, with ``parameters`` over its own; a run of the sweep
    ``sweep`` is named as a run with those values would be. ``changes`` (a :class:`RerunRequest`'s other
    fields) replace the name, backend, queue, resources (whole) or runtime; a new backend without a queue
    takes its default queue."""
    res = job.resources
    resources: dict[str, Any] = {
        "cpus": res.cpus,
        "memory": res.memory_bytes,
        "gpus": res.gpus,
        "mig_profile": res.mig_profile,
        "time_limit": format_time_limit(res.time_limit_seconds) if res.time_limit_seconds else None,
    }
    values = {**job.parameters, **(parameters or {})}
    if changes and changes.get("name"):
        name = str(changes["name"])
    elif sweep is not None:
        name = run_name(sweep.name, values, sweep.varied)
    else:  # a record from before names were kept within the limit is shortened to fit
        name = job.name if len(job.name) <= MAX_NAME else job.name[: MAX_NAME - 1] + "…"
    runtime = (
        {"environment": job.environment} if job.environment else {"image": job.image} if job.image else {}
    )
    if not runtime and job.kernel:
        runtime = {"kernel": job.kernel}
    changes = dict(changes or {})
    chosen = {k: changes[k] for k in ("kernel", "environment", "image") if changes.get(k) is not None}
    backend = changes.get("backend") or job.backend
    queue = changes["queue"] if "queue" in changes else job.queue if backend == job.backend else None
    if "resources" in changes:
        resources = dict(changes["resources"] or {})
    return parse_request(
        {
            "notebook_path": job.notebook_path,
            "backend": backend,
            **(chosen or runtime),
            "parameters": values,
            "resources": {k: v for k, v in resources.items() if v is not None},
            "queue": queue,
            "name": name,
            "notify": job.notify.model_dump(exclude_none=True) if job.notify else None,
            "priority": changes.get("priority") or job.priority,
        }
    )
