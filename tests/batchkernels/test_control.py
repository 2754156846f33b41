"""The server's end of the control channel (batchkernels/control.py) against a real kernel host."""

from __future__ import annotations

import pytest
from helpers import wait_until

from jupyter_gpu_env.batchkernels.control import HostClient, HostUnreachable
from jupyter_gpu_env.contracts.batchkernel import files

from .test_host import _job, _log, _start


async def test_the_server_asks_the_host_and_a_wrong_key_gets_nothing(tmp_path):
    folder = _job(tmp_path / "job")
    process = _start(folder)
    try:
        host = await wait_until(lambda: files.read_host(folder), within=60, what=lambda: _log(folder))
        client = HostClient(host)
        status = await client.request("status")
        assert (status.ok, status.state, status.generation) == (True, "running", 1)
        # A second client (a restarted server) numbers its requests above the first's: both answered.
        again = HostClient(host)
        assert (await again.request("status")).state == "running"
        assert (await client.request("status")).ok

        # Whoever lacks the key in host.json (readable by the owner alone) is not answered.
        stranger = HostClient(host.model_copy(update={"key": "cd" * 32}))
        with pytest.raises(HostUnreachable, match="did not answer 'stop' within 1 s"):
            await stranger.request("stop", within=1)
        assert (await client.request("status")).state == "running"  # the stop was not obeyed

        assert (await client.request("stop")).state == "stopping"
        for c in (client, again, stranger):
            c.close()
        await wait_until(lambda: process.poll() is not None, within=30, what="the host to exit")
        assert process.returncode == 0
    finally:
        if process.poll() is None:
            process.kill()
