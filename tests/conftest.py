"""Root of the tests: fixtures every folder may use.

The folders mirror the package (``jobs/``, ``backends/local/``, ``backends/slurm/`` (with ``dask/``),
``backends/kubernetes/`` (with ``dask/``), ``schedules/``, ``pipelines/``, ``dask/``, ``envs/``, ``images/``,
``gpu/``, ``handlers/``, ``cli/``). Fixtures that more than one folder needs live in
plugin modules beside this file, registered below (``pytest_plugins`` is allowed only here):
``conda_fixtures`` (the demo conda channel and environment, environment services) and
``batch_fixtures`` (the ``batch`` workspace of a JobService on the local backend). Plain helpers
are in ``helpers.py``.
"""

from __future__ import annotations

import sys
import types

import pytest

# Before anything imports it: helpers.py asserts, and its failures should read like a test's.
pytest.register_assert_rewrite("helpers")

pytest_plugins = ["pytest_jupyter.jupyter_server", "conda_fixtures", "batch_fixtures"]


@pytest.fixture
def jp_server_config(jp_server_config):
    """Enable the extension with a fast sampler for every server the tests start."""
    return {
        "ServerApp": {"jpserver_extensions": {"jupyter_gpu_env": True}},
        "GpuEnvApp": {"gpu_sample_interval": 0.2},
    }


@pytest.fixture
def api(jp_fetch):
    """Call the extension's REST API; returns the tornado response (raises on HTTP errors)."""

    async def call(*parts: str, method: str = "GET", **kwargs):
        return await jp_fetch("gpu-env", "api", *parts, method=method, **kwargs)

    return call


DRIVER_NOT_LOADED = 9  # NVML's return code when no NVIDIA kernel module is loaded


@pytest.fixture
def without_gpu_driver(monkeypatch):
    """This process sees no NVIDIA driver, whatever this machine has.

    The NVML bindings are replaced by a stand-in whose ``nvmlInit`` fails as it does where no driver
    is loaded, so GPU readers (of the CLI, or of a server started after this fixture) answer
    ``no_driver``. List it before ``api`` or ``jp_serverapp`` so that it applies first.
    """

    class NVMLError(Exception):
        def __init__(self, value: int) -> None:
            super().__init__(f"NVML error {value}: Driver Not Loaded")
            self.value = value

    def nvml_init() -> None:
        raise NVMLError(DRIVER_NOT_LOADED)

    fake = types.ModuleType("pynvml")
    fake.NVMLError = NVMLError  # type: ignore[attr-defined]
    fake.nvmlInit = nvml_init  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pynvml", fake)
