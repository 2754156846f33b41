from __future__ import annotations

import pytest

pytest_plugins = ["pytest_jupyter.jupyter_server"]


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
