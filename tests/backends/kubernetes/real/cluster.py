"""A real Kubernetes control plane on loopback, started from the binaries in ``$GPU_ENV_K8S_BIN``.

etcd, kube-apiserver (RBAC, token and service-account authentication, the aggregation layer's front
proxy for Kueue's visibility API, the kubelet port reached over TLS with this cluster's CA),
kube-controller-manager (every controller but node-lifecycle: no kubelet heartbeats a Lease here),
kube-scheduler, Kueue (:mod:`.kueue_up`) and the node agent (:mod:`.agent`, a separate process that runs
pods as local processes). Everything binds 127.0.0.1 on free ports, keeps its state and log under one
folder and runs in its own process group, stopped as a group.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from helpers import wait_until_sync

from .pki import API_IPS, API_NAMES, Pki

BINARIES = ("etcd-local", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kueue")
KUEUE_FILES = ("kueue-crds", "kueue-webhooks.yaml")
NODE = "real-node-1"
AGENT = Path(__file__).with_name("agent.py")


def missing(bin_dir: Path) -> list[str]:
    """What the tier needs in ``bin_dir`` and does not find there."""
    return [n for n in (*BINARIES, *KUEUE_FILES) if not (bin_dir / n).exists()]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Proc:
    """One component: its own process group, its output in ``logs/<name>.log``."""

    def __init__(self, name: str, argv: list[str], logs: Path, env: dict[str, str] | None = None) -> None:
        self.name = name
        self.log = logs / f"{name}.log"
        with open(self.log, "ab") as out:
            self.popen = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True, env=env,
            )  # fmt: skip

    def alive(self) -> bool:
        return self.popen.poll() is None

    def tail(self, lines: int = 25) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def check(self) -> None:
        if not self.alive():
            raise RuntimeError(f"{self.name} exited ({self.popen.returncode}):\n{self.tail()}")

    def stop(self, grace: float = 10.0) -> None:
        """SIGTERM to the group, SIGKILL to what is left after ``grace`` seconds."""
        if self.popen.poll() is None:
            try:
                os.killpg(self.popen.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.popen.wait(grace)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.popen.pid, signal.SIGKILL)  # the rest of the group, whatever it started
        except ProcessLookupError:
            pass
        self.popen.wait()


@dataclass
class ControlPlane:
    bin_dir: Path
    state: Path
    api_port: int = field(default_factory=free_port)
    etcd_port: int = field(default_factory=free_port)
    peer_port: int = field(default_factory=free_port)
    kubelet_port: int = field(default_factory=free_port)
    procs: list[Proc] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    visibility: str = "not started"

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.api_port}"

    @property
    def logs(self) -> Path:
        return self.state / "logs"

    def kubeconfig(self, path: Path, user: str, token: str, namespace: str = "default") -> Path:
        data = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "real", "cluster": {"server": self.server,
                                                      "certificate-authority": str(self.pki.ca.cert)}}],
            "users": [{"name": user, "user": {"token": token}}],
            "contexts": [{"name": "real", "context": {"cluster": "real", "user": user, "namespace": namespace}}],
            "current-context": "real",
        }  # fmt: skip
        path.write_text(json.dumps(data, indent=1))  # JSON is YAML: any kubeconfig reader takes it
        path.chmod(0o600)
        return path

    def start(self) -> None:
        t0 = time.monotonic()
        self.logs.mkdir(parents=True, exist_ok=True)
        self.pki = Pki.make(self.state / "pki")
        self.admin_token = os.urandom(24).hex()
        tokens = self.state / "pki" / "tokens.csv"
        tokens.write_text(f'{self.admin_token},admin,admin-uid,"system:masters"\n')
        self.admin = self.kubeconfig(self.state / "admin.kubeconfig", "admin", self.admin_token)
        self._start_etcd()
        self._start_apiserver(tokens)
        wait_until_sync(self._ready, within=90, every=0.2, what=self._waiting("kube-apiserver /readyz"))
        self.timings["apiserver_ready_s"] = time.monotonic() - t0
        self._start_controllers()
        from .kueue_up import Kueue

        self.kueue = Kueue(self)
        self.kueue.start()
        self._start_agent()
        wait_until_sync(
            self._default_account, within=90, every=0.2, what=self._waiting("the default ServiceAccount")
        )
        wait_until_sync(self._node_ready, within=60, every=0.2, what=self._waiting(f"node {NODE} Ready"))
        self.timings["core_ready_s"] = time.monotonic() - t0
        self.visibility = self.kueue.wait_ready()
        self.timings["ready_s"] = time.monotonic() - t0

    def _start_etcd(self) -> None:
        peer = f"http://127.0.0.1:{self.peer_port}"
        client = f"http://127.0.0.1:{self.etcd_port}"
        self.run("etcd", [
            str(self.bin_dir / "etcd-local"), "--name", "real", "--data-dir", str(self.state / "etcd"),
            "--listen-client-urls", client, "--advertise-client-urls", client,
            "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
            "--initial-cluster", f"real={peer}", "--unsafe-no-fsync", "--log-level", "warn",
        ])  # fmt: skip

    def _start_apiserver(self, tokens: Path) -> None:
        p = self.pki
        crt, key = p.ca.issue(p.folder, "kube-apiserver", dns=API_NAMES, ips=API_IPS)
        kubelet_crt, kubelet_key = p.ca.issue(p.folder, "apiserver-kubelet-client", server=False)
        proxy_crt, proxy_key = p.front_proxy_ca.issue(p.folder, "front-proxy-client", server=False)
        self.run("kube-apiserver", [
            str(self.bin_dir / "kube-apiserver"),
            "--etcd-servers", f"http://127.0.0.1:{self.etcd_port}",
            "--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
            "--secure-port", str(self.api_port), "--tls-cert-file", str(crt), "--tls-private-key-file", str(key),
            "--client-ca-file", str(p.ca.cert), "--token-auth-file", str(tokens),
            "--authorization-mode", "RBAC",
            "--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
            "--service-account-key-file", str(p.sa_pub), "--service-account-signing-key-file", str(p.sa_key),
            "--service-cluster-ip-range", "10.0.0.0/24", "--allow-privileged=true", "--profiling=false",
            "--cert-dir", str(self.state / "apiserver-certs"),
            # the advertised 127.0.0.1 may not be an Endpoints address: no reconciler of `kubernetes`
            "--endpoint-reconciler-type", "none",
            # pods/log goes to the node agent's kubelet port, checked against this cluster's CA
            "--kubelet-certificate-authority", str(p.ca.cert),
            "--kubelet-client-certificate", str(kubelet_crt), "--kubelet-client-key", str(kubelet_key),
            "--kubelet-preferred-address-types", "InternalIP",
            # the aggregation layer: Kueue's visibility API is an APIService
            "--requestheader-client-ca-file", str(p.front_proxy_ca.cert),
            "--requestheader-allowed-names", "front-proxy-client",
            "--requestheader-username-headers", "X-Remote-User",
            "--requestheader-group-headers", "X-Remote-Group",
            "--requestheader-extra-headers-prefix", "X-Remote-Extra-",
            "--proxy-client-cert-file", str(proxy_crt), "--proxy-client-key-file", str(proxy_key),
        ])  # fmt: skip

    def _start_controllers(self) -> None:
        p = self.pki
        self.run("kube-controller-manager", [
            str(self.bin_dir / "kube-controller-manager"), "--kubeconfig", str(self.admin),
            "--bind-address", "127.0.0.1", "--secure-port", "0", "--leader-elect=false",
            # no node-lifecycle controller: it would evict the pods of a node whose kubelet keeps no Lease
            "--controllers", "*,-node-lifecycle-controller",
            "--service-account-private-key-file", str(p.sa_key), "--root-ca-file", str(p.ca.cert),
            "--cluster-signing-cert-file", str(p.ca.cert), "--cluster-signing-key-file", str(p.ca.key),
        ])  # fmt: skip
        self.run("kube-scheduler", [
            str(self.bin_dir / "kube-scheduler"), "--kubeconfig", str(self.admin),
            "--bind-address", "127.0.0.1", "--secure-port", "0", "--leader-elect=false",
        ])  # fmt: skip

    def _start_agent(self) -> None:
        crt, key = self.pki.ca.issue(self.pki.folder, "kubelet-serving")
        self.agent_state = self.state / "node"
        self.run("agent", [
            sys.executable, str(AGENT), "--kubeconfig", str(self.admin), "--node", NODE,
            "--state", str(self.agent_state), "--kubelet-port", str(self.kubelet_port),
            "--tls-cert", str(crt), "--tls-key", str(key), "--client-ca", str(self.pki.ca.cert),
        ])  # fmt: skip

    def run(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> Proc:
        proc = Proc(name, argv, self.logs, env)
        self.procs.append(proc)
        return proc

    def check_alive(self) -> None:
        for proc in self.procs:
            proc.check()

    def _waiting(self, what: str) -> Any:
        def say() -> str:
            dead = [
                f"{p.name} exited ({p.popen.returncode}):\n{p.tail()}" for p in self.procs if not p.alive()
            ]
            return what + ("; " + "\n".join(dead) if dead else f" (logs in {self.logs})")

        return say

    # ----- readiness, through the admin token -----

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        """``method path`` as admin: the status and the JSON (or text) answered; (0, why) unreachable."""
        self.check_alive()
        data = None if body is None else json.dumps(body).encode()
        headers = {"Authorization": f"Bearer {self.admin_token}", "Content-Type": "application/json"}
        req = urllib.request.Request(self.server + path, data=data, method=method, headers=headers)
        context = ssl.create_default_context(cafile=str(self.pki.ca.cert))
        try:
            with urllib.request.urlopen(req, timeout=10, context=context) as resp:
                raw, status = resp.read(), resp.status
        except urllib.error.HTTPError as e:
            raw, status = e.read(), e.code
        except OSError as e:
            return 0, str(e)
        try:
            return status, json.loads(raw)
        except ValueError:
            return status, raw.decode(errors="replace")

    def get(self, path: str) -> tuple[int, Any]:
        return self.request("GET", path)

    def create(self, obj: dict[str, Any], *, exist_ok: bool = True, dry_run: bool = False) -> Any:
        """Create ``obj`` as admin (its path from apiVersion, kind and namespace); the object made."""
        version, kind = obj["apiVersion"], obj["kind"]
        plural = kind.lower() + ("es" if kind.endswith("s") else "s")
        ns = obj.get("metadata", {}).get("namespace")
        path = ("/api/v1" if "/" not in version else f"/apis/{version}") + (f"/namespaces/{ns}" if ns else "")
        status, answer = self.request("POST", f"{path}/{plural}" + ("?dryRun=All" if dry_run else ""), obj)
        if status in (200, 201) or (status == 409 and exist_ok):
            return answer
        raise RuntimeError(f"creating {kind} {obj['metadata'].get('name')}: HTTP {status}: {answer}")

    def _ready(self) -> bool:
        return self.get("/readyz")[0] == 200

    def _default_account(self) -> bool:
        return self.get("/api/v1/namespaces/default/serviceaccounts/default")[0] == 200

    def _node_ready(self) -> bool:
        status, node = self.get(f"/api/v1/nodes/{NODE}")
        if status != 200:
            return False
        ready = [c for c in node["status"].get("conditions") or [] if c["type"] == "Ready"]
        return bool(ready and ready[0]["status"] == "True" and not node["spec"].get("taints"))

    def stop(self) -> None:
        for proc in reversed(self.procs):
            proc.stop(grace=15.0 if proc.name == "agent" else 10.0)
        if getattr(self, "kueue", None) is not None:
            self.kueue.cleanup()

    def rss_mib(self) -> dict[str, float]:
        """Each component's resident memory now (its whole process group), in MiB."""
        import psutil

        out: dict[str, float] = {}
        for proc in self.procs:
            total = 0
            for p in psutil.process_iter(["pid"]):
                try:
                    if os.getpgid(p.pid) == proc.popen.pid:
                        total += p.memory_info().rss
                except (psutil.Error, ProcessLookupError):
                    pass
            out[proc.name] = round(total / (1 << 20), 1)
        return out
