"""Which launcher each kind of backend has (a backend of another kind cannot run Dask clusters)."""

from __future__ import annotations

from ..batch.backend import Backend
from ..batch.local.backend import LocalBackend
from ..batch.slurm.backend import SlurmBackend
from ..errors import Conflict
from .launchers import DaskLauncher, DaskSettings
from .local import LocalLauncher
from .slurm.launcher import SlurmLauncher


def launcher_for(backend: Backend, settings: DaskSettings) -> DaskLauncher:
    """The launcher of ``backend``; a Conflict naming the kinds that can, for any other."""
    if isinstance(backend, LocalBackend):
        return LocalLauncher(backend, settings)
    if isinstance(backend, SlurmBackend):
        return SlurmLauncher(backend, settings)
    try:  # the `kubernetes` extra
        from ..batch.kubernetes.backend import KubernetesBackend
        from .kubernetes.launcher import KubeLauncher
    except ImportError:
        pass
    else:
        if isinstance(backend, KubernetesBackend):
            return KubeLauncher(backend, settings)
    raise Conflict(
        f"The '{backend.name}' backend cannot run Dask clusters; the local, SLURM and Kubernetes ones can.",
        reason="dask_unsupported",
    )
