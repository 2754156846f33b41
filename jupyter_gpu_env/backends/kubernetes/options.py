"""The options of the Kubernetes backend (``c.KubernetesBackend.*``), declared once, and the pure
settings the Job builder takes from them. :class:`KubernetesOptions` is the configurable base of the
backend (backend.py), which adds what it does.
"""

from __future__ import annotations

import os

from traitlets import Bool, Dict, Enum, Float, Int, List, Unicode

from ...models.resources import parse_memory
from ..base import RemoteBackend
from . import objects
from .api.client import current_user
from .checks import check_settings


class KubernetesOptions(RemoteBackend):
    """The options of :class:`.backend.KubernetesBackend` (``c.KubernetesBackend.*``), declared once."""

    kind = "kubernetes"

    namespace = Unicode(
        "",
        config=True,
        help="Namespace the Jobs are created in. Empty: the server pod's own namespace when it runs in a "
        "cluster, else the kubeconfig context's namespace, else `default`.",
    )
    image = Unicode(
        "",
        config=True,
        help="Image of the job pods; it needs jupyter-gpu-env, papermill and the kernels jobs use. Empty: "
        "this server's own image, read from JUPYTER_IMAGE_SPEC (or JUPYTER_IMAGE), which JupyterHub's "
        "KubeSpawner sets in every single-user pod.",
    )
    image_pull_policy = Enum(
        ["Always", "IfNotPresent", "Never"],
        "IfNotPresent",
        config=True,
        help="imagePullPolicy of the job container.",
    )
    python = Unicode(
        "python",
        config=True,
        help="The Python on the image that runs `-m jupyter_gpu_env.runner` (a name on PATH or a path).",
    )
    service_account = Unicode(
        "",
        config=True,
        help="serviceAccountName of the job pods. Empty: the namespace's default account, with no API "
        "token mounted (the runner needs none).",
    )
    dask_service_account = Unicode(
        "",
        config=True,
        help="serviceAccountName of a Dask cluster's scheduler pod, whose token is mounted: the keeper in it "
        "starts and stops the cluster's workers through the API (worker Jobs: create, list, delete `jobs` "
        "and list `pods`; with the dask-kubernetes operator: get and patch `daskworkergroups`, list `pods`). "
        "Required for Dask clusters on this backend (docs/admin-kubernetes.md, Dask clusters).",
    )
    pipeline_service_account = Unicode(
        "",
        config=True,
        help="serviceAccountName of the pods of pipeline nodes, whose token is mounted: a node's pod creates "
        "the Jobs of the nodes after it when it ends, so the pipeline goes on with no Jupyter server. The "
        "account needs `create` on `jobs` (batch) in the namespace (docs/admin-kubernetes.md, Pipelines). "
        "Empty: service_account; with neither, the Jupyter server starts each node when it sees its "
        "parents end.",
    )
    volumes = List(
        Dict(),
        config=True,
        help="Pod volumes, as Kubernetes JSON, e.g. [{'name': 'home', 'persistentVolumeClaim': "
        "{'claimName': 'claim-alice'}}]. They must hold the job folder (c.GpuEnvApp.job_dir) and the "
        "notebooks; in a Python config file, build the claim name from os.environ['JUPYTERHUB_USER'].",
    )
    volume_mounts = List(
        Dict(),
        config=True,
        help="volumeMounts of the job container, as Kubernetes JSON, e.g. [{'name': 'home', 'mountPath': "
        "'/home/jovyan'}]: mount each at the path the server sees it at.",
    )
    env = Dict(
        value_trait=Unicode(),
        config=True,
        help="Environment variables of the job container, in addition to PYTHONUNBUFFERED and the thread "
        "counts set from the CPUs asked for.",
    )
    node_selector = Dict(
        value_trait=Unicode(),
        config=True,
        help="nodeSelector of every job pod, e.g. {'nvidia.com/gpu.present': 'true'}.",
    )
    tolerations = List(
        Dict(),
        config=True,
        help="Tolerations of every job pod, as Kubernetes JSON, e.g. [{'key': 'dedicated', 'operator': "
        "'Equal', 'value': 'batch', 'effect': 'NoSchedule'}].",
    )
    gpu_tolerations = List(
        Dict(),
        config=True,
        help="Tolerations added to pods that ask for a GPU or a MIG slice, e.g. [{'key': 'nvidia.com/gpu', "
        "'operator': 'Exists', 'effect': 'NoSchedule'}] for tainted GPU nodes.",
    )
    local_queue = Unicode(
        "",
        config=True,
        help="The Kueue LocalQueue jobs go to when they name no queue (label kueue.x-k8s.io/queue-name). "
        "Empty: no Kueue unless the job names a queue.",
    )
    queues = List(
        Unicode(),
        config=True,
        help="Further Kueue LocalQueues offered to users besides local_queue (a job's queue overrides the "
        "default).",
    )
    ttl_seconds_after_finished = Int(
        3600,
        min=0,
        config=True,
        help="ttlSecondsAfterFinished: seconds Kubernetes keeps a finished Job and its pod (and so its "
        "pod log) before deleting them.",
    )
    labels = Dict(
        value_trait=Unicode(),
        config=True,
        help="Extra labels on the Jobs and their pods (the identifying labels are always set).",
    )
    annotations = Dict(
        value_trait=Unicode(),
        config=True,
        help="Extra annotations on the Jobs and their pods.",
    )
    kubeconfig = Unicode(
        "",
        config=True,
        help="A kubeconfig file to use instead of the pod's service account. Empty: in-cluster "
        "configuration, else the KUBECONFIG variable or ~/.kube/config.",
    )
    context = Unicode(
        "",
        config=True,
        help="The kubeconfig context to use. Empty: the current context.",
    )
    default_cpus = Int(
        1,
        min=0,
        config=True,
        help="CPUs requested for a job that asks for none (0: no CPU request, a BestEffort pod).",
    )
    default_memory = Unicode(
        "2G",
        config=True,
        help="Memory requested (and the limit) for a job that asks for none, like '2G'; empty: none.",
    )
    cpu_limit = Bool(
        True,
        config=True,
        help="Set the CPU limit equal to the CPU request; False leaves CPU unlimited (only requested).",
    )
    time_limit_grace = Int(
        60,
        min=0,
        config=True,
        help="Seconds added to a job's time limit for activeDeadlineSeconds: the runner stops the notebook "
        "at the limit itself and saves it; Kubernetes ends the pod if that fails.",
    )
    max_cpus = Int(0, min=0, config=True, help="Most CPUs a job may ask for (0: no ceiling here).")
    max_memory = Unicode(
        "", config=True, help="Most memory a job may ask for, like '64G' (empty: no ceiling)."
    )
    max_gpus = Int(
        -1,
        config=True,
        help="Most whole GPUs a job may ask for; -1: the most any one node offers, read from the nodes.",
    )
    max_time_limit = Int(
        0, min=0, config=True, help="Longest time limit a job may ask for, in seconds (0: no ceiling)."
    )
    mig_profiles = List(
        Unicode(),
        config=True,
        help="MIG profiles offered, like ['1g.10gb', '3g.40gb']. Empty: those the nodes' allocatable "
        "resources show (nvidia.com/mig-*, the device plugin's mixed strategy), read every capacity_ttl.",
    )
    apptainer_in_image = Bool(
        False,
        config=True,
        help="The image has apptainer (or squashfuse) and pods may use it: offer packed images as runtimes.",
    )
    run_as_server_user = Bool(
        True,
        config=True,
        help="Run the job pods with this server's user and group ids (runAsUser, runAsGroup), so files "
        "in the shared job folder belong to the same user.",
    )
    pod_security_context = Dict(
        config=True,
        help="securityContext of the job pods, as Kubernetes JSON (e.g. {'runAsNonRoot': True, "
        "'seccompProfile': {'type': 'RuntimeDefault'}} for the restricted Pod Security Standard).",
    )
    container_security_context = Dict(
        config=True,
        help="securityContext of the job container, as Kubernetes JSON (e.g. {'allowPrivilegeEscalation': "
        "False, 'capabilities': {'drop': ['ALL']}}).",
    )
    priority_class_name = Unicode(
        "",
        config=True,
        help="priorityClassName of the job pods (empty: none); a priority configured in `priorities` "
        "gives its own.",
    )
    priorities = Dict(
        value_trait=Dict(value_trait=Unicode()),
        config=True,
        help="What each job priority maps to here: {'opportunistic': {'priority_class': 'batch-low', "
        "'workload_priority_class': 'opportunistic', 'description': 'optional words for users'}}. "
        "`priority_class` is the pods' PriorityClass (the kube-scheduler may preempt them for pods of "
        "higher priority), `workload_priority_class` the Kueue WorkloadPriorityClass put on the Job as "
        "the label kueue.x-k8s.io/priority-class (Kueue may evict it for workloads of higher "
        "priority); an `opportunistic` entry needs at least one. Only then do users see "
        "'opportunistic' offered; such a Job's pod stopped for other work is started again "
        "(podFailurePolicy: exit code 3 and DisruptionTarget ignored), and the notebook resumes from "
        "its checkpoint folder. A `normal` entry may also give normal jobs classes and words "
        "(docs/admin-kubernetes.md, Opportunistic jobs and preemption).",
    )
    termination_grace_seconds = Int(
        60,
        min=10,
        config=True,
        help="terminationGracePeriodSeconds of the job pods: the time a pod stopped by a cancel, a "
        "preemption or an eviction has, after SIGTERM, for the runner to stop the kernel, save the "
        "notebook executed so far and record the attempt on the shared folder before it is killed.",
    )
    capacity_ttl = Float(
        60.0, min=1.0, config=True, help="Seconds the nodes' MIG profiles and GPU counts are cached."
    )
    request_timeout = Float(
        30.0, min=1.0, config=True, help="Seconds one call to the Kubernetes API may take."
    )
    check_job_folder_mounted = Bool(
        True,
        config=True,
        help="Refuse a submission whose job folder lies under none of volume_mounts (its pod could not "
        "find it).",
    )

    def job_settings(self) -> objects.K8sSettings:
        """What the pure Job builder takes (:mod:`.objects`); ValueError naming what is wrong."""
        settings = objects.K8sSettings(
            image=self.image or os.environ.get("JUPYTER_IMAGE_SPEC") or os.environ.get("JUPYTER_IMAGE") or "",
            namespace=self.namespace,
            user=current_user(),
            backend_name=self.name,
            image_pull_policy=self.image_pull_policy,
            service_account=self.service_account,
            pipeline_service_account=self.pipeline_service_account,
            python=self.python,
            volumes=tuple(self.volumes),
            volume_mounts=tuple(self.volume_mounts),
            env=dict(self.env),
            node_selector=dict(self.node_selector),
            tolerations=tuple(self.tolerations),
            gpu_tolerations=tuple(self.gpu_tolerations),
            local_queue=self.local_queue,
            ttl_seconds_after_finished=self.ttl_seconds_after_finished,
            labels=dict(self.labels),
            annotations=dict(self.annotations),
            default_cpus=self.default_cpus or None,
            default_memory_bytes=parse_memory(self.default_memory) if self.default_memory else None,
            cpu_limit=self.cpu_limit,
            time_limit_grace=self.time_limit_grace,
            pod_security_context=dict(self.pod_security_context),
            container_security_context=dict(self.container_security_context),
            run_as_user=os.getuid() if self.run_as_server_user else None,
            run_as_group=os.getgid() if self.run_as_server_user else None,
            priority_class_name=self.priority_class_name,
            priorities={k: dict(v) for k, v in self.priorities.items()},
            termination_grace_seconds=self.termination_grace_seconds,
        )
        errors = check_settings(settings)
        if errors:
            raise ValueError("c.KubernetesBackend: " + "; ".join(errors) + ".")
        return settings
