"""Another user of the same machine at a cluster's ports: a real process running as uid ``nobody``,
with no credential of the cluster, trying what issue 35 did (a plain ``tcp://`` client that would run
``os.getuid`` in the scheduler, a ``tls://`` client with a certificate of its own, the dashboard with and
without TLS). Needs root, to start a process as another user; skipped elsewhere."""

from __future__ import annotations

import json
import os
import pwd
import subprocess
import sys
import tempfile

import pytest

# Started as root, imports all it needs, then becomes nobody for good (the interpreter and its library
# may lie where nobody cannot read). Two controls first, which must work: its own scheduler over tcp
# runs its code (the attack works when nothing stops it) and its own web page answers. Then each
# attempt prints what happened; "ALLOWED: ..." is a breach.
ATTEMPTS = r"""
import asyncio, encodings.idna, http.server, json, os, socket, ssl, sys, threading, urllib.request
import distributed.comm.tcp, distributed.protocol, distributed.utils_comm
from distributed import Client, Scheduler, Security

host, port, dashboard, uid, gid = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
temporary = Security.temporary()  # a certificate of its own, made before cryptography's files go out of reach
os.setgroups([])
os.setgid(gid)
os.setuid(uid)
out = {}

def attempt(name, fn):
    try:
        out[name] = "ALLOWED: " + repr(fn())[:200]
    except BaseException as e:
        out[name] = f"refused: {type(e).__name__}: {e}"[:300]

def run_as_scheduler(address, security=None):
    with Client(address, security=security, timeout=4) as c:
        return c.run_on_scheduler(os.getuid)

async def own_scheduler():
    async with Scheduler(host="127.0.0.1", port=0, dashboard=False) as s:
        async with Client(s.address, asynchronous=True, timeout=10) as c:
            return await c.run_on_scheduler(os.getuid)

class Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b"ok")
    def log_message(self, *args):
        pass

page = http.server.HTTPServer(("127.0.0.1", 0), Page)
threading.Thread(target=page.serve_forever, daemon=True).start()
out["control: own scheduler"] = repr(asyncio.run(own_scheduler()))
out["control: own page"] = urllib.request.urlopen(f"http://127.0.0.1:{page.server_port}/", timeout=4).read().decode()

attempt("tcp", lambda: run_as_scheduler(f"tcp://{host}:{port}"))
attempt("tls with its own certificate", lambda: run_as_scheduler(f"tls://{host}:{port}", temporary))

def tls_without_certificate(p):
    ctx = ssl.create_default_context()
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    return urllib.request.urlopen(f"https://{host}:{p}/status", context=ctx, timeout=4).status

attempt("scheduler port, TLS without a certificate", lambda: tls_without_certificate(port))
if dashboard:
    attempt("dashboard over http", lambda: urllib.request.urlopen(f"http://{host}:{dashboard}/status", timeout=4).status)
    attempt("dashboard over https without a certificate", lambda: tls_without_certificate(dashboard))
print(json.dumps(out))
"""


def attempts_as_nobody(address: str, dashboard_port: int | None) -> dict[str, str]:
    """What ``nobody`` got from each attempt at the scheduler at ``address`` (``tls://host:port``) and
    its dashboard's port."""
    if os.getuid() != 0:
        pytest.skip("starting a process as another user needs root")
    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("this machine has no user 'nobody'")
    host, _, port = address.split("://", 1)[1].rpartition(":")
    with tempfile.TemporaryDirectory() as home:
        os.chmod(home, 0o777)
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                ATTEMPTS,
                host,
                port,
                str(dashboard_port or ""),
                str(nobody.pw_uid),
                str(nobody.pw_gid),
            ],  # fmt: skip
            env={"PATH": os.environ.get("PATH", ""), "HOME": home, "DASK_CONFIG": home},
            cwd=home,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, str] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def assert_all_refused(said: dict[str, str], *, dashboard: bool) -> None:
    """Every attempt refused by the cluster, while the same attacker, as nobody, ran code in a scheduler
    of its own and read a page of its own (so no refusal is the attacker's own failure)."""
    nobody = pwd.getpwnam("nobody").pw_uid
    assert said.pop("control: own scheduler") == str(nobody), said
    assert said.pop("control: own page") == "ok", said
    expected = {"tcp", "tls with its own certificate", "scheduler port, TLS without a certificate"}
    if dashboard:
        expected |= {"dashboard over http", "dashboard over https without a certificate"}
    assert set(said) == expected, said
    breaches = {k: v for k, v in said.items() if not v.startswith("refused")}
    assert breaches == {}, said
    # refused by the other side, not by this machine's files (an import or a file nobody cannot read)
    assert not any("PermissionError" in v or "ImportError" in v for v in said.values()), said
