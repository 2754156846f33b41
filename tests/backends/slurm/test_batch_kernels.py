"""Batch kernels on the real single-node SLURM, through a real Jupyter server: registered, started with
Jupyter's own `api/kernels`, the kernel inside the SLURM job (its `SLURM_JOB_ID`), interrupted, restarted
in the same allocation, shut down (squeue empty); queued behind a job that holds the node (its place
shown), then started; and ended by its walltime (reported dead, with why)."""

from __future__ import annotations

import asyncio
import json
import os

import pytest
from helpers import body, wait_until

from jupyter_gpu_env import proc


@pytest.fixture
def jp_server_config(jp_server_config, slurm_conf):
    return {
        **jp_server_config,
        "GpuEnvApp": {"backends": ["slurm"], "job_refresh_interval": 0.3, "gpu_sample_interval": 0.5},
        "SlurmBackend": {"slurm_conf": slurm_conf, "status_grace": 5.0, "command_timeout": 20.0},
        # One node, this machine: the kernels listen on loopback (tests bind no other address).
        "BatchKernels": {"launch_timeout": 180, "bind": "loopback"},
    }


async def _sh(slurm_conf: str, *argv: str) -> str:
    return (
        await proc.run(list(argv), env={**os.environ, "SLURM_CONF": slurm_conf}, timeout=30)
    ).stdout.strip()


async def _register(api, **fields) -> str:
    made = await body(await api("batch-kernels", method="POST", body=json.dumps(fields)))
    return str(made["kernel_name"])


async def _session(api, name: str, kernel_id: str | None = None) -> dict | None:
    listed = await body(await api("batch-kernels", name))
    found = [s for s in listed["sessions"] if kernel_id is None or s["kernel_id"] == kernel_id]
    return found[0] if found else None


async def _run(client, code: str) -> tuple[str, dict]:
    out: list[str] = []
    reply = await client.execute_interactive(
        code, timeout=60, output_hook=lambda m: out.append(m["content"].get("text", ""))
    )
    return "".join(out).strip(), reply["content"]


async def test_a_kernel_runs_in_its_slurm_job_interrupts_restarts_there_and_leaves_nothing(
    api, jp_fetch, jp_serverapp, slurm_conf
):
    name = await _register(api, kernel="python3", backend="slurm", walltime=10, resources={"cpus": 1})
    kid = (await body(await jp_fetch("api", "kernels", method="POST", body=json.dumps({"name": name}))))["id"]
    session = await _session(api, name, kid)
    assert session is not None and session["state"] == "running"
    assert session["node"] == "localhost" and session["words"].startswith("running on localhost, 9 min")
    job = await body(await api("jobs", session["job_id"]))
    slurm_id = job["backend_job_id"]
    assert job["kind"] == "kernel" and slurm_id

    client = jp_serverapp.kernel_manager.get_kernel(kid).client()
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=60)
        out, _ = await _run(client, "import os; print(os.environ['SLURM_JOB_ID'], os.getpid())")
        job_id_seen, first_pid = out.split()
        assert job_id_seen == slurm_id

        # SIGINT reaches the kernel on the node: a long sleep ends in KeyboardInterrupt.
        msg_id = client.execute("import time; time.sleep(600)")
        while True:
            msg = await client.get_iopub_msg(timeout=30)
            if msg["msg_type"] == "execute_input" and msg["parent_header"].get("msg_id") == msg_id:
                break
        await jp_fetch("api", "kernels", kid, "interrupt", method="POST", body=b"")
        reply = await client.get_shell_msg(timeout=30)
        assert reply["content"]["ename"] == "KeyboardInterrupt"

        # A restart is a new kernel process in the same allocation: nothing queues again.
        await jp_fetch("api", "kernels", kid, "restart", method="POST", body=b"")
        await client.wait_for_ready(timeout=60)
        out, _ = await _run(client, "import os; print(os.environ['SLURM_JOB_ID'], os.getpid())")
        assert out.split()[0] == slurm_id and out.split()[1] != first_pid
        assert (await _session(api, name, kid))["restarts"] == 1
    finally:
        client.stop_channels()

    # Shut down: the job leaves SLURM within seconds.
    await jp_fetch("api", "kernels", kid, method="DELETE")

    async def gone() -> bool:
        return await _sh(slurm_conf, "squeue", "-h", "-j", slurm_id, "-o", "%T") == ""

    await wait_until(gone, within=30, every=0.2, what="the kernel's job gone from squeue")
    ended = await wait_until(
        lambda: _ended(api, session["job_id"]), within=30, what="the kernel's job recorded as ended"
    )
    assert ended["reason"] == "shut_down"


async def _ended(api, job_id: str) -> dict | None:
    job = await body(await api("jobs", job_id))
    return job if job["state"] in ("succeeded", "failed", "cancelled") else None


async def test_a_kernel_waits_behind_the_node_with_its_place_then_starts_and_its_walltime_ends_it(
    api, jp_fetch, jp_root_dir, slurm_conf
):
    name = await _register(api, kernel="python3", backend="slurm", walltime="0:30", resources={"cpus": 1})
    blocker = jp_root_dir / "full.sh"
    blocker.write_text("#!/bin/bash\nsleep 120\n")
    blocker_id = await _sh(
        slurm_conf, "sbatch", "--parsable", "--exclusive", "--output=/dev/null", str(blocker)
    )
    try:

        async def blocking() -> bool:
            return await _sh(slurm_conf, "squeue", "-h", "-j", blocker_id, "-o", "%T") == "RUNNING"

        await wait_until(blocking, within=60, every=0.2, what="the blocker running")
        start = asyncio.ensure_future(
            jp_fetch("api", "kernels", method="POST", body=json.dumps({"name": name}), request_timeout=200)
        )

        async def waiting() -> dict | None:
            s = await _session(api, name)
            return s if s and s["state"] == "waiting" and s["queue_position"] else None

        session = await wait_until(
            waiting, within=60, every=0.2, what="the kernel listed waiting in its queue"
        )
        assert session["queue_position"] == 1 and session["queue_name"] == "debug"
        assert session["words"].startswith("waiting in queue 'debug', 1st")
        assert not start.done()  # Jupyter still waits for the kernel

        await _sh(slurm_conf, "scancel", blocker_id)
        kid = (await body(await start))["id"]
        assert (await _session(api, name, kid))["state"] == "running"
    finally:
        await _sh(slurm_conf, "scancel", blocker_id)

    # The walltime ends the job; Jupyter reports the kernel dead, and the session says why.
    async def dead() -> bool:
        return kid not in {k["id"] for k in await body(await jp_fetch("api", "kernels"))}

    await wait_until(dead, within=120, every=0.5, what="the kernel reported dead at its walltime")
    session = await _session(api, name, kid)
    assert session["state"] == "ended" and session["reason"] == "time_limit", (
        session["words"],
        session["message"],
    )
    assert "time limit" in session["words"]
