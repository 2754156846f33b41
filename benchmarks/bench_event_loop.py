"""The server's event loop under a burst: `GET api/status` while 200 submissions, 20 packs and 100 GPU checks
arrive at once, against the same request on the idle server.

A real `jupyter server` with the extension, the demo conda environment as a managed one and a one-cell
notebook. `api/status` is Jupyter's cheapest authenticated request: any time it waits beyond its idle
figure is time the loop spent on something else (or the two cores spent on the runners and packers the
burst starts). The burst: 200 `POST jobs` (2 run at once, the rest queue), 20 `POST
environments/demo/image` of one environment (one packer; the others answer its task) and 100 `POST
environments/demo/gpu-check` (one environment: one check at a time, the others answer its task), all
sent together. A probe in a process of its own sends `api/status` back to back from just before the
burst until every request of the burst has been answered.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from _conda import CHANNEL, PKGS, demo_env, fresh_scratch
from _server import jupyter_server, percentile
from tornado.httpclient import AsyncHTTPClient, HTTPClientError

SUBMISSIONS, PACKS, CHECKS = 200, 20, 100
STALL_MS = 100.0


# The probe runs in a process of its own: in this one, handling the burst's 320 answers would delay
# it, and the figure would be this client's, not the server's.
PROBE = """
import http.client, json, sys, time
host, port, token, stop = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
conn = http.client.HTTPConnection(host, port)
out = []
while True:
    t = time.perf_counter()
    conn.request("GET", "/api/status", headers={"Authorization": "token " + token})
    conn.getresponse().read()
    out.append((time.perf_counter() - t) * 1000)
    try:
        open(stop).close()
        break
    except OSError:
        pass
print(json.dumps(out))
"""


def _start_probe(server, stop: Path) -> subprocess.Popen:
    host, port = server.url.removeprefix("http://").split(":")
    return subprocess.Popen(
        [sys.executable, "-c", PROBE, host, port, server.token, str(stop)], stdout=subprocess.PIPE, text=True
    )


async def _request(server, method: str, path: str, body: dict) -> tuple[int, float]:
    client = AsyncHTTPClient()
    t = time.perf_counter()
    try:
        resp = await client.fetch(
            server.url + "/gpu-env/api/" + path,
            method=method,
            body=json.dumps(body),
            headers=server.headers(),
            request_timeout=600,
        )
        code = resp.code
    except HTTPClientError as e:
        code = e.code
    return code, (time.perf_counter() - t) * 1000


async def measure(server) -> dict[str, object]:
    client = AsyncHTTPClient()
    for _ in range(20):  # warm-up: imports, the first sample, the job store
        await client.fetch(server.url + "/api/status", headers=server.headers())
        await client.fetch(server.url + "/gpu-env/api/jobs", headers=server.headers())
    folder = Path(tempfile.mkdtemp())
    probe = _start_probe(server, folder / "stop-idle")
    await asyncio.sleep(2.0)  # the same probe on the idle server: the baseline
    (folder / "stop-idle").touch()
    idle = json.loads(probe.communicate(timeout=60)[0])[5:]  # less the first, the probe's own warm-up

    stop = folder / "stop"
    probe = _start_probe(server, stop)
    await asyncio.sleep(0.5)  # the probe's interpreter is up and asking
    started, window_start = time.perf_counter(), time.time()
    burst = [
        *(_request(server, "POST", "jobs", {"notebook_path": "nb.ipynb", "parameters": {"x": i}}) for i in range(SUBMISSIONS)),
        *(_request(server, "POST", "environments/demo/image", {}) for _ in range(PACKS)),
        *(_request(server, "POST", "environments/demo/gpu-check", {}) for _ in range(CHECKS)),
    ]  # fmt: skip
    answers = await asyncio.gather(*burst)
    answered = (time.perf_counter() - started) * 1000
    window = (window_start, time.time())
    stop.touch()
    loaded = json.loads(probe.communicate(timeout=60)[0])
    codes: dict[int, int] = {}
    for code, _ in answers:
        codes[code] = codes.get(code, 0) + 1
    return {"idle": idle, "loaded": loaded, "answered_ms": answered, "codes": codes, "window": window}


def main() -> list[str]:
    demo = demo_env()
    scratch = fresh_scratch("event-loop")
    managed = scratch / "managed"
    managed.mkdir()
    (managed / "demo").symlink_to(demo)
    root = scratch / "root"
    root.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    cell = nbformat.v4.new_code_cell("x = 0")
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [cell, nbformat.v4.new_code_cell("print(x)")]
    nbformat.write(nb, root / "nb.ipynb")
    config = [
        f"--GpuEnvApp.managed_env_dirs={managed}",
        f"--GpuEnvApp.user_env_dir={scratch / 'envs'}",
        f"--GpuEnvApp.conda_channels={CHANNEL}",
        f"--GpuEnvApp.pkgs_dir={PKGS}",
        f"--GpuEnvApp.image_dir={scratch / 'images'}",
        f"--GpuEnvApp.state_dir={scratch / 'state'}",
    ]
    lag_file = scratch / "lag.txt"
    lag_file.touch()
    program = [sys.executable, str(Path(__file__).with_name("_lag_server.py")), str(lag_file)]
    with jupyter_server(*config, root=str(root), program=program) as server:
        r = asyncio.run(measure(server))
    idle, loaded = r["idle"], r["loaded"]
    stalls = [ms for ms in loaded if ms > STALL_MS]
    lags = [
        float(ms)
        for at, ms in (line.split() for line in lag_file.read_text().splitlines())
        if r["window"][0] <= float(at) <= r["window"][1]
    ]
    lines = [
        f"burst: {SUBMISSIONS} submissions, {PACKS} packs of one environment, {CHECKS} GPU checks, sent together",
        f"answered: {r['answered_ms'] / 1000:.2f} s; statuses {dict(sorted(r['codes'].items()))}",
        f"{'api/status':<24}{'n':>6}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}",
        f"{'idle':<24}{len(idle):>6}{percentile(idle, 50):>9.2f}{percentile(idle, 99):>9.2f}{max(idle):>9.2f}",
        f"{'during the burst':<24}{len(loaded):>6}{percentile(loaded, 50):>9.2f}"
        f"{percentile(loaded, 99):>9.2f}{max(loaded):>9.2f}",
        f"ratio burst/idle: p50 {percentile(loaded, 50) / percentile(idle, 50):.2f}x, "
        f"p99 {percentile(loaded, 99) / percentile(idle, 99):.2f}x",
        f"status requests slower than {STALL_MS:.0f} ms during the burst: {len(stalls)} of {len(loaded)}"
        + (f" (the slowest {max(stalls):.0f} ms)" if stalls else ""),
        f"event loop, in the server, during the burst: longest stall {max(lags, default=0):.0f} ms; "
        f"stalls over 10 ms: {len(lags)}, over {STALL_MS:.0f} ms: {sum(1 for ms in lags if ms > STALL_MS)}",
    ]
    return lines


if __name__ == "__main__":
    print("\n".join(main()))
