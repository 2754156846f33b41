"""A node that really runs pods, as local processes: the real-cluster tier's kubelet.

``python agent.py --kubeconfig F --node N --state DIR --kubelet-port P --tls-cert C --tls-key K
--client-ca CA`` registers the Node ``N`` (CPU, memory, pods, ``nvidia.com/gpu: 2``,
``nvidia.com/mig-1g.10gb: 4``; Ready; the ``not-ready`` taint the API server puts on a new Node removed,
as the node-lifecycle controller, not run here, would) and runs every pod bound to it
(:mod:`agent_pods`): its status Running with ``startTime`` and running containers, then each container's
exit code (``terminated.exitCode``, ``reason``, the log tail for ``FallbackToLogsOnError``) and the
phase Succeeded or Failed. A pod being deleted gets SIGTERM on its process groups and SIGKILL after its
grace period; once they are gone its final status is written and the pod deleted with grace 0 (the
kubelet's confirmation, without which a pod bound to a node is never removed).

Pods are followed with a watch on ``spec.nodeName=N`` in a thread, listed again whenever the watch ends
(every minute, or at once on 410 Gone). Container logs are kept in files and served on the kubelet port
(``/containerLogs/NS/POD/CONTAINER``, HTTPS, the API server's client certificate required), which the
API server reaches for ``pods/log`` through the node's ``daemonEndpoints`` and InternalIP 127.0.0.1.

Run as its own process (the control plane fixture starts it) so that a crash shows, and so that nothing it
does shares the tests' event loop. It prints what it does, one line each.
"""

from __future__ import annotations

import argparse
import json
import signal
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from agent_pods import PodRun, now
from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

CAPACITY = {"cpu": "32", "memory": "128Gi", "pods": "110", "ephemeral-storage": "100Gi",
            "nvidia.com/gpu": "2", "nvidia.com/mig-1g.10gb": "4"}  # fmt: skip
LABELS = {"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "gpu-env.test/node": "real",
          "nvidia.com/gpu.product": "NVIDIA-H200"}  # fmt: skip
HEARTBEAT = 10.0
SMP = "application/strategic-merge-patch+json"


class Agent:
    def __init__(self, args: argparse.Namespace) -> None:
        self.node = args.node
        self.state = Path(args.state)
        self.state.mkdir(parents=True, exist_ok=True)
        self.port = args.kubelet_port
        self.api_client = config.new_client_from_config(args.kubeconfig)
        self.v1 = client.CoreV1Api(self.api_client)
        host = urlsplit(self.api_client.configuration.host)
        self.api_address = (host.hostname or "127.0.0.1", host.port or 443)
        self.python_bin = str(Path(sys.executable).parent)
        self.allocatable = dict(CAPACITY)
        self.runs: dict[str, PodRun] = {}  # by pod uid
        self.lock = threading.Lock()
        self.stopping = threading.Event()

    def say(self, text: str) -> None:
        print(f"{time.strftime('%H:%M:%S')} {text}", flush=True)

    # ----- the Node -----

    def node_status(self) -> dict[str, Any]:
        t = now()
        return {"status": {
            "capacity": CAPACITY, "allocatable": self.allocatable,
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                            "message": "the tier's agent runs pods as local processes",
                            "lastHeartbeatTime": t, "lastTransitionTime": t}],
            "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}, {"type": "Hostname", "address": self.node}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": self.port}},
            "nodeInfo": {"kubeletVersion": "v1.36.2-agent", "architecture": "amd64", "operatingSystem": "linux",
                         "containerRuntimeVersion": "local://0", "kernelVersion": "", "osImage": "this machine",
                         "kubeProxyVersion": "", "machineID": "", "systemUUID": "", "bootID": ""},
        }}  # fmt: skip

    def register(self) -> None:
        body = {"metadata": {"name": self.node, "labels": {**LABELS, "kubernetes.io/hostname": self.node}}}
        try:
            self.v1.create_node(body)
        except ApiException as e:
            if e.status != 409:
                raise
        self.v1.patch_node_status(self.node, self.node_status())
        self.v1.patch_node(self.node, {"spec": {"taints": None}})
        self.say(f"node {self.node} registered, kubelet port {self.port}")

    def heartbeat(self) -> None:
        while not self.stopping.wait(HEARTBEAT):
            try:
                self.v1.patch_node_status(self.node, self.node_status())
            except Exception as e:  # the next beat tries again
                self.say(f"heartbeat: {e}")

    # ----- what pods ask of the API -----

    def patch_status(self, run: PodRun, status: dict[str, Any]) -> None:
        try:
            self.v1.patch_namespaced_pod_status(run.name, run.ns, {"status": status}, _content_type=SMP)
        except ApiException as e:
            self.say(f"{run.ns}/{run.name}: status not written: {e.status} {e.reason}")

    def confirm_deleted(self, ns: str, name: str, uid: str) -> None:
        body = client.V1DeleteOptions(grace_period_seconds=0, preconditions=client.V1Preconditions(uid=uid))
        try:
            self.v1.delete_namespaced_pod(name, ns, body=body)
            self.say(f"{ns}/{name} deletion confirmed")
        except ApiException as e:
            if e.status not in (404, 409):
                self.say(f"{ns}/{name}: delete: {e.status} {e.reason}")

    def token_for(self, pod: dict[str, Any], source: dict[str, Any]) -> str:
        meta = pod["metadata"]
        spec = {"expirationSeconds": source.get("expirationSeconds", 3600),
                "boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": meta["name"], "uid": meta["uid"]}}  # fmt: skip
        if source.get("audience"):
            spec["audiences"] = [source["audience"]]
        answer = self.v1.create_namespaced_service_account_token(
            pod["spec"].get("serviceAccountName") or "default", meta["namespace"], {"spec": spec}
        )
        return str(answer.status.token)

    def read_data(self, kind: str, ns: str, name: str) -> dict[str, bytes] | None:
        """A ConfigMap's or Secret's data; None when it does not exist (after waiting a little: the
        controller publishing ``kube-root-ca.crt`` in a new namespace may not have done it yet)."""
        import base64

        deadline = time.monotonic() + 20
        while True:
            try:
                if kind == "configMap":
                    cm = self.v1.read_namespaced_config_map(name, ns)
                    return {k: v.encode() for k, v in (cm.data or {}).items()}
                secret = self.v1.read_namespaced_secret(name, ns)
                return {k: base64.b64decode(v) for k, v in (secret.data or {}).items()}
            except ApiException as e:
                if e.status != 404 or time.monotonic() > deadline:
                    return None
            self.stopping.wait(0.5)

    # ----- pods -----

    def handle(self, kind: str, pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        uid = meta["uid"]
        with self.lock:
            run = self.runs.get(uid)
            if kind == "DELETED":
                gone = self.runs.pop(uid, None)
                if gone is not None and not gone.finished.is_set():
                    gone.kill_now()  # force-deleted while running
                return
            if meta.get("deletionTimestamp"):
                if run is not None and not run.finished.is_set():
                    run.terminate(float(meta.get("deletionGracePeriodSeconds") or 0))
                else:
                    threading.Thread(
                        target=self.confirm_deleted, args=(meta["namespace"], meta["name"], uid), daemon=True
                    ).start()
                return
            phase = (pod.get("status") or {}).get("phase")
            if run is None and phase in (None, "Pending"):
                run = self.runs[uid] = PodRun(self, pod)
                self.say(f"{meta['namespace']}/{meta['name']}: starting")
                run.start()

    def follow_pods(self) -> None:
        selector = f"spec.nodeName={self.node}"
        while not self.stopping.is_set():
            try:
                reply = self.v1.list_pod_for_all_namespaces(field_selector=selector, _preload_content=False)
                listed = json.loads(reply.data)
                seen = set()
                for pod in listed["items"]:
                    seen.add(pod["metadata"]["uid"])
                    self.handle("MODIFIED", pod)
                with self.lock:
                    vanished = [r for uid, r in self.runs.items() if uid not in seen]
                for run in vanished:
                    self.handle("DELETED", {"metadata": {"uid": run.uid}})
                version = listed["metadata"]["resourceVersion"]
                stream = watch.Watch().stream(
                    self.v1.list_pod_for_all_namespaces, field_selector=selector, resource_version=version,
                    timeout_seconds=60, allow_watch_bookmarks=True,
                )  # fmt: skip
                for event in stream:
                    if self.stopping.is_set():
                        return
                    raw = event["raw_object"]
                    if event["type"] == "ERROR":
                        break  # 410 Gone and the like: list again
                    if event["type"] != "BOOKMARK":
                        self.handle(event["type"], raw)
            except Exception as e:  # list again in a moment; the log says why
                self.say(f"watch: {type(e).__name__}: {e}")
                self.stopping.wait(1.0)

    def find_log(self, ns: str, name: str, container: str) -> tuple[PodRun, Path] | None:
        with self.lock:
            runs = [r for r in self.runs.values() if (r.ns, r.name) == (ns, name) and container in r.logs]
        return (runs[-1], runs[-1].logs[container]) if runs else None

    def shutdown(self) -> None:
        self.stopping.set()
        with self.lock:
            runs = list(self.runs.values())
        for run in runs:
            run.terminate(5.0)
        for run in runs:
            run.finished.wait(10)


class Logs(BaseHTTPRequestHandler):
    """The kubelet's ``/containerLogs/NS/POD/CONTAINER``: tailLines, limitBytes and follow honoured."""

    agent: Agent

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        parts = url.path.strip("/").split("/")
        found = self.agent.find_log(*parts[1:4]) if len(parts) == 4 and parts[0] == "containerLogs" else None
        if found is None:
            self.send_error(404, "no such container log on this node")
            return
        run, path = found
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        data = path.read_bytes()
        if "tailLines" in query:
            lines = data.splitlines(keepends=True)
            data = b"".join(lines[-int(query["tailLines"]) :]) if int(query["tailLines"]) else b""
        limit = int(query.get("limitBytes") or 0) or None
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        sent = data[:limit] if limit else data
        self.wfile.write(sent)
        if query.get("follow") == "true":
            offset = path.stat().st_size
            while not (limit and len(sent) >= limit):
                finished = run.finished.is_set()
                with open(path, "rb") as f:
                    f.seek(offset)
                    more = f.read()
                offset += len(more)
                if more:
                    self.wfile.write(more)
                    self.wfile.flush()
                if finished:
                    break
                run.finished.wait(0.2)


def serve_logs(agent: Agent, args: argparse.Namespace) -> None:
    handler = type("Handler", (Logs,), {"agent": agent})
    server = ThreadingHTTPServer(("127.0.0.1", args.kubelet_port), handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(args.tls_cert, args.tls_key)
    context.load_verify_locations(args.client_ca)
    context.verify_mode = ssl.CERT_REQUIRED  # the API server presents its kubelet client certificate
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag in ("--kubeconfig", "--node", "--state", "--tls-cert", "--tls-key", "--client-ca"):
        parser.add_argument(flag, required=True)
    parser.add_argument("--kubelet-port", type=int, required=True)
    args = parser.parse_args()
    agent = Agent(args)
    serve_logs(agent, args)
    agent.register()
    signal.signal(signal.SIGTERM, lambda *_: agent.stopping.set())
    threading.Thread(target=agent.heartbeat, daemon=True).start()
    threading.Thread(target=agent.follow_pods, daemon=True).start()
    while not agent.stopping.wait(1.0):
        pass
    agent.say("stopping: ending the pods")
    agent.shutdown()


if __name__ == "__main__":
    main()
