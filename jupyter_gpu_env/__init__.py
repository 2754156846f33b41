"""jupyter-gpu-env: conda environments, squashfs images, batch jobs and GPU/MIG usage in JupyterLab."""

from ._version import __version__

__all__ = ["__version__"]


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    return [{"src": "labextension", "dest": "jupyter-gpu-env"}]


def _jupyter_server_extension_points() -> list[dict[str, object]]:
    from .app import GpuEnvApp

    return [{"module": "jupyter_gpu_env", "app": GpuEnvApp}]
