"""ServerKernels: what is removed never has a kernel of this server running from it.

The HTTP tests delete environments and images under real kernels; these pin the rule itself: found by
kernelspec name or by the kernel's own executable, named in the 409, shut down only when asked.
"""

import os
import sys
from pathlib import Path

import pytest

from jupyter_gpu_env.errors import Conflict
from jupyter_gpu_env.gpu.kernel_processes import RunningKernel
from jupyter_gpu_env.services.kernels import ServerKernels


class Manager:
    """The two calls of Jupyter's kernel manager that ServerKernels makes, recorded."""

    def __init__(self, ids: list[str]) -> None:
        self.ids = ids
        self.shut_down: list[str] = []

    def list_kernel_ids(self) -> list[str]:
        return list(self.ids)

    async def shutdown_kernel(self, kernel_id: str) -> None:
        self.shut_down.append(kernel_id)
        self.ids.remove(kernel_id)


# This test's own process stands for a kernel whose Python lives under a prefix.
HERE = RunningKernel("k-exe", "python3", os.getpid(), "train.ipynb")
BY_SPEC = RunningKernel("k-spec", "env-analysis", 2**22 + 7, None)  # no such process: found by name
OTHER = RunningKernel("k-other", "python3", 2**22 + 9, "other.ipynb")


def kernels(*running: RunningKernel) -> ServerKernels:
    async def lister() -> list[RunningKernel]:
        return list(running)

    return ServerKernels(lister, Manager([k.kernel_id for k in running]))


async def test_kernels_in_the_way_are_named_and_left_running():
    prefix = Path(os.path.realpath(sys.executable)).parents[1]
    server = kernels(HERE, BY_SPEC, OTHER)
    with pytest.raises(Conflict) as refused:
        await server.clear(prefix, {"env-analysis"}, shutdown=False, what="'analysis'")
    assert refused.value.reason == "kernels_running"
    assert "2 kernels (train.ipynb, kernel k-spec) of this server run in 'analysis'" in refused.value.message
    assert [d["kernel_id"] for d in refused.value.details or []] == ["k-exe", "k-spec"]
    assert server.manager.shut_down == []


async def test_asked_to_it_shuts_down_exactly_those():
    prefix = Path(os.path.realpath(sys.executable)).parents[1]
    server = kernels(HERE, BY_SPEC, OTHER)
    await server.clear(prefix, {"env-analysis"}, shutdown=True, what="'analysis'")
    assert server.manager.shut_down == ["k-exe", "k-spec"]
    assert server.running_ids() == {"k-other"}


async def test_nothing_in_the_way_is_no_error(tmp_path):
    server = kernels(OTHER)
    await server.clear(tmp_path, {"env-analysis"}, shutdown=False, what="'analysis'")
    assert server.manager.shut_down == []


def test_without_a_server_no_kernel_runs():
    assert ServerKernels().running_ids() == set()
