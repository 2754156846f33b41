"""The one Kubernetes object of a sweep: an Indexed Job, built by a pure function like every Job we make.

``completionMode: Indexed`` with ``completions`` = the runs and ``parallelism`` = the sweep's
``max_concurrent``: Kueue admits it as one Workload, the Job controller starts a pod per index, and each
pod finds its run's folder in the sweep's runs file by ``JOB_COMPLETION_INDEX`` (the position in the file,
so a retry of some runs is a new Indexed Job over just those). ``backoffLimitPerIndex: 0``: a run that
fails fails alone, is not re-run, and leaves the other runs going.

The pods carry the run's id nowhere in their labels (one template for all); the Job carries the sweep's
id (:data:`SWEEP_LABEL`), and the backend follows runs by their folders (heartbeat, status.json) and
the Job's ``failedIndexes``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from kubernetes import client

from ....models.jobs import Job
from ..entrypoint import ENTRYPOINT
from ..objects import JOB_ID_LABEL, NAME_ANNOTATION, K8sSettings, job_object, label_value

SWEEP_LABEL = "jupyter-gpu-env/group-id"  # the label keeps its first name: Jobs out there carry it
INDEX_LABEL = "batch.kubernetes.io/job-completion-index"

# Before the runner's entry point: $1 is the runs file (``INDEX JOB_ID FOLDER`` per line); find this
# pod's line, then go on as a single job's pod does with the folder as $1.
_PICK_RUN = r"""set -u
line=$(awk -v i="${JOB_COMPLETION_INDEX:-}" '$1 == i {print; exit}' "$1")
if [ -z "$line" ]; then
  echo "jupyter-gpu-env: no run for index ${JOB_COMPLETION_INDEX:-?} in $1 (is the sweep folder mounted?)" >&2
  exit 2
fi
JUPYTER_GPU_ENV_JOB_ID=$(echo "$line" | awk '{print $2}'); export JUPYTER_GPU_ENV_JOB_ID
set -- "$(echo "$line" | awk '{print $3}')" "$2"
"""


def sweep_job_name(first: Job) -> str:
    """``nb-<slug>-<sweep id>``: a DNS-1123 label of at most 56 characters."""
    base = first.name.split(" [", 1)[0]
    slug = re.sub(r"[^a-z0-9]+", "-", base.lower()).strip("-")[:38].rstrip("-")
    ident = re.sub(r"[^a-z0-9]+", "", (first.group_id or first.id).lower())[:16] or "x"
    return f"nb-{slug}-{ident}" if slug else f"nb-{ident}"


def runs_file(runs: Sequence[Job], folders: Sequence[Path]) -> str:
    """``POSITION JOB_ID FOLDER`` per run: what a pod reads to find its run."""
    lines = []
    for i, (run, folder) in enumerate(zip(runs, folders, strict=True)):
        text = str(folder)
        if not re.fullmatch(r"[0-9a-f]{12}", run.id) or re.search(r"\s", text) or not text.startswith("/"):
            raise ValueError(
                f"run folder {text!r} cannot go into the runs file: an absolute path without blanks"
            )
        lines.append(f"{i} {run.id} {text}\n")
    return "".join(lines)


def indexed_job_object(
    runs: Sequence[Job], runs_path: Path, max_concurrent: int, settings: K8sSettings
) -> client.V1Job:
    """The Indexed Job running ``runs`` (one sweep's; they share resources and runtime), whose pods
    read ``runs_path`` (a file on the shared volume, see :func:`runs_file`)."""
    if not runs:
        raise ValueError("a sweep needs at least one run")
    first = runs[0]
    name = sweep_job_name(first)
    body = job_object(first.model_copy(update={"name": first.name.split(" [", 1)[0]}), runs_path, settings)
    spec = body.spec
    assert body.metadata is not None and spec is not None and spec.template.metadata is not None
    assert spec.template.spec is not None  # job_object builds them all
    group = label_value(first.group_id or first.id)
    for meta in (body.metadata, spec.template.metadata):
        meta.labels = {**(meta.labels or {}), JOB_ID_LABEL: group, SWEEP_LABEL: group}
        meta.annotations = {**(meta.annotations or {}), NAME_ANNOTATION: first.name.split(" [", 1)[0]}
    body.metadata.name = name
    container = spec.template.spec.containers[0]
    container.command = [
        "/bin/sh",
        "-c",
        _PICK_RUN + ENTRYPOINT,
        "gpu-env-runner",
        str(runs_path),
        settings.python,
    ]
    container.env = [e for e in container.env or [] if e.name != "JUPYTER_GPU_ENV_JOB_ID"]  # set per pod
    spec.completion_mode = "Indexed"
    spec.completions = len(runs)
    spec.parallelism = max(1, min(max_concurrent, len(runs)))
    spec.backoff_limit = None  # with a limit per index, the Job's own defaults to no limit
    spec.backoff_limit_per_index = 0
    return body


def index_set(text: str | None) -> set[int]:
    """The indexes of ``completedIndexes``/``failedIndexes`` (``"1,3-5,7"``)."""
    out: set[int] = set()
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        lo, _, hi = part.partition("-")
        try:
            out.update(range(int(lo), int(hi or lo) + 1))
        except ValueError:
            continue
    return out


def position(run: Job) -> tuple[str, int] | None:
    """``(Indexed Job name, index)`` from a run's ``backend_job_id`` (``NAME/INDEX``)."""
    name, _, index = (run.backend_job_id or "").partition("/")
    return (name, int(index)) if name and index.isdigit() else None
