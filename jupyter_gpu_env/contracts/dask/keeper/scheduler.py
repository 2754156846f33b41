"""``python -m gpuenv_dask.scheduler``: a cluster's scheduler, as ``dask scheduler`` starts one, but
with the cluster's mutual TLS on every port it opens and the keeper preloaded.

distributed's own command can make the scheduler speak TLS, but its dashboard then serves anyone who
completes a TLS handshake: it loads a certificate but requires none of the client. Here the scheduler
is made in this process and its dashboard's TLS context is made to require the cluster's certificate
before the event loop ever runs again, so that no connection is accepted in between: only a holder of
the cluster's key (its owner's notebooks, the Jupyter server's authenticated proxy) sees a page.

Standard library and ``distributed`` only: it runs from the cluster's folder in the user's environment.
The files' names are those of ``jupyter_gpu_env.contracts.dask.spec`` (CA_PEM, CERT_PEM, KEY_PEM).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import ssl
import sys
from pathlib import Path
from typing import Any

CA_PEM = "tls/ca.pem"
CERT_PEM = "tls/cluster.pem"
KEY_PEM = "tls/cluster.key"
KEEPER = "gpuenv_dask.keeper"

log = logging.getLogger("gpuenv_dask.scheduler")


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m gpuenv_dask.scheduler")
    p.add_argument("--scheduler-file", required=True)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--dashboard-address", default=":0")
    p.add_argument("--idle-timeout", default=None)
    p.add_argument("--host", default=None)
    p.add_argument("--interface", default=None)
    return p.parse_args(argv)


def files(folder: Path) -> dict[str, str]:
    """The cluster's TLS files; a missing one ends the scheduler before it listens anywhere."""
    found = {"ca": folder / CA_PEM, "cert": folder / CERT_PEM, "key": folder / KEY_PEM}
    for what, path in found.items():
        if not path.is_file():
            raise SystemExit(f"gpuenv_dask: the cluster's TLS {what} file {path} is missing; not starting.")
    return {k: str(v) for k, v in found.items()}


def require_client_certificate(scheduler: Any, ca_file: str) -> None:
    """The dashboard's TLS context requires the cluster's certificate of every client.

    distributed builds that context (``Node.start_http_server``) from the dashboard TLS settings given
    in :func:`main`, with ``verify_mode`` left at CERT_NONE; tornado reads the context at each accept,
    so tightening it here, in the scheduler's constructor's thread before the loop runs, covers every
    connection. Anything else found (no server, no context) is refused rather than served openly."""
    server = getattr(scheduler, "http_server", None)
    if server is None:
        return  # no HTTP server at all: nothing listens
    ctx = getattr(server, "ssl_options", None)
    if not isinstance(ctx, ssl.SSLContext):
        raise SystemExit("gpuenv_dask: the dashboard would listen without TLS; not starting.")
    ctx.load_verify_locations(cafile=ca_file)
    ctx.verify_mode = ssl.CERT_REQUIRED


async def run(args: argparse.Namespace) -> None:
    import dask
    from distributed import Scheduler

    folder = Path(os.environ.get("GPU_ENV_DASK_FOLDER") or Path(args.scheduler_file).parent)
    tls = files(folder)
    dask.config.set(
        {
            "distributed.comm.require-encryption": True,
            "distributed.scheduler.dashboard.tls.ca-file": tls["ca"],
            "distributed.scheduler.dashboard.tls.cert": tls["cert"],
            "distributed.scheduler.dashboard.tls.key": tls["key"],
        }
    )
    kwargs: dict[str, Any] = {}
    if args.idle_timeout:
        kwargs["idle_timeout"] = args.idle_timeout
    scheduler: Any = Scheduler(
        security={
            "tls_ca_file": tls["ca"],
            "tls_scheduler_cert": tls["cert"],
            "tls_scheduler_key": tls["key"],
            "require_encryption": True,
        },
        protocol="tls",
        host=args.host,
        port=args.port,
        interface=args.interface,
        dashboard_address=args.dashboard_address,
        scheduler_file=args.scheduler_file,
        preload=[KEEPER],
        **kwargs,
    )
    require_client_certificate(scheduler, tls["ca"])  # no await since the constructor: nothing accepted

    loop = asyncio.get_running_loop()
    signalled = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, signalled.set)

    async def serve() -> None:
        await scheduler
        await scheduler.finished()

    async def close_on_signal() -> None:
        await signalled.wait()
        # the keeper's teardown runs in close: it cancels the workers (scancel's SIGTERM lands here)
        await scheduler.close(reason="signal")

    tasks = [asyncio.create_task(serve()), asyncio.create_task(close_on_signal())]
    done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    for task in done:
        task.result()
    log.info("Stopped scheduler at %r", scheduler.address)


def main(argv: list[str] | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s - %(name)s - %(levelname)s - %(message)s")
    asyncio.run(run(parse(sys.argv[1:] if argv is None else argv)))


if __name__ == "__main__":
    main()
