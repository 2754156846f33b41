"""``c.BatchKernels.*``: how kernels on the batch system start, wait and end, declared once with their help
and defaults (rendered into docs/configuration.md with the other options)."""

from __future__ import annotations

from traitlets import Bool, Enum, Float, Int, Unicode
from traitlets.config import Configurable


class BatchKernels(Configurable):
    launch_timeout = Float(
        1800.0,
        min=10.0,
        config=True,
        help="Seconds a batch kernel may wait (queued, then starting on its node) before its start fails "
        "with a message saying where it waited; its job is cancelled, so nothing is left queued.",
    )
    default_walltime = Int(
        120,
        min=1,
        config=True,
        help="Minutes a batch kernel may run when it was registered without a walltime. The notebook is "
        "told ten minutes before it runs out.",
    )
    bind = Enum(
        ["loopback", "hostname"],
        default_value=None,
        allow_none=True,
        config=True,
        help="Where a batch kernel listens on its node: `loopback` (127.0.0.1: only where the server runs "
        "on the same machine, as with the local backend or a single-node SLURM) or `hostname` (the "
        "address the node's name resolves to, which the server must reach). Default: `loopback` for the "
        "local backend, `hostname` for the others. The kernel's ports take messages signed with its "
        "key only (HMAC-SHA256, the key 0600 in the job's folder).",
    )
    interface = Unicode(
        "",
        config=True,
        help="The network interface a batch kernel listens on on its node (e.g. `ib0`, `eth1`): its first "
        "IPv4 address, where the node's name resolves to an address the server cannot reach. Takes "
        "precedence over c.BatchKernels.bind off the local backend; a node without it ends the kernel's "
        "job saying so.",
    )
    orphan_timeout = Int(
        300,
        min=30,
        config=True,
        help="Seconds a batch kernel's host waits without a word from its server before it ends its job "
        "itself, so a lost server never holds a GPU.",
    )
    keep_on_shutdown = Bool(
        False,
        config=True,
        help="Keep batch kernels' jobs running when the Jupyter server stops, and take them back when it "
        "starts again (within c.BatchKernels.orphan_timeout); by default a stopping server ends them.",
    )
    gpu_idle_applies = Bool(
        True,
        config=True,
        help="Whether the site's GPU idle policy (c.GpuEnvApp.job_gpu_idle_seconds, _action, _grace) "
        "applies to batch kernels as to jobs: warned, and cancelled where the action is `cancel`. An "
        "interactive kernel's GPU idles between cells, so a site may set a longer idle time or exempt them.",
    )
    ended_kept = Int(
        600,
        min=0,
        config=True,
        help="Seconds an ended batch kernel session stays listed (with why it ended) before it is dropped.",
    )
