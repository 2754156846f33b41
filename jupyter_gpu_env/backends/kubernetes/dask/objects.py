"""Pure: the Kubernetes objects of a Dask cluster, built with the official client's models as the batch
Job builder builds a job's (:mod:`..objects`), so each is validated offline.

Two shapes, both running our scheduler command (:func:`..spec.scheduler_args`, the keeper preloaded) from
the cluster folder on the volume the backend's jobs mount, and workers running :func:`..spec.worker_args`:

- with the dask-kubernetes operator: one ``DaskCluster`` (kubernetes.dask.org/v1), its scheduler's Service
  on the operator's fixed ports, its default worker group started at 0 replicas: the keeper patches the
  replicas (``operator`` pool);
- without it: the scheduler a batch/v1 Job admitted by Kueue (the backend's queue label) plus a Service,
  and a worker Job manifest (``pool["job"]``) the keeper creates once per worker (``kubernetes`` pool).

Every object and pod carries :func:`cluster_labels`: ``app.kubernetes.io/managed-by``, the user, the
backend and :data:`CLUSTER_LABEL` (the cluster's id), so a cluster's objects are found, and deleted, by
label. Names are ``dask-<slug>-<id>`` (at most 30 characters): the operator's derived names
(``<name>-default-worker-<10 hex>``) and our worker Jobs' (``<name>-w<n>``) stay within 63.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kubernetes import client

from ....contracts.dask.spec import ClusterSpec, Network, scheduler_args, scheduler_env
from ....models.resources import MIG_PROFILE_RE
from ...dask import Placement
from .. import objects as k8s

CLUSTER_LABEL = "jupyter-gpu-env/dask-cluster"
SCHEDULER = "dask-scheduler"  # app.kubernetes.io/component of the scheduler's objects
WORKER = "dask-worker"
COMM_PORT = 8786  # the operator's ports; fixed, so that a Service can name them
DASHBOARD_PORT = 8787
OPERATOR_GROUP = "kubernetes.dask.org"
OPERATOR_VERSION = "v1"
OPERATOR_WORKER_NAME = "$(DASK_WORKER_NAME)"  # the operator sets it per worker; Kubernetes expands $(VAR)
IDLE_MARGIN = 300  # the scheduler's own idle timeout under the operator, beyond the operator's
MAX_NAME = 30


def cluster_name(spec: ClusterSpec) -> str:
    """``dask-<slug>-<id>``: a DNS-1035 label of at most 30 characters, unique by the cluster id."""
    ident = re.sub(r"[^a-z0-9]+", "", spec.id.lower())[:12] or "x"
    room = MAX_NAME - len("dask--") - len(ident)
    slug = re.sub(r"[^a-z0-9]+", "-", spec.name.lower()).strip("-")[:room].strip("-")
    return f"dask-{slug}-{ident}" if slug else f"dask-{ident}"


def worker_job_name(base: str, number: int) -> str:
    """The ``number``-th worker Job of cluster ``base``: ``<base>-w<n>``."""
    return f"{base}-w{number}"


def cluster_labels(
    spec: ClusterSpec, settings: k8s.K8sSettings, component: str | None = None
) -> dict[str, str]:
    labels = {
        **settings.labels,
        k8s.MANAGED_BY_KEY: k8s.MANAGED_BY,
        k8s.USER_LABEL: k8s.label_value(settings.user),
        k8s.BACKEND_LABEL: k8s.label_value(settings.backend_name),
        CLUSTER_LABEL: k8s.label_value(spec.id),
    }
    if component:
        labels[k8s.COMPONENT_KEY] = component
    return labels


def selector(settings: k8s.K8sSettings, cluster_id: str | None = None, component: str | None = None) -> str:
    """The label selector of this user's Dask objects: one cluster's, or every cluster's."""
    parts = [
        f"{k8s.MANAGED_BY_KEY}={k8s.MANAGED_BY}",
        f"{k8s.USER_LABEL}={k8s.label_value(settings.user)}",
        f"{CLUSTER_LABEL}={k8s.label_value(cluster_id)}" if cluster_id else CLUSTER_LABEL,
    ]
    if component:
        parts.append(f"{k8s.COMPONENT_KEY}={component}")
    return ",".join(parts)


def queue_of(placement: Placement, settings: k8s.K8sSettings) -> str | None:
    queue = placement.queue or settings.local_queue or None
    if queue is not None and not (k8s.DNS1123_SUBDOMAIN_RE.fullmatch(queue) and len(queue) <= 63):
        raise ValueError(f"Kueue queue {queue!r} is not a valid LocalQueue name")
    return queue


# ----- pods -----


def _resources(placement: Placement | None, settings: k8s.K8sSettings) -> client.V1ResourceRequirements:
    """A worker's requests (limits too, CPU unless CPU limits are off; GPUs requests == limits); the
    scheduler's (``placement`` None) the backend's defaults, and no GPU."""
    requests: dict[str, str] = {}
    limits: dict[str, str] = {}
    cpus = (placement.cpus if placement else None) or settings.default_cpus
    if cpus:
        requests["cpu"] = str(cpus)
        if settings.cpu_limit:
            limits["cpu"] = str(cpus)
    memory = (placement.memory_bytes if placement else None) or settings.default_memory_bytes
    if memory:
        requests["memory"] = limits["memory"] = k8s.quantity(memory)
    if placement is not None and placement.mig_profile:
        if not MIG_PROFILE_RE.fullmatch(placement.mig_profile):
            raise ValueError(f"MIG profile {placement.mig_profile!r} is not valid")
        requests[k8s.mig_resource(placement.mig_profile)] = limits[
            k8s.mig_resource(placement.mig_profile)
        ] = "1"
    elif placement is not None and placement.gpus:
        requests[k8s.GPU_RESOURCE] = limits[k8s.GPU_RESOURCE] = str(placement.gpus)
    return client.V1ResourceRequirements(requests=requests or None, limits=limits or None)


def _wants_gpu(placement: Placement | None) -> bool:
    return placement is not None and bool(placement.mig_profile or placement.gpus)


def _env(spec: ClusterSpec, placement: Placement | None, settings: k8s.K8sSettings) -> list[client.V1EnvVar]:
    env = {"PYTHONUNBUFFERED": "1", **scheduler_env(_folder(spec))}
    cpus = (placement.cpus if placement else None) or settings.default_cpus
    if cpus:
        env.update(dict.fromkeys(k8s.THREAD_VARS, "1"))  # dask's threads are the parallelism
    if not _wants_gpu(placement):
        env["NVIDIA_VISIBLE_DEVICES"] = "void"  # CUDA images show every GPU of the node otherwise
    env.update(settings.env)
    env["JUPYTER_GPU_ENV_DASK_CLUSTER"] = spec.id
    return [client.V1EnvVar(name=k, value=v) for k, v in env.items()]


def _folder(spec: ClusterSpec) -> Path:
    return Path(spec.folder)


def container(
    name: str, argv: list[str], spec: ClusterSpec, placement: Placement | None, settings: k8s.K8sSettings
) -> client.V1Container:
    ports = scheduler_ports() if placement is None else None
    return client.V1Container(
        name=name,
        image=settings.image,
        image_pull_policy=settings.image_pull_policy,
        command=argv,
        env=_env(spec, placement, settings),
        ports=ports,
        resources=_resources(placement, settings),
        working_dir=spec.folder,
        termination_message_policy="FallbackToLogsOnError",
        volume_mounts=[k8s.to_model(m, "V1VolumeMount", "volume mount") for m in settings.volume_mounts]
        or None,
        security_context=(
            k8s.to_model(
                settings.container_security_context, "V1SecurityContext", "container security context"
            )
            if settings.container_security_context
            else None
        ),
    )


def scheduler_ports() -> list[client.V1ContainerPort]:
    return [
        client.V1ContainerPort(name="tcp-comm", container_port=COMM_PORT, protocol="TCP"),
        client.V1ContainerPort(name="http-dashboard", container_port=DASHBOARD_PORT, protocol="TCP"),
    ]


def pod_spec(
    main: client.V1Container,
    placement: Placement | None,
    settings: k8s.K8sSettings,
    *,
    restart: str | None,
    account: str,
) -> client.V1PodSpec:
    tolerations = [
        k8s.to_model(t, "V1Toleration", "toleration")
        for t in (*settings.tolerations, *(settings.gpu_tolerations if _wants_gpu(placement) else ()))
    ]
    security = dict(settings.pod_security_context)
    if settings.run_as_user is not None:
        security.setdefault("runAsUser", settings.run_as_user)
    if settings.run_as_group is not None:
        security.setdefault("runAsGroup", settings.run_as_group)
    return client.V1PodSpec(
        restart_policy=restart,
        containers=[main],
        volumes=[k8s.to_model(v, "V1Volume", "volume") for v in settings.volumes] or None,
        node_selector=dict(settings.node_selector) or None,
        tolerations=tolerations or None,
        service_account_name=account or None,
        # The scheduler starts workers through the API; a worker needs no token.
        automount_service_account_token=bool(account),
        enable_service_links=False,
        security_context=k8s.to_model(security, "V1PodSecurityContext", "pod security context")
        if security
        else None,
        priority_class_name=settings.priority_class_name or None,
    )


def python_of(spec: ClusterSpec) -> str:
    if spec.python is None:
        raise ValueError("a Kubernetes cluster runs from an environment's Python, not a packed image")
    return spec.python


def scheduler_argv(spec: ClusterSpec, idle_timeout: int, interface: str | None) -> list[str]:
    # fixed ports, so the Service (and the operator) can name them; both behind the cluster's mutual TLS
    net = Network(interface=interface)
    args = scheduler_args(_folder(spec), idle_timeout, net, port=COMM_PORT, dashboard_port=DASHBOARD_PORT)
    return [python_of(spec), *args]


def pod_annotations(spec: ClusterSpec, settings: k8s.K8sSettings) -> dict[str, str]:
    return {
        **settings.annotations,
        k8s.USER_ANNOTATION: settings.user,
        "jupyter-gpu-env/dask-name": spec.name,
    }


def meta(
    name: str, labels: Mapping[str, str], spec: ClusterSpec, settings: k8s.K8sSettings
) -> client.V1ObjectMeta:
    return client.V1ObjectMeta(
        name=name,
        namespace=settings.namespace or None,
        labels=dict(labels),
        annotations=pod_annotations(spec, settings),
    )


def _service_ports() -> list[client.V1ServicePort]:
    return [
        client.V1ServicePort(name="tcp-comm", port=COMM_PORT, target_port="tcp-comm", protocol="TCP"),
        client.V1ServicePort(
            name="http-dashboard", port=DASHBOARD_PORT, target_port="http-dashboard", protocol="TCP"
        ),
    ]


# ----- without the operator: Jobs admitted by Kueue -----


def scheduler_job(
    spec: ClusterSpec,
    placement: Placement,
    settings: k8s.K8sSettings,
    *,
    account: str,
    walltime_seconds: int,
    interface: str | None = None,
) -> client.V1Job:
    """The scheduler's batch/v1 Job: the keeper in it creates the workers' Jobs with ``account``."""
    name = cluster_name(spec)
    labels = cluster_labels(spec, settings, SCHEDULER)
    job_labels = dict(labels)
    queue = queue_of(placement, settings)
    if queue:
        job_labels[k8s.QUEUE_LABEL] = queue
    main = container(
        "scheduler", scheduler_argv(spec, spec.idle_timeout_seconds, interface), spec, None, settings
    )
    return client.V1Job(
        api_version="batch/v1",
        kind="Job",
        metadata=meta(name, job_labels, spec, settings),
        spec=client.V1JobSpec(
            backoff_limit=0,
            completions=1,
            parallelism=1,
            ttl_seconds_after_finished=settings.ttl_seconds_after_finished,
            active_deadline_seconds=walltime_seconds,
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels=labels, annotations=pod_annotations(spec, settings)),
                spec=pod_spec(main, None, settings, restart="Never", account=account),
            ),
        ),
    )


def scheduler_service(
    spec: ClusterSpec, settings: k8s.K8sSettings, owner: Mapping[str, Any] | None = None
) -> client.V1Service:
    """The scheduler's Service (ClusterIP, the comm and dashboard ports), owned by the scheduler's Job
    when ``owner`` (the created Job) is given, so deleting the Job deletes it."""
    name = cluster_name(spec)
    metadata = meta(name, cluster_labels(spec, settings, SCHEDULER), spec, settings)
    uid = ((owner or {}).get("metadata") or {}).get("uid")
    if uid:
        metadata.owner_references = [
            client.V1OwnerReference(
                api_version="batch/v1", kind="Job", name=name, uid=uid, block_owner_deletion=True
            )
        ]
    return client.V1Service(
        api_version="v1",
        kind="Service",
        metadata=metadata,
        spec=client.V1ServiceSpec(
            type="ClusterIP",
            selector={CLUSTER_LABEL: k8s.label_value(spec.id), k8s.COMPONENT_KEY: SCHEDULER},
            ports=_service_ports(),
        ),
    )


def worker_job(spec: ClusterSpec, placement: Placement, settings: k8s.K8sSettings) -> client.V1Job:
    """The worker Job the keeper creates per worker: ``metadata.name`` and the ``--name`` argument are
    left to it (the keeper's ``pool.py`` sets both to the same name); the walltime is the Job's deadline."""
    labels = cluster_labels(spec, settings, WORKER)
    job_labels = dict(labels)
    queue = queue_of(placement, settings)
    if queue:
        job_labels[k8s.QUEUE_LABEL] = queue
    main = container("worker", [python_of(spec), *spec.worker_args], spec, placement, settings)
    metadata = meta(cluster_name(spec) + "-w0", job_labels, spec, settings)
    return client.V1Job(
        api_version="batch/v1",
        kind="Job",
        metadata=metadata,
        spec=client.V1JobSpec(
            backoff_limit=0,
            completions=1,
            parallelism=1,
            ttl_seconds_after_finished=settings.ttl_seconds_after_finished,
            active_deadline_seconds=spec.walltime_seconds,
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels=labels, annotations=pod_annotations(spec, settings)),
                spec=pod_spec(main, placement, settings, restart="Never", account=""),
            ),
        ),
    )


# ----- with the operator -----


def dask_cluster(
    spec: ClusterSpec,
    placement: Placement,
    settings: k8s.K8sSettings,
    *,
    account: str,
    interface: str | None = None,
) -> dict[str, Any]:
    """The ``DaskCluster`` (kubernetes.dask.org/v1): our scheduler (keeper preloaded) on the operator's
    ports; workers ``worker_args`` named by the operator (``$(DASK_WORKER_NAME)``), 0 replicas to start.
    The operator deletes it after ``idleTimeout``; the scheduler's own timeout is later, so its
    Deployment never restarts a scheduler that closed for idleness."""
    name = cluster_name(spec)
    scheduler = container(
        "scheduler",
        scheduler_argv(spec, spec.idle_timeout_seconds + IDLE_MARGIN, interface),
        spec,
        None,
        settings,
    )
    worker = container(
        "worker",
        [python_of(spec), *spec.worker_args, "--name", OPERATOR_WORKER_NAME],
        spec,
        placement,
        settings,
    )
    # Deployments restart their pods: restartPolicy must stay Always (the default).
    scheduler_pod = pod_spec(scheduler, None, settings, restart=None, account=account)
    worker_pod = pod_spec(worker, placement, settings, restart=None, account="")
    selector_labels = {"dask.org/cluster-name": name, "dask.org/component": "scheduler"}
    body = {
        "apiVersion": f"{OPERATOR_GROUP}/{OPERATOR_VERSION}",
        "kind": "DaskCluster",
        "metadata": k8s.as_dict(meta(name, cluster_labels(spec, settings), spec, settings)),
        "spec": {
            "idleTimeout": spec.idle_timeout_seconds,
            "scheduler": {
                "metadata": {"labels": cluster_labels(spec, settings, SCHEDULER)},
                "spec": k8s.as_dict(scheduler_pod),
                "service": k8s.as_dict(
                    client.V1ServiceSpec(type="ClusterIP", selector=selector_labels, ports=_service_ports())
                ),
            },
            "worker": {
                "replicas": 0,
                "metadata": {"labels": cluster_labels(spec, settings, WORKER)},
                "spec": k8s.as_dict(worker_pod),
            },
        },
    }
    return body


def worker_group_name(base: str) -> str:
    """The operator's name for a DaskCluster's default worker group."""
    return f"{base}-default"
