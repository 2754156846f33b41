"""A kmock API server on loopback (as tests/backends/kubernetes/ starts one) and a cluster spec to build.

No ``__init__.py`` here nor in tests/dask/: a package named ``dask`` or ``kubernetes`` would shadow the
libraries of those names; this folder's modules have names of their own instead."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import kmock_server

from jupyter_gpu_env.backends.dask import Placement
from jupyter_gpu_env.contracts.dask.spec import ClusterSpec, Network, WorkerShape, lifetime_for, worker_args

k8s = pytest.importorskip("jupyter_gpu_env.backends.kubernetes.objects", reason="the `kubernetes` extra")

NS = "jhub"
CLUSTER_ID = "0123456789ab"


def make_spec(root: Path, *, name: str = "My analysis", cuda: bool = False, **kw: Any) -> ClusterSpec:
    folder = root / "dask" / CLUSTER_ID
    shape = WorkerShape(threads=2, memory_bytes=4 << 30, cpus=2, cuda=cuda)
    life = lifetime_for(3600)
    base: dict[str, Any] = dict(
        id=CLUSTER_ID, name=name, backend="kubernetes", created_at=time.time(), folder=str(folder),
        python=str(root / "envs" / "ana" / "bin" / "python"), workers=2, worker=shape, walltime_seconds=3600,
        lifetime=life, idle_timeout_seconds=1800, worker_args=worker_args(folder, shape, life, Network()),
        pool={"kind": "kubernetes"},
    )  # fmt: skip
    base.update(kw)
    return ClusterSpec(**base)


def placement(**kw: Any) -> Placement:
    base: dict[str, Any] = dict(queue=None, cpus=2, memory_bytes=4 << 30, gpus=None, mig_profile=None)
    base.update(kw)
    return Placement(**base)


def settings(root: Path, **kw: Any) -> Any:
    base: dict[str, Any] = dict(
        image="quay.io/jupyter/scipy-notebook:2024-05-27",
        namespace=NS,
        user="alice",
        volumes=({"name": "home", "persistentVolumeClaim": {"claimName": "claim-alice"}},),
        volume_mounts=({"name": "home", "mountPath": str(root)},),
    )
    base.update(kw)
    return k8s.K8sSettings(**base)


@pytest.fixture(name="emulator")
def emulator_fixture(jp_asyncio_loop) -> Iterator[Any]:
    with kmock_server(jp_asyncio_loop) as emulator:
        yield emulator


def copied_make_pool(folder: Path) -> Any:
    """``make_pool`` as the scheduler's pod has it: from the keeper's package copied into the cluster's
    folder, with the backend's pool module beside it; imported under a name of its own per folder, so
    two clusters' copies never mix."""
    import importlib
    import importlib.util
    import sys

    name = f"gpuenv_dask_{abs(hash(str(folder)))}"
    if name not in sys.modules:
        package = folder / "gpuenv_dask"
        spec = importlib.util.spec_from_file_location(
            name, package / "__init__.py", submodule_search_locations=[str(package)]
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return importlib.import_module(f"{name}.pools").make_pool
