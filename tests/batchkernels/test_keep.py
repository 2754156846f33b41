"""What a stopping server does with its batch kernels: ends their jobs by default, or, with
``c.BatchKernels.keep_on_shutdown``, leaves them running and takes them back when it starts again — the
same kernel, its variables still there, under its own kernel id."""

from __future__ import annotations

import gc

import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.multikernelmanager import AsyncMultiKernelManager

from jupyter_gpu_env.batchkernels import provisioner
from jupyter_gpu_env.batchkernels.options import BatchKernels
from jupyter_gpu_env.batchkernels.service import BatchKernelService
from jupyter_gpu_env.models.kernels.batch import BatchKernelRequest
from jupyter_gpu_env.services.kernels import ServerKernels


@pytest.fixture(autouse=True)
def _no_service_after():
    yield
    provisioner.use_service(None)


def _server(batch, tmp_path, *, keep: bool):
    """What one start of a server builds: its job service, its kernel manager, its batch kernels."""
    jobs = batch.service()
    manager = AsyncMultiKernelManager(
        kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(tmp_path / "kernels")]),
        connection_dir=str(tmp_path),  # as a server's runtime folder: kept over its restart
    )
    options = BatchKernels(keep_on_shutdown=keep, orphan_timeout=120)
    service = BatchKernelService(
        jobs, options, base_spec=lambda name: None, data_dir=tmp_path, kernels=ServerKernels(manager=manager)
    )
    provisioner.use_service(service)
    return jobs, manager, service


async def _run(manager, kernel_id: str, code: str) -> str:
    client = manager.get_kernel(kernel_id).client()
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=60)
        out: list[str] = []
        await client.execute_interactive(
            code, timeout=60, output_hook=lambda m: out.append(m["content"].get("text", ""))
        )
        return "".join(out).strip()
    finally:
        client.stop_channels()


async def test_kept_over_a_restart_and_taken_back_with_its_state(batch, tmp_path):
    jobs, manager, service = _server(batch, tmp_path, keep=True)
    name = (await service.register(BatchKernelRequest(kernel="python3", walltime=30))).kernel_name
    kid = await manager.start_kernel(kernel_name=name)
    assert await _run(manager, kid, "x = 41 + 1; print('set')") == "set"
    job_id = (await service.get(name)).sessions[0].job_id

    # The server stops: nothing is shut down, the job runs on.
    await service.stop()
    await manager.shutdown_all()
    assert manager.list_kernel_ids() == []
    await jobs.stop()
    del manager
    gc.collect()  # the stopped server's kernel manager goes: its ZeroMQ context ends, nothing left open

    jobs, manager, service = _server(batch, tmp_path, keep=True)
    try:
        await jobs.start()
        assert (await jobs.get(job_id)).state == "running"
        assert await service.take_back() == [kid]
        assert await _run(manager, kid, "print(x)") == "42"  # the same kernel: its state is there
        session = (await service.get(name)).sessions[0]
        assert (session.kernel_id, session.job_id, session.state) == (kid, job_id, "running")
        await manager.shutdown_kernel(kid)
        done = await batch.wait_for(jobs, job_id, lambda j: j.state == "succeeded")
        assert done.reason == "shut_down"
    finally:
        await manager.shutdown_all(now=True)
        await jobs.stop()


async def test_by_default_a_stopping_server_ends_its_batch_kernels(batch, tmp_path):
    jobs, manager, service = _server(batch, tmp_path, keep=False)
    try:
        name = (await service.register(BatchKernelRequest(kernel="python3", walltime=30))).kernel_name
        kid = await manager.start_kernel(kernel_name=name)
        job_id = (await service.get(name)).sessions[0].job_id
        await service.stop()
        done = await batch.wait_for(jobs, job_id, lambda j: j.state == "succeeded")
        assert (done.reason, done.message) == ("shut_down", "The Jupyter server stopped.")
        assert await service.take_back() == []  # nothing kept, nothing taken back
        assert kid in manager.list_kernel_ids()  # Jupyter shuts it down itself next; the job is gone already
    finally:
        await manager.shutdown_all(now=True)
        await jobs.stop()
