"""The ``c.GpuEnvApp.*`` options of the extension's Prometheus metrics. Declared here, beside what uses
them; ``GpuEnvOptions`` is made of them, so they are set and documented as every other option."""

from __future__ import annotations

import getpass
import os

from traitlets import Bool, Float
from traitlets.config import Configurable


class MetricsOptions(Configurable):
    """What the extension adds to Jupyter Server's ``/metrics``."""

    metrics_interval = Float(
        30.0,
        min=0.0,
        config=True,
        help="Seconds between two readings of the job records for Jupyter Server's /metrics (jobs by "
        "state, GPU-seconds allocated and used, energy, idle GPU time, queue waits), on a connection and "
        "thread of its own: /metrics serves the last reading, never reading the database itself, and a "
        "round where nothing changed and nothing runs on a GPU reads nothing. 0: the extension adds no "
        "series to /metrics.",
    )
    metrics_user_label = Bool(
        False,
        config=True,
        help="Give every jupyter_gpu_env_* series on /metrics a `user` label: $JUPYTERHUB_USER, else the "
        "account the server runs as. Off by default: a Prometheus that scrapes JupyterHub's pods can take "
        "the user from the pod's labels instead (docs/admin-metrics.md).",
    )

    def metrics_user(self) -> str | None:
        """The ``user`` label's value, or None when the site does not ask for it."""
        if not self.metrics_user_label:
            return None
        if hub_user := os.environ.get("JUPYTERHUB_USER"):
            return hub_user
        try:
            return getpass.getuser()
        except (KeyError, OSError):  # an account with no name (a container's bare uid)
            return str(os.getuid())
