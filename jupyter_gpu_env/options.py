"""Every ``c.GpuEnvApp.*`` option, declared once with its help and a working default.

``GpuEnvApp`` is these options (its configuration section is its own name, so ``c.GpuEnvApp.x``
sets them), as each backend is its options class; keeping them here leaves ``app.py`` the server's
wiring. The configuration reference (docs/configuration.md) is rendered from this class.
"""

from __future__ import annotations

import os
from pathlib import Path

from jupyter_core.paths import jupyter_data_dir
from traitlets import Bool, Enum, Float, Int, List, Unicode, default

from .efficiency.options import EnergyOptions
from .envs.service import default_pkgs_dir, default_user_env_dir
from .metrics.options import MetricsOptions
from .notify.options import NotificationOptions


class GpuEnvOptions(NotificationOptions, EnergyOptions, MetricsOptions):
    """The options of ``GpuEnvApp`` (the notifier's are :class:`.notify.options.NotificationOptions`', carbon
    and prices :class:`.efficiency.options.EnergyOptions`', the metrics' :class:`.metrics.options.MetricsOptions`')."""

    # -- GPU and memory ---------------------------------------------------------------------------
    gpu_sample_interval = Float(
        2.0,
        config=True,
        help="Seconds between two samples of GPU and host memory. One sampler serves every open tab, "
        "so this sets the whole server's sampling cost.",
    )
    gpu_history_seconds = Float(
        600.0,
        config=True,
        help="How many seconds of samples `GET gpu/history` keeps (a ring of this length over the interval).",
    )

    gpu_idle_seconds = Float(
        1800.0,
        config=True,
        help="A GPU held by this server's kernels with no utilization for this many seconds raises the idle "
        "warning, which offers to release it (shut those kernels down).",
    )
    cluster_capacity = Unicode(
        "",
        config=True,
        help="Where the panel reads free and total GPUs/MIG slices of the cluster: 'kubernetes' (nodes and "
        "pods through the API, configured as for the Kubernetes backend: c.KubernetesBackend.kubeconfig and "
        "context, else in-cluster config, else KUBECONFIG; needs the kubernetes package and RBAC to list "
        "nodes and pods; cached for c.KubernetesBackend.capacity_ttl, the backend's own reading where it runs) "
        "or '' (off).",
    )
    cluster_capacity_ttl = Float(
        60.0,
        config=True,
        help="Deprecated: c.KubernetesBackend.capacity_ttl, one cache for the backend and the panel. Still "
        "read, with a warning, where no Kubernetes backend runs.",
    )
    gpu_recorded_source = Unicode(
        "",
        config=True,
        help="Replay recorded NVIDIA tool output instead of reading this machine's GPUs, for demos and tests: "
        "a folder holding nvidia-smi-q.xml (or nvidia-smi-q.txt / nvidia-smi.txt) and optionally "
        "nvidia-smi-L.txt and nvidia-smi-lgi.txt, or one such file, or one capture file (append #idle for "
        "its idle phase). Empty: read the GPUs with NVML, else nvidia-smi.",
    )

    # -- environments and kernels -----------------------------------------------------------------
    managed_env_dirs = List(
        Unicode(),
        config=True,
        help="Folders holding the platform's managed (read-only) conda environments: each sub-folder with a "
        "conda-meta/ folder is one, and so is a listed folder that is itself an environment. Default: "
        "/envs and /opt/conda/envs where they exist. Environments listed in conda's environments.txt "
        "outside the user's folder are shown as managed too.",
    )
    user_env_dir = Unicode(
        config=True,
        help="Where the user's own environments (clones) live. Default: ~/.conda/envs, where "
        "`conda activate NAME` finds them.",
    )
    shared_env_dirs = List(
        Unicode(),
        config=True,
        help="Folders where users share environments with their team (empty: sharing is off). Users publish "
        "into the first one; all are listed under 'Shared'. Create it group-owned, setgid and sticky "
        "(`chmod 3775`) so teammates can add environments but only their owner can remove one.",
    )
    conda_channels = List(
        Unicode(),
        default_value=["conda-forge"],
        config=True,
        help="Channels for adding packages and for fetching packages missing from the cache: names, URLs, "
        "or local folders (file:// channels work offline).",
    )
    pkgs_dir = Unicode(
        config=True,
        help="The conda package cache used for clones. Keep it on the same filesystem as user_env_dir so "
        "that clones hard-link their files instead of copying them. Default: "
        "~/.cache/jupyter-gpu-env/pkgs.",
    )
    conda_timeout = Float(
        1800.0,
        config=True,
        help="Seconds a single clone or package change may take before it is stopped.",
    )
    pip_installer = Enum(
        ["auto", "uv", "pip"],
        default_value="auto",
        config=True,
        help="What installs PyPI packages into an environment: `uv` (fast; installed with this package), "
        "`pip` (the environment's own, which must then have pip), or `auto` (uv where it is, else pip).",
    )
    pip_index_url = Unicode(
        "",
        config=True,
        help="The Python package index for PyPI packages (a mirror's URL); empty: the installer's default "
        "and its own configuration (pip.conf, uv.toml, PIP_INDEX_URL / UV_INDEX_URL).",
    )
    pip_extra_index_urls = List(
        Unicode(), default_value=[], config=True, help="More package indexes, searched besides the index."
    )
    pip_find_links = List(
        Unicode(),
        default_value=[],
        config=True,
        help="Folders or pages of wheels to install from (a site's wheelhouse), besides the index.",
    )
    pip_no_index = Bool(
        False,
        config=True,
        help="Use no package index, only `pip_find_links` (an offline site).",
    )

    # -- images -----------------------------------------------------------------------------------
    image_dir = Unicode(
        config=True,
        help="Where packed images (squashfs, SIF) and their records are written. Put it on the shared "
        "filesystem your batch nodes see. Default: a `gpu-env/images` folder in the user's Jupyter "
        "data directory.",
    )
    image_mount_prefix = Unicode(
        "/opt/gpu-env",
        config=True,
        help="Images are packed to be mounted at IMAGE_MOUNT_PREFIX/ENV_NAME (conda-pack --dest-prefix), "
        "which is where apptainer binds them in batch jobs.",
    )
    image_max_bytes = Int(
        0,
        config=True,
        help="Largest image file a user may build, in bytes (0: no limit). A pack that grows past it stops "
        "and leaves nothing behind.",
    )
    image_threads = Int(
        0,
        config=True,
        help="Compression threads for mksquashfs (0: all cores).",
    )
    image_kernel_container = Unicode(
        "",
        config=True,
        help="Where squashfuse cannot mount, kernels from images run inside this container with apptainer "
        "(a .sif path); empty: image kernels need squashfuse and /dev/fuse.",
    )
    sif_base_image = Unicode(
        "docker://debian:12-slim",
        config=True,
        help="Base container of SIF images (a docker:// reference or a local .sif), used where apptainer "
        "is installed.",
    )

    # -- batch jobs -------------------------------------------------------------------------------
    job_dir = Unicode(
        "gpu-env-jobs",
        config=True,
        help="Where each job's folder (input snapshot, output notebook, log, status) is created: relative "
        "to the server's root so outputs open in JupyterLab, or absolute (on a shared filesystem for "
        "cluster backends).",
    )
    job_store = Unicode(
        config=True,
        help="The SQLite file holding job records. Default: jobs.sqlite in state_dir.",
    )
    job_refresh_interval = Float(
        2.0,
        config=True,
        help="Seconds between two status queries of each backend (one query for all its active jobs).",
    )
    job_gpu_sample_interval = Float(
        5.0,
        min=0.0,
        config=True,
        help="Seconds between two samples of the GPUs a batch job can see, taken by its runner (0: none). "
        "Each sample costs a few NVML calls and about 40 bytes per device in the job folder.",
    )
    job_gpu_idle_seconds = Float(
        600.0,
        min=0.0,
        config=True,
        help="A running batch job whose GPUs have all been under 5 % utilization this long gets a warning "
        "in the Jobs section, with cancel at hand.",
    )
    job_gpu_idle_action = Enum(
        ["warn", "cancel"],
        "warn",
        config=True,
        help="What happens to a running job whose GPU has been idle `job_gpu_idle_seconds`: 'warn' (the "
        "Jobs section says so) or 'cancel' (warned, then cancelled after `job_gpu_idle_grace` seconds "
        "more unless its GPU is used again; the reason is recorded and notified).",
    )
    job_gpu_idle_grace = Float(
        300.0,
        min=0.0,
        config=True,
        help="With job_gpu_idle_action 'cancel': seconds between the warning "
        "and the cancel, for the job to use its GPU again (or its user to act).",
    )
    job_advice_headroom = Float(
        0.2,
        min=0.0,
        max=4.0,
        config=True,
        help="Right-size advice: GPU memory added over the peak a "
        "notebook's runs measured before choosing the smallest GPU or MIG slice that holds it (0.2: 20 %).",
    )
    job_advice_runs = Int(
        5,
        min=1,
        max=100,
        config=True,
        help="Right-size advice: how many of a notebook's latest measured runs it is based on.",
    )
    backends = List(
        Unicode(),
        default_value=["local"],
        config=True,
        help="The batch backends offered, by name: 'local', 'slurm', 'kubernetes', or one a site installs "
        "(entry point group jupyter_gpu_env.backends). Each is configured in its own section "
        "(c.LocalBackend, c.SlurmBackend, c.KubernetesBackend).",
    )

    # -- limits on what one request can cost -------------------------------------------------------
    max_request_bytes = Int(
        1 << 20,
        min=1024,
        config=True,
        help="Largest request body the REST API reads, in bytes; a larger one is refused with 413 before "
        "it is read.",
    )
    schedule_minimum_period = Float(
        60.0,
        min=1.0,
        config=True,
        help="The shortest time between two runs of a schedule, in seconds: a schedule that would run "
        "more often is refused (a 400 saying so).",
    )
    schedule_starting_deadline = Int(
        300,
        min=0,
        config=True,
        help="Seconds after its due time within which a scheduled run may still start; later, it is "
        "recorded as missed (the server was down, the batch system started the waiting job late).",
    )
    schedule_interval = Float(
        5.0,
        min=0.5,
        config=True,
        help="Seconds between two looks at the schedules: the server starts the local backend's due runs "
        "and adopts the runs a batch system started.",
    )
    max_pipeline_nodes = Int(
        200,
        min=1,
        max=1000,
        config=True,
        help="The most nodes one pipeline may have (a sweep node counts once; its runs count against "
        "max_sweep_runs): a larger one is refused with a 409 saying so.",
    )
    max_sweep_runs = Int(
        1000,
        min=1,
        config=True,
        help="The most runs one sweep may have (the product of its values' counts, or its list of runs); "
        "a larger one is refused before any run is made.",
    )
    sweep_result_value_bytes = Int(
        64 << 10,
        min=64,
        config=True,
        help="Longest value in a sweep's results table, in bytes of its text: a longer one is cut there, "
        "and its row names it and the output notebook that holds it whole. The output notebooks (written "
        "by the runs' code) are read only that far for each value, the rest passed over.",
    )
    sweep_results_bytes = Int(
        8 << 20,
        min=1024,
        config=True,
        help="Most bytes of recorded values in one answer of a sweep's results (JSON or CSV): the values "
        "after that are cut, saying so, whatever the runs recorded.",
    )
    max_parameters_bytes = Int(
        64 << 10,
        min=256,
        config=True,
        help="Largest JSON of one job's parameters, in bytes. Job listings carry parameters only up to "
        "listed_parameters_bytes per job; `GET jobs/{id}` has them all.",
    )
    listed_parameters_bytes = Int(
        2048,
        min=0,
        config=True,
        help="Parameters larger than this (as JSON, in bytes) are left out of job listings, which say so "
        "(`parameters_omitted`), so that a page of jobs stays small.",
    )
    max_gpu_checks = Int(
        2,
        min=1,
        config=True,
        help="GPU checks (each starts a Python with CUDA libraries) that run at once; more wait their turn.",
    )
    max_concurrent_plans = Int(
        2,
        min=1,
        config=True,
        help="Plans (the dry run of a package change, or of an environment made from a file: a solver "
        "each, a few hundred MB of memory) that run at once; more wait their turn, as GPU checks and packs "
        "do.",
    )
    max_concurrent_packs = Int(
        1,
        min=1,
        config=True,
        help="Images packed at once (each uses every core it is given); more wait their turn. Requests for "
        "an image already being packed share its task.",
    )

    freeze_startup_objects = Bool(
        True,
        config=True,
        help="Once the server has started, move the objects it made to start out of the garbage "
        "collector's view (gc.freeze), so that a full collection stops pausing every request for 100 ms "
        "or more. They live as long as the server anyway.",
    )

    state_dir = Unicode(
        config=True,
        help="Where the extension keeps its own state: task records (tasks.json), the environment "
        "catalog (environments.json: what is known of each environment, so that a restart does not "
        "measure unchanged ones again) and, by default, the job records (jobs.sqlite). Default: a "
        "`gpu-env` folder in the user's Jupyter data directory.",
    )

    @default("state_dir")
    def _default_state_dir(self) -> str:
        return str(Path(jupyter_data_dir()) / "gpu-env")

    @default("managed_env_dirs")
    def _default_managed(self) -> list[str]:
        return [d for d in ("/envs", "/opt/conda/envs") if os.path.isdir(d)]

    @default("user_env_dir")
    def _default_user_env_dir(self) -> str:
        return str(default_user_env_dir())

    @default("pkgs_dir")
    def _default_pkgs_dir(self) -> str:
        return str(default_pkgs_dir())

    @default("job_store")
    def _default_job_store(self) -> str:
        return str(Path(self.state_dir) / "jobs.sqlite")

    @default("image_dir")
    def _default_image_dir(self) -> str:
        return str(Path(jupyter_data_dir()) / "gpu-env" / "images")
