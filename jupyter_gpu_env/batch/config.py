"""traitlets configuration of each backend: `c.LocalBackend.*` (and later `c.SlurmBackend.*`, ...).

Each class is only configuration; ``build()`` makes the backend object the job service drives.
"""

from __future__ import annotations

import sys

from traitlets import Float, Int, Unicode
from traitlets.config import Configurable

from . import local


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
        help="GPUs a job may ask for on this machine; -1 takes no position (no check), 0 refuses GPU jobs.",
    )
    max_time_limit = Int(
        0,
        min=0,
        config=True,
        help="Longest time limit a job may ask for, in seconds (0: no ceiling).",
    )

    def build(self, name: str = "local") -> local.LocalBackend:
        return local.LocalBackend(
            name,
            max_concurrent=self.max_concurrent,
            python=self.python or sys.executable,
            kill_grace=self.kill_grace,
            gpu_count=None if self.gpu_count < 0 else self.gpu_count,
            max_time_limit_seconds=self.max_time_limit or None,
        )
