"""The kernel host on its node: a real host process (``python -m jupyter_gpu_env.runner`` on a job.json
of kind ``kernel``) and a real python3 kernel, driven as the server will drive them — over the kernel's
own channels, and the host's signed control channel."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import zmq
from helpers import wait_until_sync
from jupyter_client.blocking import BlockingKernelClient

from jupyter_gpu_env.batchkernels.host.host import bind_address
from jupyter_gpu_env.contracts import jobfiles
from jupyter_gpu_env.contracts.batchkernel import files, wire


def _job(folder: Path, **session: Any) -> Path:
    folder.mkdir()
    job = {
        "format": jobfiles.JOB_FORMAT,
        "kind": "kernel",
        "id": "k1",
        "name": "interactive",
        "kernel": "python3",
        "cwd": str(folder),
        "gpu_sample_interval": 0,
        "kernel_session": {"bind": "loopback", **session},
    }
    (folder / jobfiles.JOB_JSON).write_text(json.dumps(job))
    return folder


def _start(folder: Path) -> subprocess.Popen[bytes]:
    log = (folder / jobfiles.LOG).open("wb")
    return subprocess.Popen(
        [sys.executable, "-m", "jupyter_gpu_env.runner", str(folder)], stdout=log, stderr=subprocess.STDOUT
    )


def _log(folder: Path) -> str:
    return (folder / jobfiles.LOG).read_text(errors="replace")


class Control:
    """The server's side of the control channel, as the provisioner will hold it."""

    def __init__(self, folder: Path) -> None:
        self.host = wait_until_sync(lambda: files.read_host(folder), within=60, what=lambda: _log(folder))
        self.key = self.host.key.encode("ascii")
        self.socket = zmq.Context.instance().socket(zmq.DEALER)
        self.socket.linger = 0
        self.socket.connect(f"tcp://{self.host.host}:{self.host.control_port}")
        self.seq = 0

    def request(self, op: str, **fields: Any) -> wire.Reply:
        self.seq += 1
        self.socket.send_multipart(
            wire.pack(self.key, wire.Request(op=op, seq=self.seq, sent_at=time.time(), **fields))  # type: ignore[arg-type]
        )
        return self.answer()

    def answer(self) -> wire.Reply:
        assert self.socket.poll(30_000), "the host did not answer"
        reply = wire.reply(self.key, self.socket.recv_multipart())
        assert reply is not None, "the host's reply is not signed with its key"
        return reply

    def close(self) -> None:
        self.socket.close(0)


def _client(folder: Path) -> BlockingKernelClient:
    connection = files.read_connection(folder)
    assert connection is not None
    client = BlockingKernelClient()
    client.load_connection_info(connection.info())
    client.start_channels()
    client.wait_for_ready(timeout=30)
    return client


def _run(client: BlockingKernelClient, code: str, timeout: float = 30) -> tuple[str, dict[str, Any]]:
    out: list[str] = []
    reply = client.execute_interactive(
        code, timeout=timeout, output_hook=lambda m: out.append(m["content"].get("text", ""))
    )
    return "".join(out), reply["content"]


def _pid_seen(client: BlockingKernelClient) -> str:
    """The kernel's pid as one execution prints it; "" when its output or reply went by before the
    client's iopub socket had reconnected (jupyter_client then waits out its timeout), to be asked again."""
    try:
        return _run(client, "import os; print(os.getpid())", timeout=5)[0].strip()
    except TimeoutError:
        return ""


def _began(client: BlockingKernelClient, msg_id: str) -> bool:
    """Whether the kernel has announced the execution of ``msg_id`` (its iopub execute_input)."""
    msg = client.get_iopub_msg(timeout=5)
    return msg["msg_type"] == "execute_input" and msg["parent_header"].get("msg_id") == msg_id


def _status(folder: Path) -> dict[str, Any]:
    return wait_until_sync(
        lambda: jobfiles.read_json(folder / jobfiles.STATUS), within=30, what=lambda: _log(folder)
    )


def test_a_kernel_is_hosted_interrupted_restarted_in_place_and_stopped(tmp_path):
    folder = _job(tmp_path / "job")
    host = _start(folder)
    control = Control(folder)
    try:
        # Both files are the owner's alone, in an owner-only folder: whoever reads them runs code.
        assert stat.S_IMODE(os.stat(folder / "kernel").st_mode) & 0o077 == 0
        for name in (files.HOST_JSON, files.CONNECTION_JSON):
            assert stat.S_IMODE(os.stat(folder / "kernel" / name).st_mode) == 0o600
        before = files.read_connection(folder)
        assert before is not None and before.ip == "127.0.0.1" and len(before.key) == 64

        client = _client(folder)
        out, _ = _run(client, "import os; print(os.getpid(), os.getcwd())")
        first_pid, cwd = out.split()
        assert cwd == str(folder)
        status = control.request("status")
        assert (status.state, status.generation, status.exit_code) == ("running", 1, None)

        # An interrupt reaches the kernel's process group on the node: the cell stops at once.
        msg_id = client.execute("import time; time.sleep(600)")
        wait_until_sync(lambda: _began(client, msg_id), within=30, what="the cell to start")
        assert control.request("signal", signum=int(signal.SIGINT)).ok
        reply = client.get_shell_msg(timeout=30)
        assert reply["parent_header"]["msg_id"] == msg_id
        assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "KeyboardInterrupt"

        # What is not signed with the host's key, or replays a number already used, gets no answer:
        # the next reply is the one to the next signed request.
        control.socket.send_multipart(
            [b"0" * 64, wire.Request(op="stop", seq=99, sent_at=time.time()).model_dump_json().encode()]
        )
        control.seq += 1
        replayed = wire.pack(control.key, wire.Request(op="stop", seq=control.seq - 1, sent_at=time.time()))
        control.socket.send_multipart(replayed)
        status = control.request("status")
        assert status.seq == control.seq and status.state == "running"

        # A restart: the kernel exits (the job goes on), then its next generation starts in the same
        # allocation, on the same ports with the same key, so the client that was connected carries on.
        assert control.request("expect", restart=True).ok
        client.shutdown(restart=True)
        wait_until_sync(lambda: control.request("status").state == "exited", within=30)
        again = control.request("start", generation=2)
        assert (again.ok, again.state, again.generation) == (True, "running", 2)
        assert files.read_connection(folder) == before
        # The client's iopub socket reconnects to the new process by itself; until it has, output
        # published is missed (jupyter_server "nudges" the same way), so ask until it is seen.
        out = wait_until_sync(lambda: _pid_seen(client), within=60)
        assert out != first_pid
        assert not control.request("start", generation=3).ok  # a running kernel is not started twice

        # Stop: the job ends, succeeded, and says why.
        assert control.request("stop").state == "stopping"
        client.stop_channels()
        assert host.wait(timeout=30) == 0
        done = _status(folder)
        assert (done["state"], done["reason"]) == ("succeeded", "shut_down")
    finally:
        control.close()
        if host.poll() is None:
            host.kill()


@pytest.mark.parametrize(
    ("cancel_mark", "expected"),
    [(False, ("failed", "ended_by_scheduler")), (True, ("cancelled", "cancelled"))],
)
def test_sigterm_ends_the_job_with_why(tmp_path, cancel_mark, expected):
    folder = _job(tmp_path / "job")
    host = _start(folder)
    try:
        wait_until_sync(lambda: files.read_host(folder), within=60, what=lambda: _log(folder))
        if cancel_mark:
            jobfiles.mark_cancel(folder)
        host.send_signal(signal.SIGTERM)
        assert host.wait(timeout=30) == 1
        done = _status(folder)
        assert (done["state"], done["reason"]) == expected
    finally:
        if host.poll() is None:
            host.kill()


def test_a_host_the_server_forgot_ends_its_job(tmp_path):
    """No word from the server for orphan_timeout: the job ends, so a lost server holds no GPU."""
    folder = _job(tmp_path / "job", orphan_timeout=2)
    host = _start(folder)
    try:
        assert host.wait(timeout=60) == 1
        done = _status(folder)
        assert (done["state"], done["reason"]) == ("cancelled", "server_gone")
        assert "No word from the Jupyter server for 2 s" in done["message"]
    finally:
        if host.poll() is None:
            host.kill()


def test_a_host_file_others_can_read_is_not_trusted(tmp_path):
    folder = tmp_path / "job"
    folder.mkdir()
    files.make_kernel_dir(folder)
    path = folder / "kernel" / files.HOST_JSON
    files.write_private_json(
        path,
        {"format": 1, "host": "127.0.0.1", "control_port": 5555, "pid": 1, "started_at": 0, "key": "ab" * 32},
    )
    assert files.read_host(folder) is not None
    os.chmod(path, 0o644)
    with pytest.raises(jobfiles.Damaged, match="others than its owner can read it"):
        files.read_host(folder)


def test_the_site_names_the_interface_a_kernel_listens_on():
    assert bind_address({"bind": "loopback", "interface": "lo"}) == "127.0.0.1"  # loopback first
    assert bind_address({"bind": "hostname", "interface": "lo"}) == "127.0.0.1"  # lo's address


def test_a_node_without_the_named_interface_ends_the_job_saying_so(tmp_path):
    folder = _job(tmp_path / "job", bind="hostname", interface="ib-missing0")
    host = _start(folder)
    try:
        assert host.wait(timeout=60) == 1
        done = _status(folder)
        assert (done["state"], done["reason"]) == ("failed", "no_interface")
        assert "no IPv4 address on the interface 'ib-missing0'" in done["message"]
    finally:
        if host.poll() is None:
            host.kill()
