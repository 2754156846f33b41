"""traitlets configuration of each backend: `c.LocalBackend.*`, `c.SlurmBackend.*`, ...

Each class is only configuration; ``build()`` makes the backend object the job service drives.
"""

from __future__ import annotations

import os
import sys

from traitlets import Dict, Float, Int, List, TraitError, Unicode, validate
from traitlets.config import Configurable

from . import local, manifests, slurm


class LocalBackend(Configurable):
    """Runs jobs on the machine of the Jupyter server, detached from it: no cluster needed."""

    max_concurrent = Int(
        2,
        min=1,
        config=True,
        help="Jobs that run at once; later submissions wait in the queue and start when one ends.",
    )
    kill_grace = Float(
        10.0,
        min=0,
        config=True,
        help="Seconds between SIGTERM and SIGKILL when a job is cancelled (keep above the runner's own 5 s).",
    )
    python = Unicode(
        "",
        config=True,
        help="The Python that runs the job runner (it needs jupyter-gpu-env and papermill installed). "
        "Empty: the Python of this server.",
    )
    gpu_count = Int(
        -1,
        config=True,
        help="GPUs a job may ask for on this machine; 0 refuses GPU jobs; -1: 0 where the machine has no "
        "NVIDIA driver, else no check.",
    )
    max_time_limit = Int(
        0,
        min=0,
        config=True,
        help="Longest time limit a job may ask for, in seconds (0: no ceiling).",
    )
    nice = Int(
        10,
        min=0,
        max=19,
        config=True,
        help="Niceness of the job runners and their kernels: batch work yields the CPU to this server and "
        "to the user's interactive kernels (0: the same priority as the server).",
    )

    def _gpu_count(self) -> int | None:
        if self.gpu_count >= 0:
            return self.gpu_count
        return None if os.path.exists("/proc/driver/nvidia/version") else 0

    def build(self, name: str = "local") -> local.LocalBackend:
        return local.LocalBackend(
            name,
            max_concurrent=self.max_concurrent,
            python=self.python or sys.executable,
            kill_grace=self.kill_grace,
            gpu_count=self._gpu_count(),
            max_time_limit_seconds=self.max_time_limit or None,
            nice=self.nice,
        )


class SlurmBackend(Configurable):
    """Runs jobs on a SLURM cluster with sbatch; job folders must be on a filesystem the nodes share."""

    partitions = List(
        Unicode(),
        config=True,
        help="Partitions offered to users (the queue of a job). Empty: every partition sinfo lists.",
    )
    default_partition = Unicode(
        "",
        config=True,
        help="The partition of a job that names no queue. Empty: SLURM's default partition (sinfo's '*'), "
        "else the first offered.",
    )
    account = Unicode("", config=True, help="The SLURM account jobs are charged to (--account); empty: none.")
    gpu_type = Unicode(
        "",
        config=True,
        help="The gres type whole GPUs are requested as (--gres=gpu:TYPE:N, e.g. 'a100'); empty: any "
        "(--gres=gpu:N). MIG slices are requested as gpu:PROFILE:1.",
    )
    extra_sbatch_options = List(
        Unicode(),
        config=True,
        help="More sbatch options for every job, each one '--name' or '--name=value' (e.g. '--qos=interactive', "
        "'--constraint=a100'), written as #SBATCH lines. Options the backend sets itself (resources, output, "
        "partition, account, export) are refused.",
    )
    export = Unicode(
        "ALL",
        config=True,
        help="sbatch --export: ALL passes the server's environment to the job (less SLURM's own and "
        "CUDA_VISIBLE_DEVICES), NONE passes none, or a comma-separated list of names.",
    )
    environment = Dict(
        value_trait=Unicode(),
        config=True,
        help="Environment variables set for every job (in the script, before the runner starts).",
    )
    prologue = List(
        Unicode(),
        config=True,
        help="Shell lines run in every job's script before the runner, e.g. 'module load cuda/12.4'.",
    )
    python = Unicode(
        "",
        config=True,
        help="The Python on the compute nodes that has jupyter-gpu-env and papermill installed (an absolute "
        "path the nodes see). Empty: the Python of this server, right when it lives on the shared filesystem.",
    )
    sbatch_command = Unicode("sbatch", config=True, help="The sbatch command (a name on PATH or a path).")
    squeue_command = Unicode("squeue", config=True, help="The squeue command (a name on PATH or a path).")
    scontrol_command = Unicode("scontrol", config=True, help="The scontrol command (a name or a path).")
    scancel_command = Unicode("scancel", config=True, help="The scancel command (a name on PATH or a path).")
    sinfo_command = Unicode("sinfo", config=True, help="The sinfo command (a name on PATH or a path).")
    slurm_conf = Unicode(
        "",
        config=True,
        help="slurm.conf for the commands (exported to them as SLURM_CONF). Empty: their default "
        "(SLURM_CONF of the server's environment, /etc/slurm/slurm.conf, or configless).",
    )
    command_timeout = Float(
        30.0,
        min=1,
        config=True,
        help="Seconds one SLURM command (a poll's squeue, an sbatch) may take before the controller is "
        "treated as unavailable for this round.",
    )
    info_ttl = Float(
        60.0, min=0, config=True, help="Seconds the partitions and limits read from sinfo are cached."
    )
    status_grace = Float(
        60.0,
        min=0,
        config=True,
        help="Seconds to wait, after SLURM says a job ended, for the runner's status.json to appear on the "
        "shared filesystem (NFS caches attributes) before the job is recorded from SLURM's state alone.",
    )
    image_runtime = Unicode(
        "",
        config=True,
        help="How nodes open packed images: 'apptainer' (needs image_container), 'squashfuse' (mounted in the "
        "node's temporary folder for the job), or '' (jobs in images are refused).",
    )
    image_container = Unicode(
        "",
        config=True,
        help="With image_runtime 'apptainer': the container (.sif) the runner runs in; it must see the "
        "nodes' Python (python) and the job folders.",
    )

    @validate("extra_sbatch_options")
    def _check_extra(self, proposal: dict) -> list[str]:
        try:
            return [manifests.check_extra_option(o) for o in proposal["value"]]
        except ValueError as e:
            raise TraitError(str(e)) from None

    @validate("export")
    def _check_export(self, proposal: dict) -> str:
        try:
            return manifests.check_export(proposal["value"])
        except ValueError as e:
            raise TraitError(str(e)) from None

    @validate("partitions", "default_partition", "account", "gpu_type")
    def _check_names(self, proposal: dict) -> object:
        value = proposal["value"]
        what = proposal["trait"].name
        try:
            for v in [value] if isinstance(value, str) else value:
                if v:
                    manifests.check_name(v, what)
        except ValueError as e:
            raise TraitError(str(e)) from None
        return value

    @validate("image_runtime")
    def _check_image_runtime(self, proposal: dict) -> str:
        if proposal["value"] not in ("", "apptainer", "squashfuse"):
            raise TraitError("image_runtime must be 'apptainer', 'squashfuse' or ''")
        return proposal["value"]

    def build(self, name: str = "slurm") -> slurm.SlurmBackend:
        return slurm.SlurmBackend(
            name,
            python=self.python or sys.executable,
            commands={
                "sbatch": self.sbatch_command,
                "squeue": self.squeue_command,
                "scontrol": self.scontrol_command,
                "scancel": self.scancel_command,
                "sinfo": self.sinfo_command,
            },
            partitions=self.partitions,
            default_partition=self.default_partition or None,
            account=self.account or None,
            gpu_type=self.gpu_type or None,
            extra_sbatch_options=self.extra_sbatch_options,
            export=self.export,
            environment=self.environment,
            prologue=self.prologue,
            image_runtime=self.image_runtime or None,
            image_container=self.image_container or None,
            command_timeout=self.command_timeout,
            info_ttl=self.info_ttl,
            status_grace=self.status_grace,
            slurm_conf=self.slurm_conf or None,
        )


# ----- Kubernetes (appended as its own section; imports kept here so the lines above stay untouched) -----

from traitlets import Bool, Enum  # noqa: E402


class KubernetesBackend(Configurable):
    """Runs each job as a Kubernetes Job (batch/v1), optionally queued through a Kueue LocalQueue.

    Needs the `kubernetes` extra (`pip install jupyter-gpu-env[kubernetes]`), RBAC for the server's
    service account, and the job folder on a volume the job pods mount at the same path
    (docs/admin-kubernetes.md). Lists of volumes, mounts and tolerations are Kubernetes JSON (camelCase).
    """

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
    priority_class_name = Unicode("", config=True, help="priorityClassName of the job pods (empty: none).")
    capacity_ttl = Float(
        60.0, min=1.0, config=True, help="Seconds the nodes' MIG profiles and GPU counts are cached."
    )
    request_timeout = Float(
        30.0, min=1.0, config=True, help="Seconds one call to the Kubernetes API may take."
    )
    status_grace = Float(
        60.0,
        min=0.0,
        config=True,
        help="Seconds to wait, after Kubernetes reports a Job ended, for the runner's status.json to show "
        "up in the shared job folder before the Job's own verdict is taken.",
    )
    check_job_folder_mounted = Bool(
        True,
        config=True,
        help="Refuse a submission whose job folder lies under none of volume_mounts (its pod could not "
        "find it).",
    )

    def build(self, name: str = "kubernetes"):  # -> kubernetes.KubernetesBackend (import is deferred)
        import os

        from ..models.jobs import parse_memory

        try:
            from . import k8s_manifests as km
            from .k8s_status import current_user
            from .kubernetes import KubernetesBackend as _Backend
        except ImportError as e:
            raise ValueError(
                "The Kubernetes backend needs the kubernetes client: pip install 'jupyter-gpu-env[kubernetes]'"
            ) from e
        settings = km.K8sSettings(
            image=self.image or os.environ.get("JUPYTER_IMAGE_SPEC") or os.environ.get("JUPYTER_IMAGE") or "",
            namespace=self.namespace,
            user=current_user(),
            backend_name=name,
            image_pull_policy=self.image_pull_policy,
            service_account=self.service_account,
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
        )
        errors = km.check_settings(settings)
        if errors:
            raise ValueError("c.KubernetesBackend: " + "; ".join(errors) + ".")
        return _Backend(
            name,
            settings=settings,
            kubeconfig=self.kubeconfig,
            context=self.context,
            queues=self.queues,
            mig_profiles=self.mig_profiles,
            max_cpus=self.max_cpus or None,
            max_memory_bytes=parse_memory(self.max_memory) if self.max_memory else None,
            max_gpus=None if self.max_gpus < 0 else self.max_gpus,
            max_time_limit_seconds=self.max_time_limit or None,
            supports_images=self.apptainer_in_image,
            capacity_ttl=self.capacity_ttl,
            request_timeout=self.request_timeout,
            status_grace=self.status_grace,
            check_job_folder_mounted=self.check_job_folder_mounted,
        )
