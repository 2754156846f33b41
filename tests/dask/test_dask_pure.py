"""The pure parts of Dask clusters: lifetimes, the commands, the environment's check, how a cluster stands."""

from __future__ import annotations

import socket
import ssl
import stat
import threading
import time
from pathlib import Path

import pytest

from jupyter_gpu_env.backends.dask import PendingPlace, SchedulerSeen
from jupyter_gpu_env.contracts.dask.folder import client_ssl_context, make_credentials
from jupyter_gpu_env.contracts.dask.keeper import scheduler as incluster
from jupyter_gpu_env.contracts.dask.spec import (
    CA_PEM,
    CERT_PEM,
    KEY_PEM,
    Network,
    WorkerShape,
    lifetime_for,
    scheduler_args,
    worker_args,
)
from jupyter_gpu_env.contracts.dask.state import KeeperState
from jupyter_gpu_env.dask import envcheck
from jupyter_gpu_env.dask.records import ClusterRecord
from jupyter_gpu_env.dask.view import cluster, standing
from jupyter_gpu_env.errors import Conflict
from jupyter_gpu_env.models.resources import JobResources


@pytest.mark.parametrize(
    ("walltime", "lifetime", "stagger"),
    [(3600, 3300, 150), (60, 40, 10), (24 * 3600, 24 * 3600 - 300, 150), (600, 540, 30)],
)
def test_workers_retire_minutes_before_the_walltime_and_never_after_it(walltime, lifetime, stagger):
    life = lifetime_for(walltime)
    assert (life.lifetime, life.stagger) == (lifetime, stagger)
    # distributed spreads the lifetime by ±stagger (worker.py: lifetime += (random() * 2 - 1) * stagger):
    # the latest retirement is still before the walltime
    assert life.lifetime + life.stagger < walltime
    assert life.lifetime - life.stagger >= walltime / 2


def test_the_commands_find_the_scheduler_by_its_file_and_speak_tls_with_the_clusters_certificate(tmp_path):
    life = lifetime_for(3600)
    args = worker_args(tmp_path, WorkerShape(threads=4, memory_bytes=2 << 30), life, Network())
    assert args[:2] == ["-m", "distributed.cli.dask_worker"]
    assert args[args.index("--scheduler-file") + 1] == str(tmp_path / "scheduler.json")
    assert args[args.index("--nthreads") + 1] == "4" and args[args.index("--memory-limit") + 1] == str(
        2 << 30
    )
    assert (
        args[args.index("--lifetime") + 1] == "3300s" and args[args.index("--lifetime-stagger") + 1] == "150s"
    )
    tls = {
        "--protocol": "tls",
        "--tls-ca-file": str(tmp_path / "tls/ca.pem"),
        "--tls-cert": str(tmp_path / "tls/cluster.pem"),
        "--tls-key": str(tmp_path / "tls/cluster.key"),
    }
    assert {k: args[args.index(k) + 1] for k in tls} == tls and "--no-dashboard" in args
    assert "--host" not in args  # on a batch system a worker listens where its node reaches the scheduler
    cuda = worker_args(tmp_path, WorkerShape(threads=4, cuda=True, gpu_units=1), life, Network(loopback=True))
    assert cuda[:3] == ["-m", "dask_cuda.cli", "worker"] and cuda[cuda.index("--nthreads") + 1] == "1"
    assert {k: cuda[cuda.index(k) + 1] for k in tls} == tls
    assert cuda[cuda.index("--host") + 1] == "127.0.0.1"
    assert cuda[cuda.index("--dashboard-address") + 1] == "127.0.0.1:0"

    sched = scheduler_args(tmp_path, 600, Network(interface="ib0"))
    assert sched[:2] == ["-m", "gpuenv_dask.scheduler"]  # the keeper's entry point: TLS, keeper preloaded
    assert sched[sched.index("--idle-timeout") + 1] == "600s" and sched[-2:] == ["--interface", "ib0"]
    assert sched[sched.index("--dashboard-address") + 1] == ":0"  # every interface, behind mutual TLS
    local = scheduler_args(tmp_path, 600, Network(loopback=True, interface="ib0"))
    assert local[local.index("--host") + 1] == "127.0.0.1" and "--interface" not in local
    assert local[local.index("--dashboard-address") + 1] == "127.0.0.1:0"
    # the in-cluster entry point names the files the server writes (it cannot import this package)
    assert (incluster.CA_PEM, incluster.CERT_PEM, incluster.KEY_PEM) == (CA_PEM, CERT_PEM, KEY_PEM)


def _handshake(server: ssl.SSLContext, client: ssl.SSLContext) -> str:
    """A TLS handshake between the two contexts over a socket pair; what the server saw of the client."""
    a, b = socket.socketpair()
    with a, b:
        out: dict[str, object] = {}

        def serve() -> None:
            try:
                with server.wrap_socket(a, server_side=True) as s:
                    out["peer"] = s.getpeercert()
            except (ssl.SSLError, OSError) as e:
                out["error"] = e

        t = threading.Thread(target=serve)
        t.start()
        try:
            with client.wrap_socket(b) as c:
                c.sendall(b"x")
        except (ssl.SSLError, OSError):
            pass
        t.join(10)
        if "error" in out:
            raise out["error"]  # type: ignore[misc]
        peer = out["peer"]
        return str(dict(x[0] for x in peer["subject"])["commonName"])  # type: ignore[index]


def test_each_cluster_has_its_own_authority_and_a_key_only_its_owner_reads(tmp_path):
    """The files pass OpenSSL's strict checks (Python 3.13's default) both ways, mutual TLS holds, and
    another cluster's certificate is refused."""
    (tmp_path / "a").mkdir()
    make_credentials(tmp_path / "a", "aaaaaaaaaaaa", 3600)
    (tmp_path / "b").mkdir()
    make_credentials(tmp_path / "b", "bbbbbbbbbbbb", 3600)
    for name in ("ca.pem", "cluster.pem", "cluster.key"):
        assert stat.S_IMODE((tmp_path / "a" / "tls" / name).stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "a" / "tls").stat().st_mode) == 0o700
    with pytest.raises(FileExistsError):  # never made over what is there
        make_credentials(tmp_path / "a", "aaaaaaaaaaaa", 3600)

    def server_of(folder: Path) -> ssl.SSLContext:  # as distributed makes a scheduler's
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=str(folder / "tls/ca.pem"))
        ctx.verify_flags |= ssl.VERIFY_X509_STRICT
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_cert_chain(str(folder / "tls/cluster.pem"), str(folder / "tls/cluster.key"))
        return ctx

    def client_of(folder: Path) -> ssl.SSLContext:
        ctx = client_ssl_context(folder)
        ctx.verify_flags |= ssl.VERIFY_X509_STRICT
        return ctx

    assert _handshake(server_of(tmp_path / "a"), client_of(tmp_path / "a")) == "dask-aaaaaaaaaaaa"
    with pytest.raises(ssl.SSLError):  # a certificate of another cluster is nobody here
        _handshake(server_of(tmp_path / "a"), client_of(tmp_path / "b"))
    nocert = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=str(tmp_path / "a/tls/ca.pem"))
    nocert.check_hostname = False
    with pytest.raises(ssl.SSLError):  # and no certificate at all is nobody either
        _handshake(server_of(tmp_path / "a"), nocert)


def _prefix(tmp_path: Path, *dists: str) -> Path:
    site = tmp_path / "env" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (tmp_path / "env" / "bin").mkdir()
    (tmp_path / "env" / "bin" / "python").touch()
    for d in dists:
        (site / d).mkdir()
    return tmp_path / "env"


def test_the_environment_check_names_what_to_add(tmp_path):
    bare = _prefix(tmp_path / "a", "numpy-2.0.0.dist-info")
    with pytest.raises(Conflict) as e:
        envcheck.check(bare, "analysis", gpus=False)
    assert e.value.reason == "dask_not_installed"
    # the dashboard's bokeh is asked for with distributed where it is missing too
    assert e.value.details == [
        {"environment": "analysis", "prefix": str(bare), "packages": ["distributed", "bokeh"]}
    ]
    drawn = _prefix(tmp_path / "d", "bokeh-3.4.0.dist-info")
    with pytest.raises(Conflict) as e:
        envcheck.check(drawn, "analysis", gpus=False)
    assert e.value.details is not None and e.value.details[0]["packages"] == ["distributed"]
    odd = _prefix(tmp_path / "b", "dask-2024.1.0.dist-info", "distributed-2024.8.0.dist-info")
    with pytest.raises(Conflict) as e:
        envcheck.check(odd, None, gpus=False)
    assert e.value.reason == "dask_versions_differ" and "dask==2024.8.0" in e.value.message
    good = _prefix(
        tmp_path / "c",
        "dask-2024.8.0.dist-info",
        "distributed-2024.8.0.dist-info",
        "dask_cuda-24.8.2.dist-info",
    )
    ready = envcheck.check(good, "gpu", gpus=True)
    assert (ready.distributed, ready.dask_cuda) == ("2024.8.0", "24.8.2")
    assert envcheck.check(good, "gpu", gpus=False).dask_cuda is None


def _record(**kw) -> ClusterRecord:
    base = dict(
        id="0123456789ab",
        name="c",
        backend="slurm",
        folder="/x",
        created_at=time.time() - 60,
        resources=JobResources(mig_profile="3g.40gb"),
        threads_per_worker=1,
        walltime_seconds=3600,
        lifetime_seconds=3240,
        idle_timeout_seconds=3600,
        workers=2,
    )
    return ClusterRecord(**{**base, **kw})


def _state(**kw) -> KeeperState:
    now = time.time()
    base = dict(
        format=1,
        updated=now,
        started=now - 30,
        state="running",
        address="tcp://10.0.0.5:4242",
        dashboard_port=8787,
        requested=3,
        running=2,
        pending_count=1,
        pending=[{"name": "77_2", "state": "queued", "reason": "Priority"}],
        worker_seconds=7200,
    )
    return KeeperState.model_validate({**base, **kw})


def test_how_a_cluster_stands():
    r = _record()
    queued = standing(r, SchedulerSeen("queued", place=3, reason="Resources"), None)
    assert (queued.state, queued.message) == (
        "starting",
        "The scheduler waits in the queue (place 3): Resources.",
    )
    one = _record(layout="one_allocation", together=2)
    assert standing(one, SchedulerSeen("queued", place=1), None).message == (
        "The cluster's one job waits in the queue (place 1)."
    )
    assert standing(r, SchedulerSeen("running", host="n1"), None).state == "starting"
    seen = SchedulerSeen("running", host="n1", workers=(PendingPlace("77_2", 5, "Priority"),))
    at = standing(r, seen, _state())
    shown = cluster(r, at, seen, _state(), "/u/")
    assert shown.state == "running" and shown.dashboard == "/u/gpu-env/dask/0123456789ab/status"
    assert shown.layout == "separate_jobs" and shown.workers.in_allocation == 0
    both = cluster(one, at, seen, _state(in_allocation=2), "/u/")
    assert both.layout == "one_allocation" and both.workers.in_allocation == 2
    assert (shown.workers.requested, shown.workers.running, shown.workers.pending) == (3, 2, 1)
    assert shown.workers.pending_workers[0].place == 5
    assert shown.worker_hours == 2 and shown.gpu_hours == pytest.approx(2 * 3 / 7)
    idle = standing(
        r,
        SchedulerSeen("ended"),
        _state(state="stopped", ended="idle", message="Shut down after 3600 s unused."),
    )
    assert (idle.state, idle.message, idle.final, idle.clean) == (
        "stopped",
        "Shut down after 3600 s unused.",
        True,
        False,
    )
    crashed = standing(r, SchedulerSeen("ended"), _state(), "MemoryError")
    assert (
        crashed.state == "failed" and crashed.clean and crashed.message.endswith("Its log ends: MemoryError")
    )
    never = standing(r, SchedulerSeen("gone"), None, "ModuleNotFoundError: No module named 'distributed'")
    assert never.state == "failed" and "before it started" in never.message
    asked = standing(_record(state="stopping"), SchedulerSeen("ended"), None)
    assert (asked.state, asked.message) == ("stopped", "Shut down.")
    ended = cluster(_record(state="stopped"), standing(_record(state="stopped"), None, None), None, None, "/")
    assert ended.scheduler_address is None and ended.workers.running == 0 and ended.dashboard is None


async def test_the_refusal_says_where_each_package_comes_from():
    asked: list[str] = []

    async def source(spec: str) -> str:
        asked.append(spec)
        return "conda" if spec.startswith("bokeh") else "pypi"

    refusal = Conflict("no distributed", details=[{"packages": ["distributed", "bokeh"]}])
    await envcheck.place(refusal, source)
    assert refusal.details == [
        {"packages": ["distributed", "bokeh"], "conda": ["bokeh"], "pip": ["distributed"]}
    ]
    assert asked == ["distributed", "bokeh"]
    unasked = Conflict("no distributed", details=[{"packages": ["distributed"]}])
    await envcheck.place(unasked, None)  # nothing to ask: conda, as before
    assert unasked.details == [{"packages": ["distributed"], "conda": ["distributed"], "pip": []}]
