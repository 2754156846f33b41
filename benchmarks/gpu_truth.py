"""The GPU truth check: on a machine with an NVIDIA GPU, the extension's figures against nvidia-smi's, read
at the same moments. Never changes GPU or MIG settings.

    python benchmarks/gpu_truth.py [--out DIR] [--dry-run]

It starts a Jupyter server with the extension, then
1. compares `GET gpu` (each GPU's memory total and used) with `nvidia-smi --query-gpu`;
2. holds 4 GiB in a kernel (torch) and compares the kernel's GPU memory with `--query-compute-apps`;
3. loads the GPU from the kernel for 12 s and compares the panel's mean utilization with nvidia-smi's;
4. runs a batch job (6 s busy, 3 s idle, 3 GiB held) on the local backend asking for one GPU, and compares
   its GPU summary (mean utilization, peak memory, idle fraction) with nvidia-smi over the job's window,
   and its energy (`energy_joules`) with NVML's energy counter, read here every 50 ms and interpolated at
   the moments the job's runner read it (its first sample and its end): within 5 % or it says FAIL;
   a second job asking for one GPU meanwhile must wait for it ("Waiting for a free GPU");
5. asks `GET jobs/advice` for the job's notebook and prints the suggestion.
It prints one row per figure (extension, nvidia-smi, difference) and writes everything under --out.
Without nvidia-smi (or with --dry-run) it runs the same steps with no GPU, to check the harness: the
figures then read n/a and nothing is compared. It needs torch on the machine for the GPU load, and
nvidia-ml-py (pynvml) for the energy counter.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _server import free_port

MIB = 1 << 20
ROWS: list[tuple[str, Any, Any, str]] = []  # figure, extension, nvidia-smi, difference


def smi(*query: str) -> list[list[str]]:
    if shutil.which("nvidia-smi") is None:
        return []
    out = subprocess.run(
        ["nvidia-smi", *query, "--format=csv,noheader,nounits"], capture_output=True, text=True
    )
    return [[c.strip() for c in line.split(",")] for line in out.stdout.strip().splitlines() if line.strip()]


def smi_gpus() -> list[dict[str, Any]]:
    rows = smi("--query-gpu=index,uuid,memory.total,memory.used,utilization.gpu")
    return [
        {
            "index": int(r[0]),
            "uuid": r[1],
            "total": float(r[2]) * MIB,
            "used": float(r[3]) * MIB,
            "util": _num(r[4]),
        }
        for r in rows
        if len(r) == 5
    ]


def smi_apps() -> dict[int, float]:
    return {
        int(r[0]): float(r[1]) * MIB for r in smi("--query-compute-apps=pid,used_memory") if r[0].isdigit()
    }


def _num(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None  # "[N/A]" on a MIG-enabled GPU


class SmiSampler(threading.Thread):
    """nvidia-smi every 0.5 s while a step runs."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.rows: list[dict[str, Any]] = []
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            t = time.time()
            self.rows += [{**g, "t": t} for g in smi_gpus()]
            self.done.wait(max(0.0, 0.5 - (time.time() - t)))

    def between(self, start: float, end: float) -> list[dict[str, Any]]:
        self.done.set()
        self.join()
        return [r for r in self.rows if start <= r["t"] <= end]


class EnergySampler(threading.Thread):
    """NVML's total energy counter (mJ since the driver loaded) of every GPU, every 50 ms while a step runs."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.rows: list[tuple[float, dict[str, int]]] = []
        self.done = threading.Event()
        try:
            import pynvml

            pynvml.nvmlInit()
            handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
            uuid = pynvml.nvmlDeviceGetUUID
            self.handles = {
                (u.decode() if isinstance(u, bytes) else u): h for h in handles for u in [uuid(h)]
            }
            self.read = pynvml.nvmlDeviceGetTotalEnergyConsumption
        except Exception as e:  # no bindings, no driver, no counter: the figure reads n/a
            print(f"NVML's energy counter cannot be read here: {e}", flush=True)
            self.handles = {}

    def run(self) -> None:
        while self.handles and not self.done.is_set():
            t = time.time()
            self.rows.append((t, {u: int(self.read(h)) for u, h in self.handles.items()}))
            self.done.wait(max(0.0, 0.05 - (time.time() - t)))

    def joules(self, uuids: list[str], start: float, end: float) -> float | None:
        """The counters' rise between ``start`` and ``end``, each end interpolated between two reads."""
        self.done.set()
        self.join()
        if not uuids or not all(u in self.handles for u in uuids):
            return None
        first, last = [self._at(u, start) for u in uuids], [self._at(u, end) for u in uuids]
        if any(v is None for v in [*first, *last]):
            return None
        return sum((b or 0.0) - (a or 0.0) for a, b in zip(first, last, strict=True)) / 1000

    def _at(self, uuid: str, t: float) -> float | None:
        for (t0, c0), (t1, c1) in zip(self.rows, self.rows[1:], strict=False):
            if t0 <= t <= t1:
                return c0[uuid] + (c1[uuid] - c0[uuid]) * (t - t0) / ((t1 - t0) or 1)
        return None


def runner_window(folder: Path) -> tuple[float, float] | None:
    """When the job's runner first read the GPUs (its series' first sample) and last (its final summary)."""
    try:
        lines = (folder / "gpu.jsonl").read_text().splitlines()
        started, first = json.loads(lines[0])["started"], json.loads(lines[1])[0]
        return started + first, json.loads((folder / "gpu.json").read_text())["updated_at"]
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return None


class Server:
    def __init__(self, out: Path, gpus: bool) -> None:
        self.port, self.token = free_port(), secrets.token_hex(8)
        self.root = Path(tempfile.mkdtemp(prefix="gpu-truth-root-"))
        home = Path(tempfile.mkdtemp(prefix="gpu-truth-home-"))
        self.env = {**os.environ, "JUPYTER_CONFIG_DIR": f"{home}/cfg", "JUPYTER_RUNTIME_DIR": f"{home}/rt"}
        os.makedirs(f"{home}/cfg")
        Path(f"{home}/cfg/jupyter_server_config.py").write_text(
            "c.ServerApp.jpserver_extensions = {'jupyter_gpu_env': True}\n"
            "c.GpuEnvApp.gpu_sample_interval = 0.5\n"
            "c.GpuEnvApp.job_gpu_sample_interval = 0.5\n"
            "c.GpuEnvApp.job_refresh_interval = 0.5\n"
            f"c.GpuEnvApp.state_dir = '{home}/state'\n"
            f"c.GpuEnvApp.user_env_dir = '{home}/envs'\n"
            + ("" if gpus else "c.LocalBackend.gpus = ['0']\n")  # the harness's queue check, with no GPU
        )
        argv = [sys.executable, "-m", "jupyter_server", "--no-browser", "--allow-root", f"--port={self.port}"]
        argv += [
            "--ip=127.0.0.1",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root}",
        ]
        self.proc = subprocess.Popen(
            argv, env=self.env, stdout=open(out / "server.log", "w"), stderr=subprocess.STDOUT
        )
        deadline = time.time() + 90
        while time.time() < deadline:
            try:
                if self.call("GET", "api/status")[0] == 200:
                    return
            except OSError:
                time.sleep(0.3)
        raise SystemExit("the server did not answer within 90 s (see server.log)")

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        req = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/{path}",
            data=None if body is None else json.dumps(body).encode(),
            method=method,
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                text = r.read().decode()
                return r.status, json.loads(text) if text else None
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read().decode() or "null")

    def api(self, method: str, path: str, body: Any = None) -> Any:
        code, answer = self.call(method, f"gpu-env/api/{path}", body)
        if code >= 400:
            raise SystemExit(f"{method} {path}: {code} {answer}")
        return answer

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


def row(figure: str, ours: Any, theirs: Any) -> None:
    if isinstance(ours, int | float) and isinstance(theirs, int | float):
        diff = f"{ours - theirs:+.3g}" + (f" ({(ours - theirs) / theirs:+.1%})" if theirs else "")
    else:
        diff = "n/a"
    ROWS.append((figure, ours, theirs, diff))
    print(f"{figure:<42} {ours!s:>18} {theirs!s:>18} {diff:>18}", flush=True)


def mean(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return round(sum(known) / len(known), 1) if known else None


def kernel_steps(server: Server, gpus: bool) -> None:
    from jupyter_client import BlockingKernelClient

    kernel = server.call("POST", "api/kernels", {"name": "python3"})[1]
    connection = Path(server.env["JUPYTER_RUNTIME_DIR"]) / f"kernel-{kernel['id']}.json"
    deadline = time.time() + 60
    while not connection.exists() and time.time() < deadline:
        time.sleep(0.2)
    client = BlockingKernelClient(connection_file=str(connection))
    client.load_connection_file()
    client.start_channels()
    client.wait_for_ready(timeout=60)
    hold = (
        "import os, threading, time, torch\nx = torch.empty(4 * 1024**3, dtype=torch.uint8, device='cuda')\n"
    )
    client.execute_interactive(hold if gpus else "import os", timeout=120)
    time.sleep(2.0)  # two of the panel's samples
    apps, snap = smi_apps(), server.api("GET", "gpu")
    mine = next((k for k in snap["kernels"] if k["kernel_id"] == kernel["id"]), {})
    held = sum(v for pid, v in apps.items() if pid == mine.get("pid"))
    row("kernel's GPU memory (B)", mine.get("gpu_memory_bytes"), held if gpus else None)

    burn = (
        "def _burn():\n    a = torch.randn(8192, 8192, device='cuda')\n    t = time.time()\n"
        "    while time.time() - t < 12:\n        a @ a\n        torch.cuda.synchronize()\n"
        "threading.Thread(target=_burn, daemon=True).start()\n"
    )
    sampler = SmiSampler()
    sampler.start()
    start = time.time()
    if gpus:
        client.execute_interactive(burn, timeout=60)
    panel = []
    while time.time() - start < 11:
        snap = server.api("GET", "gpu")
        panel += [(snap["sampled_at"], g.get("utilization_percent")) for g in snap["gpus"]]
        time.sleep(0.5)
    seen = sampler.between(start + 1, time.time())
    row(
        "panel utilization while loaded (%)",
        mean([u for t, u in panel if t >= start + 1]),
        mean([r["util"] for r in seen]),
    )
    client.stop_channels()
    server.call("DELETE", f"api/kernels/{kernel['id']}")


JOB = {
    "cells": [
        {"cell_type": "code", "metadata": {"tags": ["parameters"]}, "outputs": [], "execution_count": None,
         "source": "busy = 6\nuse_gpu = True\n"},
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": "import os, time\nprint('devices:', os.environ.get('CUDA_VISIBLE_DEVICES'))\nif use_gpu:\n"
         "    import torch\n    x = torch.empty(3 * 1024**3, dtype=torch.uint8, device='cuda')\n"
         "    a = torch.randn(8192, 8192, device='cuda')\n    t = time.time()\n    while time.time() - t < busy:\n"
         "        a @ a\n        torch.cuda.synchronize()\nelse:\n    time.sleep(busy)\ntime.sleep(busy / 2)\n"},
    ],
    "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    "nbformat": 4, "nbformat_minor": 5,
}  # fmt: skip


def job_steps(server: Server, gpus: bool) -> None:
    (server.root / "burn.ipynb").write_text(json.dumps(JOB))
    sampler, energy = SmiSampler(), EnergySampler()
    sampler.start()
    energy.start()
    send = {"notebook_path": "burn.ipynb", "resources": {"gpus": 1}, "parameters": {"use_gpu": gpus}}
    first = server.api("POST", "jobs", send)
    second = server.api("POST", "jobs", {**send, "parameters": {"use_gpu": gpus, "busy": 1}})
    time.sleep(1.0)
    second = server.api("GET", f"jobs/{second['id']}")
    print(f"a second one-GPU job meanwhile: {second['state']}: {second.get('pending_reason')}", flush=True)
    while (first := server.api("GET", f"jobs/{first['id']}"))["state"] in ("queued", "running"):
        time.sleep(0.5)
    seen = sampler.between(first["started_at"], first["finished_at"] or time.time())
    gpu = first.get("gpu") or {}
    print(f"job {first['id']}: {first['state']}; {first['message']}", flush=True)
    row("job mean utilization (%)", gpu.get("mean_utilization_percent"), mean([r["util"] for r in seen]))
    row("job peak memory (B)", gpu.get("peak_memory_bytes"), max((r["used"] for r in seen), default=None))
    idle = [r["util"] for r in seen if r["util"] is not None]
    theirs = round(sum(1 for u in idle if u < 5) / len(idle), 3) if idle else None
    row("job idle fraction", gpu.get("idle_fraction"), theirs)
    window = runner_window(server.root / first["job_dir"])
    whole = [d["uuid"] for d in gpu.get("devices", []) if d.get("uuid") and not d.get("mig_profile")]
    counted = energy.joules(whole, *window) if window and gpus else None
    energy.done.set()
    print(f"job energy: {gpu.get('energy_source')}; {gpu.get('energy_note') or 'no note'}", flush=True)
    row("job energy (J)", gpu.get("energy_joules"), None if counted is None else round(counted, 1))
    if counted and gpu.get("energy_joules") is not None:
        off = abs(gpu["energy_joules"] - counted) / counted
        print(f"job energy against NVML's counter: {off:.2%} off, {'PASS' if off <= 0.05 else 'FAIL'} (5 %)")
    while server.api("GET", f"jobs/{second['id']}")["state"] in ("queued", "running"):
        time.sleep(0.5)
    advice = server.api("GET", "jobs/advice?notebook_path=burn.ipynb&backend=local")
    print(f"advice: {advice['sentence']}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("gpu-truth-out"))
    parser.add_argument("--dry-run", action="store_true", help="no GPU: check the harness only")
    args = parser.parse_args()
    gpus = not args.dry_run and bool(smi_gpus())
    args.out.mkdir(parents=True, exist_ok=True)
    print(
        "GPU truth check:",
        "nvidia-smi found" if gpus else "NO GPU (dry run: nothing is compared)",
        flush=True,
    )
    server = Server(args.out, gpus)
    try:
        snap = server.api("GET", "gpu")
        for g in smi_gpus() or [{}]:
            ours = next((d for d in snap["gpus"] if d.get("uuid") == g.get("uuid")), {})
            row(f"GPU {g.get('index', '-')} memory total (B)", ours.get("memory_total_bytes"), g.get("total"))
            row(f"GPU {g.get('index', '-')} memory used (B)", ours.get("memory_used_bytes"), g.get("used"))
        kernel_steps(server, gpus)
        job_steps(server, gpus)
    finally:
        server.stop()
        (args.out / "rows.json").write_text(json.dumps(ROWS, default=str, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
