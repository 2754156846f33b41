"""The ``gpu-env-batch`` provisioner under Jupyter's own kernel manager: a kernelspec that names it
starts a kernel as a job on the real local backend; execute, interrupt, restart (in the same job) and
shutdown (the job ends, recorded) go through the manager's public calls, as jupyter_server makes them."""

from __future__ import annotations

import json
import os

import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager

from jupyter_gpu_env.batchkernels import provisioner
from jupyter_gpu_env.batchkernels.options import BatchKernels
from jupyter_gpu_env.batchkernels.provisioner import BatchProvisioner
from jupyter_gpu_env.batchkernels.service import BatchKernelService

SPEC = "gpu-env-batch-test"


@pytest.fixture
def spec_manager(tmp_path):
    folder = tmp_path / "kernels" / SPEC
    folder.mkdir(parents=True)
    (folder / "kernel.json").write_text(
        json.dumps(
            {
                "argv": ["python", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Python 3 · local batch",
                "language": "python",
                "interrupt_mode": "signal",
                "metadata": {
                    "kernel_provisioner": {
                        "provisioner_name": "gpu-env-batch",
                        "config": {
                            "session": {"backend": "local", "kernel": "python3", "name": "interactive"}
                        },
                    }
                },
            }
        )
    )
    return KernelSpecManager(kernel_dirs=[str(tmp_path / "kernels")])


async def _run(client, code: str) -> tuple[str, dict]:
    out: list[str] = []
    reply = await client.execute_interactive(
        code, timeout=60, output_hook=lambda m: out.append(m["content"].get("text", ""))
    )
    return "".join(out), reply["content"]


async def test_a_batch_kernel_runs_interrupts_restarts_in_its_job_and_shuts_down(
    batch, job_service, spec_manager
):
    svc = job_service()
    provisioner.use_service(BatchKernelService(svc, BatchKernels(), base_spec=lambda name: None))
    km = AsyncKernelManager(kernel_name=SPEC, kernel_spec_manager=spec_manager)
    try:
        await km.start_kernel(cwd=str(batch.root))
        assert isinstance(km.provisioner, BatchProvisioner)
        job = km.provisioner._session.job
        assert job is not None and job.kind == "kernel" and job.name == "interactive"

        client = km.client()
        client.start_channels()
        await client.wait_for_ready(timeout=60)
        out, _ = await _run(client, "import os; print(os.getpid(), os.getcwd())")
        first_pid, cwd = out.split()
        assert cwd == str(batch.root)
        assert int(first_pid) != os.getpid()

        # Interrupt: Jupyter's signal reaches the kernel on its node through the host.
        # Wait for the cell's own output, not its execute_input: a SIGINT that arrives before the cell
        # runs is ignored by ipykernel, and the sleep would never be interrupted (a CI run's failure).
        msg_id = client.execute("import time; print('sleeping', flush=True); time.sleep(600)")
        while True:
            msg = await client.get_iopub_msg(timeout=30)
            if msg["msg_type"] == "stream" and msg["parent_header"].get("msg_id") == msg_id:
                break
        await km.interrupt_kernel()
        reply = await client.get_shell_msg(timeout=30)
        assert reply["content"]["ename"] == "KeyboardInterrupt"

        # Restart: a new kernel process in the same job; nothing queues again.
        await km.restart_kernel()
        await client.wait_for_ready(timeout=60)
        assert km.provisioner._session.job.id == job.id
        assert await svc.store.count() == 1
        out, _ = await _run(client, "import os; print(os.getpid())")
        assert out.strip() and out.strip() != first_pid
        client.stop_channels()

        # Shutdown: the job ends, recorded with why.
        await km.shutdown_kernel()
        done = await batch.wait_for(svc, job.id, lambda j: j.state == "succeeded")
        assert done.reason == "shut_down"
    finally:
        provisioner.use_service(None)
        if km.has_kernel:
            await km.shutdown_kernel(now=True)


async def test_outside_a_server_with_the_extension_it_says_so(spec_manager):
    km = AsyncKernelManager(kernel_name=SPEC, kernel_spec_manager=spec_manager)
    with pytest.raises(RuntimeError, match="only in a Jupyter server with jupyter-gpu-env enabled"):
        await km.start_kernel()
