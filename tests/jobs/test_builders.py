"""No user value can break a generated line: property-based tests of the pure builders.

The sbatch script and the Kubernetes Job are built from a job record whose user fields (name, notebook
path, queue, MIG profile) are arbitrary text here, as if a record had bypassed the API's validation.
Whatever the text, a builder either refuses it (ValueError) or produces exactly the shape it produces
for harmless values: the same lines, the same ``#SBATCH`` directives, the same shell words per line;
the same object fields and list lengths, and labels Kubernetes accepts.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jupyter_gpu_env.backends.kubernetes import checks, objects
from jupyter_gpu_env.backends.slurm import script
from jupyter_gpu_env.models.jobs import Job
from jupyter_gpu_env.models.resources import JobResources

FOLDER = Path("/shared/jobs/run-0123456789ab")
TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=80)
HARMLESS = {
    "name": "analysis",
    "notebook_path": "work/analysis.ipynb",
    "queue": "gpu",
    "mig_profile": "1g.10gb",
}
RELAXED = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def record(name: str, notebook_path: str, queue: str | None, mig_profile: str | None, cpus: int) -> Job:
    """A job record built without validation: what the builders must survive on their own."""
    resources = JobResources.model_construct(
        cpus=cpus, memory_bytes=4 << 30, gpus=None, mig_profile=mig_profile, time_limit_seconds=3600
    )
    return Job.model_construct(
        id="0123456789ab",
        name=name,
        backend="x",
        state="queued",
        notebook_path=notebook_path,
        job_dir=str(FOLDER),
        input_path="",
        output_path="",
        log_path="",
        parameters={},
        resources=resources,
        queue=queue,
        created_at=0.0,
    )


def _shape_of_script(text: str) -> list[tuple[str, int]]:
    """Per line: the directive name of a ``#SBATCH`` line, else the number of shell words."""
    shape = []
    for line in text.splitlines():
        if line.startswith("#SBATCH "):
            shape.append(("#SBATCH", line.split()[1].split("=", 1)[0]))
        elif line.startswith("#") or not line.strip():
            shape.append(("comment", 0))
        else:
            shape.append(("words", len(shlex.split(line))))
    return shape


def harmless_like(queue, mig, cpus):
    """The harmless record with the same optional fields set as the one under test."""
    return record(
        HARMLESS["name"],
        HARMLESS["notebook_path"],
        HARMLESS["queue"] if queue is not None else None,
        HARMLESS["mig_profile"] if mig is not None else None,
        cpus,
    )


@given(name=TEXT, notebook=TEXT, queue=st.none() | TEXT, mig=st.none() | TEXT, cpus=st.integers(1, 1024))
@RELAXED
def test_no_user_value_changes_the_shape_of_the_sbatch_script(name, notebook, queue, mig, cpus):
    options = script.SbatchOptions(python="/opt/conda/bin/python", partition=queue, account="proj")
    harmless = harmless_like(queue, mig, cpus)
    baseline = script.sbatch_script(
        harmless,
        FOLDER,
        script.SbatchOptions(python=options.python, partition=harmless.queue, account="proj"),
    )
    try:
        text = script.sbatch_script(record(name, notebook, queue, mig, cpus), FOLDER, options)
    except ValueError:
        return  # refused: nothing was generated
    assert _shape_of_script(text) == _shape_of_script(baseline)
    assert text.count("\n") == baseline.count("\n")


def _shape_of_object(value: Any) -> Any:
    """The fields of an object tree, with list lengths, without the values."""
    if isinstance(value, dict):
        return {k: _shape_of_object(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shape_of_object(v) for v in value]
    return type(value).__name__


@given(name=TEXT, notebook=TEXT, queue=st.none() | TEXT, mig=st.none() | TEXT, cpus=st.integers(1, 1024))
@RELAXED
def test_no_user_value_changes_the_shape_of_the_kubernetes_job(name, notebook, queue, mig, cpus):
    config = objects.K8sSettings(image="registry.example/notebook:1", user="alice")
    harmless = harmless_like(queue, mig, cpus)
    baseline = objects.as_dict(objects.job_object(harmless, FOLDER, config))
    try:
        built = objects.as_dict(objects.job_object(record(name, notebook, queue, mig, cpus), FOLDER, config))
    except ValueError:
        return
    assert _shape_of_object(built) == _shape_of_object(baseline)
    assert checks.problems(built) == []
    command = built["spec"]["template"]["spec"]["containers"][0]["command"]
    assert command == baseline["spec"]["template"]["spec"]["containers"][0]["command"]
