"""A batch kernel's kernelspec, built from its checked request (pure): the name, the words the Launcher
shows, and the provisioner's configuration, which carries the job request the kernel is started with.

The kernelspec is the batch kernel's only record: Jupyter lists it (``GET api/kernelspecs``, the Launcher)
and its provisioner starts it from what it holds, so there is no second copy to drift. Its argv is what
the kernel runs on the node, for the reader; the kernel host starts the kernel from the job's runtime.
"""

from __future__ import annotations

import re
import time
from typing import Any

from ..gpu.idle import duration
from ..kernelspecs import KERNEL_PREFIX, METADATA_KEY
from ..models.kernels.batch import BatchKernel, BatchKernelRequest
from ..models.resources import JobResources, parse_time_limit

PROVISIONER = "gpu-env-batch"
NAME_PREFIX = KERNEL_PREFIX + "batch-"
KIND = "batch_kernel"  # metadata.jupyter_gpu_env.kind of a batch kernelspec
_BACKEND_WORDS = {"slurm": "SLURM", "kubernetes": "Kubernetes", "local": "this machine"}


def walltime_seconds(request: BatchKernelRequest, default_minutes: int) -> int:
    given = request.time_limit
    return parse_time_limit(given) if given is not None else default_minutes * 60


def time_text(seconds: int) -> str:
    """SLURM's ``D-HH:MM:SS``, exact to the second (a request's time limit takes it as given)."""
    days, rest = divmod(seconds, 86400)
    return f"{days}-{rest // 3600:02d}:{rest // 60 % 60:02d}:{rest % 60:02d}"


def same_job(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two batch kernelspecs start the same job (their names and words aside)."""
    return bool(_job_of(a)) and _job_of(a) == _job_of(b)


def _job_of(spec: dict[str, Any]) -> Any:
    return ((spec.get("metadata") or {}).get("kernel_provisioner") or {}).get("config", {}).get("session")


def where_words(backend_kind: str, backend: str, queue: str | None, resources: JobResources) -> str:
    """'SLURM gpu · 1g.10gb · 2 h': where the kernel runs, what it holds, for how long."""
    place = _BACKEND_WORDS.get(backend_kind, backend)
    if backend_kind in _BACKEND_WORDS and backend != backend_kind:
        place = f"{place} ({backend})"
    parts = [f"{place} {queue}" if queue else place]
    if resources.mig_profile:
        parts.append(resources.mig_profile)
    elif resources.gpus:
        parts.append(f"{resources.gpus} GPU" + ("s" if resources.gpus > 1 else ""))
    if resources.time_limit_seconds:
        parts.append(duration(resources.time_limit_seconds))
    return " · ".join(parts)


def runtime_words(request: BatchKernelRequest, base_display: str | None) -> str:
    if request.environment:
        return f"Python ({request.environment})"
    if request.image:
        return f"Python (image {request.image})"
    return base_display or str(request.kernel)


def kernel_name(request: BatchKernelRequest, backend_kind: str, taken: set[str]) -> str:
    """``gpu-env-batch-<what>-<where>``, lower case, made unique against ``taken``."""
    what = request.environment or request.image or request.kernel or "kernel"
    where = "-".join(p for p in (request.backend, request.queue, request.resources.mig_profile) if p)
    slug = re.sub(r"[^a-z0-9._-]+", "-", f"{what}-{where}".lower()).strip("-.")[:100] or "kernel"
    name, n = NAME_PREFIX + slug, 2
    while name in taken:
        name, n = f"{NAME_PREFIX}{slug}-{n}", n + 1
    return name


def kernelspec(
    request: BatchKernelRequest,
    *,
    backend_kind: str,
    resources: JobResources,
    argv: list[str],
    language: str,
    interrupt_mode: str,
    base_display: str | None,
) -> dict[str, Any]:
    """The kernel.json of a batch kernel. ``resources`` is the request's, normalized, walltime included.
    How the kernel's host listens is the site's option, decided at each start (``service.open``)."""
    where = where_words(backend_kind, request.backend, request.queue, resources)
    display = request.display_name or f"{runtime_words(request, base_display)} · {where}"
    job: dict[str, Any] = {
        "backend": request.backend,
        "resources": {k: v for k, v in request.resources.model_dump().items() if v is not None},
        "priority": request.priority,
    }
    job["resources"]["time_limit"] = time_text(resources.time_limit_seconds or 60)
    for field in ("environment", "kernel", "image", "queue"):
        if getattr(request, field):
            job[field] = getattr(request, field)
    return {
        "argv": argv,
        "display_name": display,
        "language": language,
        "interrupt_mode": interrupt_mode,
        "env": {},
        "metadata": {
            "debugger": False,  # the debugger's files would be on the node
            "kernel_provisioner": {
                "provisioner_name": PROVISIONER,
                "config": {"session": job},
            },
            METADATA_KEY: {
                "kind": KIND,
                "where": where,
                "backend_kind": backend_kind,
                "created_at": time.time(),
            },
        },
    }


def batch_kernel(name: str, spec: dict[str, Any]) -> BatchKernel | None:
    """The registered batch kernel a kernelspec describes; None when it is not one of ours, or damaged."""
    meta = (spec.get("metadata") or {}).get(METADATA_KEY) or {}
    provisioner = (spec.get("metadata") or {}).get("kernel_provisioner") or {}
    job = (provisioner.get("config") or {}).get("session")
    if meta.get("kind") != KIND or not isinstance(job, dict):
        return None
    try:
        request = BatchKernelRequest.model_validate(job)
        return BatchKernel(
            kernel_name=name,
            display_name=str(spec.get("display_name") or name),
            where=str(meta.get("where") or ""),
            backend=request.backend,
            environment=request.environment,
            kernel=request.kernel,
            image=request.image,
            resources=request.resources.normalized(),
            queue=request.queue,
            priority=request.priority,
            created_at=float(meta.get("created_at") or 0.0),
        )
    except ValueError:
        return None
