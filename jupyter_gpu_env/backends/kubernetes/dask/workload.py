"""Pure: a Dask cluster as one Kueue workload, the Kubernetes shape of "one allocation".

One Indexed batch/v1 Job of ``spec.together + 1`` pods: Kueue admits it as one Workload (one PodSet,
all its pods or none), so the scheduler and its first workers wait in the LocalQueue once and start
together. Pod 0 runs the scheduler (the keeper preloaded), pods 1..N the workers of
:func:`..spec.together_args` (no nanny, no ``--lifetime``), named ``<cluster>-<index>``; the Job's
``activeDeadlineSeconds`` is the cluster's walltime, so they end together. A worker that fails fails
its index alone (``backoffLimitPerIndex: 0``): the keeper replaces it with a worker Job of its own, as
it makes any worker beyond the workload. The scheduler's Service selects pod 0 by the completion-index
label the Job controller puts on each pod.

Every pod has the workers' requests (one template), so the workload is built only for workers without
GPUs (:meth:`..launcher.KubeLauncher.together`): a scheduler must not hold a GPU. Needs Kubernetes 1.29 or
later (``backoffLimitPerIndex``, the pod's index label).
"""

from __future__ import annotations

import shlex
from pathlib import Path

from kubernetes import client

from ....contracts.dask.spec import ClusterSpec, Network, together_args
from ...dask import Placement
from .. import objects as k8s
from . import objects

INDEX_LABEL = "batch.kubernetes.io/job-completion-index"  # set by the Job controller on each pod
INDEX_ENV = "JOB_COMPLETION_INDEX"


def worker_name(base: str, index: int) -> str:
    """The worker of pod ``index`` (1..N) of cluster ``base``: ``<base>-<index>`` (worker Jobs the keeper
    makes are ``<base>-w<n>``)."""
    return f"{base}-{index}"


def command(spec: ClusterSpec, interface: str | None) -> list[str]:
    """The pods' one command: the scheduler on index 0, else a worker named after its index."""
    base = objects.cluster_name(spec)
    scheduler = shlex.join(objects.scheduler_argv(spec, spec.idle_timeout_seconds, interface))
    worker = shlex.join(
        [objects.python_of(spec), *together_args(Path(spec.folder), spec.worker, Network.on(interface))]
    )
    script = (
        f'if [ "${INDEX_ENV}" = 0 ]; then exec {scheduler}; fi\nexec {worker} --name "{base}-${INDEX_ENV}"'
    )
    return ["/bin/sh", "-c", script]


def allocation_job(
    spec: ClusterSpec,
    placement: Placement,
    settings: k8s.K8sSettings,
    *,
    account: str,
    interface: str | None = None,
) -> client.V1Job:
    """The cluster's one Job, named as the scheduler's Job is in the other shape (so it is observed,
    held by Kueue and deleted the same way)."""
    if spec.together < 1:
        raise ValueError("a workload needs at least one worker")
    if placement.gpus or placement.mig_profile:
        raise ValueError("a workload's pods share one template: its scheduler would hold a GPU")
    name = objects.cluster_name(spec)
    labels = objects.cluster_labels(spec, settings, objects.SCHEDULER)
    job_labels = dict(labels)
    queue = objects.queue_of(placement, settings)
    if queue:
        job_labels[k8s.QUEUE_LABEL] = queue
    container = objects.container("dask", command(spec, interface), spec, placement, settings)
    container.ports = objects.scheduler_ports()  # what the Service names, on pod 0
    pods = spec.together + 1
    return client.V1Job(
        api_version="batch/v1",
        kind="Job",
        metadata=objects.meta(name, job_labels, spec, settings),
        spec=client.V1JobSpec(
            completion_mode="Indexed",
            completions=pods,
            parallelism=pods,
            backoff_limit_per_index=0,
            ttl_seconds_after_finished=settings.ttl_seconds_after_finished,
            active_deadline_seconds=spec.walltime_seconds,
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(
                    labels=labels, annotations=objects.pod_annotations(spec, settings)
                ),
                spec=objects.pod_spec(container, placement, settings, restart="Never", account=account),
            ),
        ),
    )


def allocation_service(
    spec: ClusterSpec, settings: k8s.K8sSettings, owner: dict[str, object]
) -> client.V1Service:
    """The scheduler's Service, selecting pod 0 of the workload alone."""
    service = objects.scheduler_service(spec, settings, owner=owner)
    if service.spec is not None:
        service.spec.selector = {**(service.spec.selector or {}), INDEX_LABEL: "0"}
    return service
