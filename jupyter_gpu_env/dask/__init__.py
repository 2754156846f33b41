"""Dask clusters on the batch system, in a user's environment: the scheduler a batch job that keeps its own
workers (``contracts/dask/keeper/``, copied into each cluster's folder), the server's records and view of them
(``service.py``); each backend starts, observes and stops one through the launcher it offers
(``Backend.dask_launcher``, the contract in ``backends/dask.py``).

For notebooks and scripts, :func:`connect`: a ``distributed.Client`` to one of the user's clusters,
over its mutual TLS. Every cluster accepts connections only from holders of its own certificate and
key (``tls/`` in its folder, readable by its owner alone), so a plain ``Client("tls://…")`` is refused.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from distributed import Client

_ID = re.compile(r"^[0-9a-f]{12}$")


def connect(cluster_id: str, **client_options: Any) -> Client:
    """A ``distributed.Client`` connected to the Dask cluster ``cluster_id`` (as the sidebar, ``jupyter
    gpu-env dask list`` or ``GET dask/clusters`` name it), with the cluster's certificate loaded.

    The cluster's folder is found where the Jupyter server that started this kernel or terminal keeps
    them (``$JUPYTER_GPU_ENV_DASK_DIR``), else where ``jupyter gpu-env`` would (the same configuration
    files). Its scheduler's address is the one its keeper last reported. Extra keyword arguments go to
    ``Client`` (``timeout=``, ``asynchronous=``...). Raises ``LookupError`` for an unknown id and
    ``ConnectionError`` while the cluster does not run."""
    import distributed

    from ..contracts.dask.spec import CA_PEM, CERT_PEM, DIR_ENV, KEY_PEM
    from ..contracts.dask.state import read_state_or_damage

    if not _ID.fullmatch(cluster_id):
        raise LookupError(f"'{cluster_id}' is not a Dask cluster id (12 hexadecimal digits).")
    root = Path(os.environ.get(DIR_ENV) or _configured_root())
    found = sorted(root.glob(f"*-{cluster_id}"))
    if not found:
        raise LookupError(f"No Dask cluster {cluster_id} in {root}.")
    folder = found[0]
    state, damaged = read_state_or_damage(folder)
    if damaged:
        raise ConnectionError(f"Dask cluster {cluster_id}'s state.json cannot be read: {damaged}")
    if state is None:
        raise ConnectionError(f"Dask cluster {cluster_id} has not started yet; try again in a moment.")
    if state.state != "running" or not state.address:
        said = f" ({state.message})" if state.message else ""
        raise ConnectionError(f"Dask cluster {cluster_id} is {state.state}{said}; start a new one.")
    dist: Any = distributed  # untyped: its calls would be untyped calls to mypy
    security = dist.Security(
        tls_ca_file=str(folder / CA_PEM),
        tls_client_cert=str(folder / CERT_PEM),
        tls_client_key=str(folder / KEY_PEM),
        require_encryption=True,
    )
    client: Client = dist.Client(state.address, security=security, **client_options)
    return client


def _configured_root() -> Path:
    """Where the configured server keeps clusters: its configuration files read as the server and the
    CLI read them, its job folder resolved against its root as the job service resolves it."""
    from ..options import GpuEnvOptions
    from ..system.configfiles import load_file_config, root_dir
    from .options import DaskClusters

    config = load_file_config()
    job_dir = config.GpuEnvApp.get("job_dir", GpuEnvOptions.job_dir.default_value)
    return DaskClusters(config=config).root((Path(root_dir(None, config)) / job_dir).resolve())
