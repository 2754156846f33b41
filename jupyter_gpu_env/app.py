"""The server extension: its options (``options.py``), the services it builds, its routes, and the
lifetime of its background services."""

from __future__ import annotations

import dataclasses
import gc
import os
import shutil
from pathlib import Path
from typing import Any, cast

from jupyter_client.kernelspec import KernelSpecManager
from jupyter_server.extension.application import ExtensionApp

from ._version import __version__
from .backends.base import InstalledBackends, create_backends
from .batchkernels import provisioner
from .batchkernels.options import BatchKernels
from .batchkernels.service import BatchKernelService
from .contracts.dask.spec import DIR_ENV as DASK_DIR_ENV
from .dask.options import DaskClusters
from .dask.service import DaskService
from .efficiency.advisor import Advisor
from .efficiency.idle import IdleEnforcer
from .envs.catalog import EnvironmentCatalog
from .envs.conda_list import default_path as default_conda_list
from .envs.pip.tool import PipSettings
from .envs.rattler.engine import RattlerEngine
from .envs.service import EnvironmentService
from .gpu.cluster import BackendCapacity, CapacitySource, NoCapacity
from .gpu.kernel_processes import RunningKernel, server_kernels
from .gpu.sampler import Sampler
from .gpu.sources import GpuReaders
from .handlers import tornado_routes
from .handlers.dask.dashboard import ROUTE as DASHBOARD_ROUTE
from .handlers.dask.dashboard import DashboardHandler
from .handlers.openapi import render as render_openapi
from .images.service import ImageService
from .jobs.service import JobService
from .jobs.store import JobStore
from .loops import Loops
from .metrics.service import MetricsService
from .notify.email import SmtpSettings
from .notify.message import public_base
from .notify.notifier import Notifier
from .notify.settings import FILE_NAME as NOTIFICATIONS_FILE
from .notify.settings import SettingsFile
from .options import GpuEnvOptions
from .pipelines.service import PipelineService
from .proc import SECRET_VARIABLES
from .schedules.service import ScheduleService
from .services import Library, Services
from .services.environments import EnvironmentOperations
from .services.gpu import GpuOperations
from .services.images import ImageOperations
from .services.kernels import ServerKernels
from .tasks import TaskManager


class GpuEnvApp(ExtensionApp, GpuEnvOptions):
    """jupyter-gpu-env: environments, images, batch jobs and GPU usage for shared GPU platforms."""

    name = "jupyter_gpu_env"
    version = __version__
    description = __doc__
    # The frontend is a prebuilt lab extension; this server extension serves only the REST API.
    load_other_extensions = True
    # Every installed backend's options show in --help-all, the CLI and docs/configuration.md.
    classes = InstalledBackends(DaskClusters, BatchKernels)

    async def _kernels(self) -> list[RunningKernel]:
        return await server_kernels(self.serverapp)

    def _kernel_names(self) -> set[str]:
        # Without a server (the CLI) there is no kernel spec manager: read kernelspecs as papermill will.
        manager = getattr(self.serverapp, "kernel_spec_manager", None) or KernelSpecManager(parent=self)
        return set(manager.find_kernel_specs())

    def _kernel_spec(self, name: str) -> dict[str, Any] | None:
        """A kernelspec's kernel.json by name; None when there is none (or it is broken)."""
        manager = getattr(self.serverapp, "kernel_spec_manager", None) or KernelSpecManager(parent=self)
        try:
            return cast(dict[str, Any], manager.get_kernel_spec(name).to_dict())
        except Exception:  # jupyter_client raises NoSuchKernel, or whatever a broken spec makes it raise
            return None

    def _kernel_python(self, name: str) -> str | None:
        """The Python a kernel runs (its spec's first argument, found on PATH when bare), if it runs one."""
        manager = getattr(self.serverapp, "kernel_spec_manager", None) or KernelSpecManager(parent=self)
        try:
            argv = manager.get_kernel_spec(name).argv
        except Exception:  # jupyter_client raises NoSuchKernel, or whatever a broken spec makes it raise
            return None
        first = argv[0] if argv else ""
        found = first if os.path.isabs(first) else shutil.which(first)
        return found if found and Path(found).name.startswith("python") else None

    def build_library(self, root_dir: str) -> Library:
        """The services that need no server: what the CLI runs on."""
        catalog = EnvironmentCatalog(
            self.managed_env_dirs,
            self.user_env_dir,
            conda_lists=[default_conda_list()],
            state_file=Path(self.state_dir) / "environments.json",
            shared_dirs=self.shared_env_dirs,
        )
        engine = RattlerEngine(self.conda_channels, self.pkgs_dir, timeout=self.conda_timeout)
        images = ImageService(
            self.image_dir,
            mount_prefix=self.image_mount_prefix,
            max_bytes=self.image_max_bytes or None,
            sif_base_image=self.sif_base_image,
            threads=self.image_threads or None,
        )
        Path(self.job_store).parent.mkdir(parents=True, exist_ok=True)
        jobs = JobService(
            JobStore(Path(self.job_store)),
            create_backends(self.backends, parent=self),
            root_dir,
            self.job_dir,
            kernel_names=self._kernel_names,
            environments=lambda name: next(
                (str(loc.prefix) for loc in catalog.locate() if loc.name == name), None
            ),
            images=images.path_of,
            refresh_interval=self.job_refresh_interval,
            gpu_sample_interval=self.job_gpu_sample_interval,
            gpu_idle=(
                self.job_gpu_idle_seconds,
                "cancel" if self.job_gpu_idle_action == "cancel" else "warn",
                self.job_gpu_idle_grace,
            ),
            max_parameters_bytes=self.max_parameters_bytes,
            listed_parameters_bytes=self.listed_parameters_bytes,
            max_sweep_runs=self.max_sweep_runs,
            result_value_bytes=self.sweep_result_value_bytes,
            results_bytes=self.sweep_results_bytes,
            prices=self.site_prices(),
        )
        envs = EnvironmentService(
            catalog,
            engine,
            pip=PipSettings(
                installer=self.pip_installer,
                index_url=self.pip_index_url,
                extra_index_urls=tuple(self.pip_extra_index_urls),
                find_links=tuple(self.pip_find_links),
                no_index=self.pip_no_index,
            ),
            root_dir=root_dir,
        )
        pipelines = PipelineService(jobs, max_nodes=self.max_pipeline_nodes)
        schedules = ScheduleService(
            jobs,
            minimum_period=self.schedule_minimum_period,
            starting_deadline=self.schedule_starting_deadline,
            pipelines=pipelines,
        )
        dask_options = DaskClusters(parent=self)
        dask = DaskService(
            jobs,
            dask_options.root(jobs.job_dir),
            dask_options.settings(),
            environments=jobs.intake.runtimes.environments,
            kernel_python=self._kernel_python,
            images=images.path_of,
            environment_at=lambda prefix: next(
                (loc.name for loc in catalog.locate() if str(loc.prefix) == prefix), None
            ),
            package_source=envs.searcher.source,
            base_url=getattr(self.serverapp, "base_url", None) or "/",
        )
        advice = Advisor(jobs, headroom=self.job_advice_headroom, runs=self.job_advice_runs)
        # what this server or command starts (kernels, terminals, scripts) finds the clusters there:
        # jupyter_gpu_env.dask.connect(id)
        os.environ[DASK_DIR_ENV] = str(dask.root.absolute())
        return Library(
            envs=envs,
            images=images,
            jobs=jobs,
            schedules=schedules,
            pipelines=pipelines,
            dask=dask,
            advice=advice,
        )

    def build_services(self, root_dir: str) -> Services:
        """What a server holds: the library, and what only a server has (tasks, kernels, the sampler)."""
        lib = self.build_library(root_dir)
        # Each feature's timer is its own, beside the job poller (JobService's), not on it; only a server
        # runs them: a CLI beside it must not start the same due run.
        timers = Loops()
        timers.add("schedules", self.schedule_interval, lib.schedules.tick)
        # Pipelines move on where their backend does not hold dependencies itself (local, Kubernetes).
        timers.add("pipelines", self.job_refresh_interval, lib.pipelines.advance)
        # Dask clusters keep themselves; the server follows them for their records and the usage ledger.
        timers.add("dask", max(self.job_refresh_interval, 2.0), lib.dask.tick)
        batch_options = BatchKernels(parent=self)
        if self.job_gpu_idle_action == "cancel":
            idle = IdleEnforcer(
                lib.jobs,
                self.job_gpu_idle_seconds,
                self.job_gpu_idle_grace,
                exempt=() if batch_options.gpu_idle_applies else ("kernel",),
            )
            timers.add("gpu-idle", self.job_refresh_interval, idle.tick)
        self.gpu_readers = GpuReaders(self.gpu_recorded_source)
        sampler = Sampler(
            self.gpu_readers.read,
            interval=self.gpu_sample_interval,
            history_seconds=self.gpu_history_seconds,
            kernel_source=self._kernels,
            idle_seconds=self.gpu_idle_seconds,
        )
        tasks = TaskManager(Path(self.state_dir) / "tasks.json", recover=lib.envs.interrupted_note)
        kernels = ServerKernels(
            self._kernels,
            getattr(self.serverapp, "kernel_manager", None),
            getattr(self.serverapp, "session_manager", None),
        )
        batch_kernels = BatchKernelService(
            lib.jobs, batch_options, base_spec=self._kernel_spec, kernels=kernels
        )
        timers.add("batch-kernels", max(self.job_refresh_interval, 2.0), batch_kernels.tick)
        metrics = None
        if self.metrics_interval > 0:  # the ledger read for Jupyter Server's /metrics, never on its loop
            metrics = MetricsService(lib.jobs.store, sampler.latest, user=self.metrics_user())
            timers.add("metrics", self.metrics_interval, metrics.refresh)
        cluster = self.build_capacity(lib)
        container = self.image_kernel_container or None
        notifier = self.build_notifier(lib)
        lib.jobs.tracker.on_ended = notifier.ended
        return Services(
            library=lib,
            environments=EnvironmentOperations(
                lib.envs, tasks, kernels, self.max_gpu_checks, self.max_concurrent_plans
            ),
            images=ImageOperations(
                lib.images, lib.envs, tasks, kernels, container, self.max_concurrent_packs
            ),
            jobs=lib.jobs,
            sweeps=lib.sweeps,
            schedules=lib.schedules,
            pipelines=lib.pipelines,
            dask=lib.dask,
            batch_kernels=batch_kernels,
            advice=dataclasses.replace(
                lib.advice,
                kernels=lambda: snap.kernels if (snap := sampler.latest()) else [],
                devices=lambda: snap.gpus if (snap := sampler.latest()) else [],
            ),
            gpu=GpuOperations(sampler, kernels, cluster),
            tasks=tasks,
            notifications=notifier,
            timers=timers,
            metrics=metrics,
        )

    def build_capacity(self, lib: Library) -> CapacitySource:
        """The cluster the GPU panel reads: the one the Kubernetes backend talks to, configured in one place
        (its kubeconfig, context and ``capacity_ttl``), and read once for both where that backend runs."""
        if self.cluster_capacity != "kubernetes":
            return NoCapacity()
        backend = next((b for b in lib.jobs.backends.values() if b.kind == "kubernetes"), None)
        if backend is not None:
            return BackendCapacity(backend.capacity)
        from .backends.kubernetes.capacity import capacity_source  # the `kubernetes` extra's

        section = self.config.get("KubernetesBackend", {})
        ttl = float(section.get("capacity_ttl", 60.0))
        if "cluster_capacity_ttl" in self.config.get("GpuEnvApp", {}):
            self.log.warning(
                "c.GpuEnvApp.cluster_capacity_ttl is now c.KubernetesBackend.capacity_ttl (one cache for the "
                "backend and the panel); the older name is still read."
            )
            ttl = self.cluster_capacity_ttl
        return capacity_source(ttl, section)

    def build_notifier(self, lib: Library) -> Notifier:
        """Word when a job, sweep or scheduled run ends: e-mail through the site's SMTP, webhooks."""
        smtp = SmtpSettings(
            self.smtp_host,
            self.smtp_port,
            self.smtp_starttls,
            self.smtp_sender,
            self.smtp_username,
            self.smtp_password,
        )
        return Notifier(
            SettingsFile(Path(self.state_dir) / NOTIFICATIONS_FILE),
            smtp,
            self._public_url,
            lib.jobs.store.sweeps.get,
            schedule_name=lib.schedules.name_of,
            pipeline_of=lib.pipelines.get,
        )

    def _public_url(self) -> str:
        server = getattr(self.serverapp, "connection_url", "") if self.serverapp is not None else ""
        return public_base(self.public_url, os.environ, server)

    def take_secrets(self) -> None:
        """The site's secrets given in the server's environment become its configuration, then leave that
        environment, which every kernel, terminal and job runner the server starts would inherit (jupyter's
        own children too, not only those started through ``proc``, which drops them again anyway)."""
        self.smtp_password = self.smtp_password  # its default reads GPU_ENV_SMTP_PASSWORD: read it now
        for name in SECRET_VARIABLES:
            os.environ.pop(name, None)

    def initialize_settings(self) -> None:
        assert self.serverapp is not None  # linked before its settings are asked for
        self.take_secrets()  # before anything is started
        self.services = self.build_services(self.serverapp.root_dir)
        self.settings["gpu_env_services"] = self.services
        provisioner.use_service(self.services.batch_kernels)  # the provisioners Jupyter makes find it
        self.settings["gpu_env_max_body"] = self.max_request_bytes

    @staticmethod
    def openapi_document() -> str:
        """The REST API's OpenAPI document, as committed in docs/openapi.json."""
        return render_openapi()

    def initialize_handlers(self) -> None:
        self.handlers.extend(tornado_routes())
        self.handlers.append((DASHBOARD_ROUTE, DashboardHandler))

    async def _start_jupyter_server_extension(self, serverapp: object) -> None:
        await self.services.start()
        if self.freeze_startup_objects:
            # Everything the server made to start lives as long as it does. Frozen out of the
            # collector's view, a full collection no longer walks those hundreds of thousands of
            # objects: it took 100-160 ms with the GIL held, and the event loop waited for it.
            # (No collection first: it would be such a pause itself.)
            gc.freeze()

    async def stop_extension(self) -> None:
        await self.services.stop()
        provisioner.use_service(None)
        self.gpu_readers.close()
