"""The server extension: configuration, routes, and the lifetime of background services."""

from __future__ import annotations

from pathlib import Path

from jupyter_core.paths import jupyter_data_dir
from jupyter_server.extension.application import ExtensionApp
from traitlets import Float, Unicode, default

from ._version import __version__
from .gpu.kernels import KernelInfo, kernel_table
from .gpu.readers import probe_gpu
from .gpu.sampler import Sampler
from .handlers import tornado_routes
from .services import Services
from .tasks import TaskManager


class GpuEnvApp(ExtensionApp):
    """jupyter-gpu-env: environments, images, batch jobs and GPU usage for shared GPU platforms."""

    name = "jupyter_gpu_env"
    version = __version__
    description = __doc__
    # The frontend is a prebuilt lab extension; this server extension serves only the REST API.
    load_other_extensions = True

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
    state_dir = Unicode(
        config=True,
        help="Where the extension keeps its own state (task records). Default: a `gpu-env` folder in "
        "the user's Jupyter data directory.",
    )

    @default("state_dir")
    def _default_state_dir(self) -> str:
        return str(Path(jupyter_data_dir()) / "gpu-env")

    async def _kernels(self) -> list[KernelInfo]:
        """This server's kernels, with the notebook of each kernel's session."""
        sessions = await self.serverapp.session_manager.list_sessions()
        paths = {s["kernel"]["id"]: s.get("path") for s in sessions if s.get("kernel")}
        return kernel_table(self.serverapp.kernel_manager, paths)

    def initialize_settings(self) -> None:
        sampler = Sampler(
            probe_gpu,
            interval=self.gpu_sample_interval,
            history_seconds=self.gpu_history_seconds,
            kernel_source=self._kernels,
        )
        tasks = TaskManager(Path(self.state_dir) / "tasks.json")
        self.services = Services(sampler=sampler, tasks=tasks)
        self.settings["gpu_env_services"] = self.services

    def initialize_handlers(self) -> None:
        self.handlers.extend(tornado_routes())

    async def _start_jupyter_server_extension(self, serverapp: object) -> None:
        self.services.sampler.start()

    async def stop_extension(self) -> None:
        await self.services.stop()
