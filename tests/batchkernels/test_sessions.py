"""A kernel session as a job (jobs/sessions.py) on the real local backend: submitted and recorded as a
job, its runner hosting the kernel (batchkernels/host), reached through the host's control channel,
stopped, and recorded as ended with why — or refused with nothing left behind."""

from __future__ import annotations

import pytest
from helpers import job_record, wait_until
from jupyter_client.asynchronous import AsyncKernelClient

from jupyter_gpu_env.batchkernels.control import HostClient
from jupyter_gpu_env.batchkernels.session import KernelSession
from jupyter_gpu_env.contracts import jobfiles
from jupyter_gpu_env.contracts.batchkernel import files
from jupyter_gpu_env.errors import InvalidRequest, NotFound
from jupyter_gpu_env.jobs.sessions import SessionAsk, SessionJobs
from jupyter_gpu_env.models.jobs import Job, JobRequest


def _ask(batch, **fields) -> SessionAsk:
    request = JobRequest.model_validate({"notebook_path": "analysis.ipynb", "backend": "local", **fields})
    return SessionAsk(
        request=request, cwd=batch.root, kernel_session={"bind": "loopback", "orphan_timeout": 120}
    )


async def test_a_session_runs_as_a_job_and_ends_recorded(batch, job_service):
    svc = job_service()
    sessions = SessionJobs(svc)
    job = await sessions.submit(_ask(batch, kernel="python3", name="interactive"))
    assert (job.kind, job.name, job.kernel, job.output_path) == ("kernel", "interactive", "python3", "")
    folder = batch.root / job.job_dir
    spec = jobfiles.read_json(folder / jobfiles.JOB_JSON)
    assert spec is not None and spec["kind"] == "kernel" and spec["cwd"] == str(batch.root)
    assert not (folder / jobfiles.INPUT).exists()  # no notebook: job.json alone

    host = await wait_until(lambda: files.read_host(folder), within=60, what="the kernel host's host.json")
    running = await batch.wait_for(svc, job.id, lambda j: j.state == "running")
    assert running.kind == "kernel"

    # The kernel answers in the server's root, as the user's notebook would.
    connection = files.read_connection(folder)
    assert connection is not None
    client = AsyncKernelClient()
    client.load_connection_info(connection.info())
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=30)
        reply = await client.execute_interactive("import os; print(os.getcwd())", timeout=30)
        assert reply["content"]["status"] == "ok"
    finally:
        client.stop_channels()

    control = HostClient(host)
    try:
        assert (await control.request("stop")).state == "stopping"
    finally:
        control.close()
    done = await batch.wait_for(svc, job.id, lambda j: j.state == "succeeded")
    assert (done.reason, done.kind) == ("shut_down", "kernel")
    assert "Shut down from JupyterLab" in done.message


@pytest.mark.parametrize(
    ("fields", "error", "words"),
    [
        ({}, InvalidRequest, "names what it runs in"),
        ({"kernel": "no-such-kernel"}, NotFound, "Kernel 'no-such-kernel' is not installed"),
        ({"environment": "nowhere"}, NotFound, "Unknown environment 'nowhere'"),
    ],
)
async def test_a_session_refused_leaves_nothing(batch, job_service, fields, error, words):
    svc = job_service()
    with pytest.raises(error, match=words):
        await SessionJobs(svc).submit(_ask(batch, **fields))
    assert await svc.store.count() == 0
    assert batch.job_folders() == []


async def test_a_kernel_that_waits_past_its_launch_timeout_fails_and_leaves_no_job(batch, job_service):
    svc = job_service(max_concurrent=1)
    holder = await svc.submit(
        {"notebook_path": batch.notebook("hold.ipynb", ["import time\ntime.sleep(300)"])}
    )
    await batch.wait_for(svc, holder.id, lambda j: j.state == "running")
    session = KernelSession(svc, _ask(batch, kernel="python3"), poll_interval=0.1, launch_timeout=1.0)
    with pytest.raises(
        RuntimeError, match="for the kernel's job to start .*waiting in the queue.*cancelled it"
    ):
        await session.start()
    assert session.job is not None and not session.connected
    job = await svc.get(session.job.id)
    assert (job.state, job.reason) == ("cancelled", "launch_timeout")
    await svc.cancel(holder.id)


def _job_on(node: str | None) -> Job:
    return job_record("j1", kind="kernel", state="running", node=node)


@pytest.mark.parametrize(
    ("session", "address", "node", "meets"),
    [
        ({"bind": "loopback"}, "127.0.0.1", None, True),
        ({"bind": "hostname"}, "127.0.0.1", "localhost", True),  # an address of the node the backend saw
        ({"bind": "hostname"}, "127.0.0.1", None, False),  # the backend has not said where yet: not yet
        ({"bind": "hostname", "interface": "ib0"}, "10.1.0.5", "node01", True),  # the site named it
    ],
)
async def test_the_host_is_met_only_where_its_job_runs(batch, job_service, session, address, node, meets):
    ask = SessionAsk(request=_ask(batch).request, cwd=batch.root, kernel_session=session)
    assert await KernelSession(job_service(), ask)._where_it_runs(address, _job_on(node)) is meets


@pytest.mark.parametrize(
    ("session", "node", "words"),
    [
        ({"bind": "loopback"}, None, "not on this machine's loopback"),
        ({"bind": "hostname"}, "localhost", "not an address of localhost"),
    ],
)
async def test_a_host_that_names_another_address_is_not_met(batch, job_service, session, node, words):
    ask = SessionAsk(request=_ask(batch).request, cwd=batch.root, kernel_session=session)
    with pytest.raises(RuntimeError, match=words):
        await KernelSession(job_service(), ask)._where_it_runs("10.9.9.9", _job_on(node))
