"""One pod run by the node agent (:mod:`agent`) as local processes, as a kubelet would run its containers.

No images: a container's ``command`` and ``args`` run on this machine with the agent's PATH, whose first
entry is the folder of the Python running the agent (the tests' venv), so ``python``/``python3`` there
are that venv's. What a container sees:

- its ``env`` (values; ``$(VAR)`` references expanded as the kubelet does; ``fieldRef`` of the downward
  API: metadata.name/namespace/uid/labels/annotations, spec.nodeName/serviceAccountName,
  status.podIP/hostIP = 127.0.0.1; ``resourceFieldRef``; ``configMapKeyRef``/``secretKeyRef``), and the
  kubelet's own ``KUBERNETES_SERVICE_HOST``/``_PORT``: the API server's real loopback address, since
  the ``kubernetes`` Service's 10.0.0.1 leads nowhere without kube-proxy;
- ``workingDir``; ``securityContext.runAsUser``/``runAsGroup`` (pod or container) when not root;
- volumes: a ``hostPath`` only at its own path (mountPath == path; anything else fails the pod, saying
  so); ``emptyDir``, ``configMap``, ``secret``, ``downwardAPI`` and ``projected`` ones (the
  service-account token from the TokenRequest API, bound to the pod) made in the pod's folder and
  bind-mounted at their mountPath in a mount namespace of the pod's own (``unshare --mount``).

Each container's stdout and stderr go to one file (its log, served by the agent's kubelet port).
"""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from kubernetes.utils import parse_quantity

POD_IP = "127.0.0.1"
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# In the pod's own mount and UTS namespaces: its hostname, then "SRC DST ro|rw" mounts until "--", then the
# working directory, uid, gid and the command.
SANDBOX = r"""set -e
hostname "$1"; shift
while [ "$1" != "--" ]; do
  mkdir -p "$2"; mount --bind "$1" "$2"
  if [ "$3" = ro ]; then mount -o remount,bind,ro "$2"; fi
  shift 3
done
shift; cd "$1"; uid="$2"; gid="$3"; shift 3
if [ "$uid" != - ]; then exec setpriv --reuid="$uid" --regid="$gid" --clear-groups -- "$@"; fi
exec "$@"
"""
REF_RE = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


class Refused(Exception):
    """Why this node cannot run the pod as it is written; the pod fails with this message."""


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def expand(text: str, env: dict[str, str]) -> str:
    """The kubelet's ``$(VAR)`` expansion: known names replaced, ``$$`` is ``$``, the rest kept."""
    return REF_RE.sub(lambda m: "$" if m[0] == "$$" else env.get(m[1], m[0]), text)


class PodRun:
    """A pod's containers as processes; its status reported to the API server as they start and end."""

    def __init__(self, agent: Any, pod: dict[str, Any]) -> None:
        self.agent = agent
        self.pod = pod
        meta = pod["metadata"]
        self.ns, self.name, self.uid = meta["namespace"], meta["name"], meta["uid"]
        self.folder = agent.state / "pods" / f"{self.ns}_{self.name}_{self.uid[:8]}"
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.logs: dict[str, Path] = {}
        self.finished = threading.Event()
        self.deleting = False
        self.lock = threading.Lock()

    # ----- what the agent calls -----

    def start(self) -> None:
        threading.Thread(target=self._run, name=f"pod-{self.name}", daemon=True).start()

    def terminate(self, grace: float) -> None:
        """The pod is being deleted: SIGTERM to each container's process group, SIGKILL after ``grace``."""
        with self.lock:
            if self.deleting:
                return
            self.deleting = True
            procs = list(self.procs.values())
        for p in procs:
            _signal(p, signal.SIGTERM)

        def kill_later() -> None:
            if not self.finished.wait(grace):
                for p in procs:
                    _signal(p, signal.SIGKILL)

        threading.Thread(target=kill_later, daemon=True).start()

    def kill_now(self) -> None:
        with self.lock:
            self.deleting = True
            procs = list(self.procs.values())
        for p in procs:
            _signal(p, signal.SIGKILL)

    # ----- the pod's life -----

    def _run(self) -> None:
        try:
            try:
                plans = self._prepare()
            except Refused as e:
                self._report_refused(str(e))
                return
            started = now()
            with self.lock:
                if self.deleting:
                    return
                for name, (argv, env, log) in plans.items():
                    self.logs[name] = log
                    with open(log, "ab") as out:
                        self.procs[name] = subprocess.Popen(
                            argv, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                            start_new_session=True,
                        )  # fmt: skip
            self._report_running(started)
            codes = {name: _exit_code(p.wait()) for name, p in self.procs.items()}
            self._report_ended(started, codes)
        except Exception as e:  # the agent goes on; the log says which pod
            self.agent.say(f"{self.ns}/{self.name}: {type(e).__name__}: {e}")
        finally:
            self.finished.set()
            if self.deleting:
                self.agent.confirm_deleted(self.ns, self.name, self.uid)

    def _prepare(self) -> dict[str, tuple[list[str], dict[str, str], Path]]:
        spec = self.pod["spec"]
        if spec.get("initContainers"):
            raise Refused("this node runs no init containers")
        (self.folder / "tmp").mkdir(parents=True, exist_ok=True)
        volumes = self._volumes(spec.get("volumes") or [])
        plans = {}
        for c in spec["containers"]:
            if not c.get("command"):
                raise Refused(
                    f"container {c['name']}: no command; this node has no image to take an entrypoint from"
                )
            mounts: list[str] = []
            for m in c.get("volumeMounts") or []:
                kind, source = volumes.get(m["name"], (None, None))
                if kind is None:
                    raise Refused(
                        f"container {c['name']}: volumeMount {m['name']!r} names no volume of the pod"
                    )
                if m.get("subPath") or m.get("subPathExpr"):
                    raise Refused(f"container {c['name']}: subPath mounts are not supported by this node")
                if kind == "hostPath":
                    if os.path.normpath(m["mountPath"]) != os.path.normpath(source):
                        raise Refused(
                            f"container {c['name']}: hostPath volume {m['name']!r} ({source}) is mounted at "
                            f"{m['mountPath']}; this node runs pods as local processes and can mount a hostPath "
                            "only at its own path"
                        )
                    continue  # the very folder: nothing to mount
                mounts += [source, m["mountPath"], "ro" if m.get("readOnly") else "rw"]
            env = self._env(c)
            argv = [expand(a, env) for a in (*c["command"], *(c.get("args") or ()))]
            ctx = {**(spec.get("securityContext") or {}), **(c.get("securityContext") or {})}
            uid, gid = ctx.get("runAsUser"), ctx.get("runAsGroup")
            ids = ["-", "-"] if not uid else [str(uid), str(gid if gid is not None else uid)]
            workdir = c.get("workingDir") or "/"
            full = ["unshare", "--mount", "--uts", "--propagation", "private", "/bin/sh", "-c", SANDBOX, "pod-sandbox",
                    self.name, *mounts, "--", workdir, *ids, *argv]  # fmt: skip
            plans[c["name"]] = (full, env, self.folder / f"{c['name']}.log")
        return plans

    # ----- volumes -----

    def _volumes(self, volumes: list[dict[str, Any]]) -> dict[str, tuple[str, str]]:
        out = {}
        for v in volumes:
            name = v["name"]
            where = self.folder / "volumes" / name
            if "hostPath" in v:
                path = v["hostPath"]["path"]
                kind = v["hostPath"].get("type") or ""
                if kind == "DirectoryOrCreate":
                    Path(path).mkdir(parents=True, exist_ok=True)
                elif kind == "Directory" and not Path(path).is_dir():
                    raise Refused(f"hostPath volume {name!r}: {path} is not a directory")
                out[name] = ("hostPath", path)
            elif "emptyDir" in v:
                where.mkdir(parents=True, exist_ok=True)
                out[name] = ("emptyDir", str(where))
            elif any(k in v for k in ("projected", "configMap", "secret", "downwardAPI")):
                sources = v["projected"]["sources"] if "projected" in v else [v]
                where.mkdir(parents=True, exist_ok=True)
                for source in sources:
                    for rel, data in self._projection(source).items():
                        target = where / rel
                        target.parent.mkdir(parents=True, exist_ok=True)
                        target.write_bytes(data)
                out[name] = ("projected", str(where))
            else:
                kinds = sorted(k for k in v if k != "name")
                raise Refused(f"volume {name!r} is of a kind this node cannot provide ({', '.join(kinds)})")
        return out

    def _projection(self, source: dict[str, Any]) -> dict[str, bytes]:
        if "serviceAccountToken" in source:
            token = source["serviceAccountToken"]
            return {token["path"]: self.agent.token_for(self.pod, token).encode()}
        if "configMap" in source or "secret" in source:
            kind = "configMap" if "configMap" in source else "secret"
            ref = source[kind]
            data = self.agent.read_data(kind, self.ns, ref.get("name") or ref.get("secretName"))
            if data is None:
                if ref.get("optional"):
                    return {}
                raise Refused(f"{kind} {ref.get('name') or ref.get('secretName')!r} was not found")
            items = ref.get("items") or [{"key": k, "path": k} for k in data]
            return {i["path"]: data[i["key"]] for i in items if i["key"] in data}
        if "downwardAPI" in source:
            return {
                i["path"]: self._field(i["fieldRef"]["fieldPath"]).encode()
                for i in source["downwardAPI"]["items"]
                if "fieldRef" in i
            }
        raise Refused(f"a projected source this node cannot provide: {sorted(source)}")

    # ----- the environment -----

    def _field(self, path: str) -> str:
        meta, spec = self.pod["metadata"], self.pod["spec"]
        m = re.fullmatch(r"metadata\.(labels|annotations)\['(.+)'\]", path)
        if m:
            return str((meta.get(m[1]) or {}).get(m[2], ""))
        if path in ("metadata.labels", "metadata.annotations"):
            values = meta.get(path.split(".")[1]) or {}
            return "\n".join(f"{k}={json.dumps(v)}" for k, v in sorted(values.items()))
        simple = {
            "metadata.name": meta["name"], "metadata.namespace": meta["namespace"], "metadata.uid": meta["uid"],
            "spec.nodeName": spec.get("nodeName", ""), "spec.serviceAccountName": spec.get("serviceAccountName", ""),
            "status.hostIP": POD_IP, "status.hostIPs": POD_IP, "status.podIP": POD_IP, "status.podIPs": POD_IP,
        }  # fmt: skip
        if path not in simple:
            raise Refused(f"fieldRef {path!r} is not supported")
        return str(simple[path])

    def _resource(self, container: dict[str, Any], ref: dict[str, Any]) -> str:
        if ref.get("containerName"):
            container = next(c for c in self.pod["spec"]["containers"] if c["name"] == ref["containerName"])
        kind, _, resource = ref["resource"].partition(".")
        resources = container.get("resources") or {}
        value = (resources.get(kind) or {}).get(resource) or (resources.get("limits") or {}).get(resource)
        if value is None:
            value = self.agent.allocatable.get(resource, "0")
        divisor = parse_quantity(ref.get("divisor") or "1")
        return str(math.ceil(parse_quantity(value) / divisor))

    def _env(self, c: dict[str, Any]) -> dict[str, str]:
        host, port = self.agent.api_address
        env = {
            "PATH": f"{self.agent.python_bin}:{SYSTEM_PATH}",
            "HOME": "/root",
            "HOSTNAME": self.name,
            "TMPDIR": str(self.folder / "tmp"),  # each pod its own temporary folder, as its own /tmp
            "KUBERNETES_SERVICE_HOST": host,
            "KUBERNETES_SERVICE_PORT": str(port),
            "KUBERNETES_PORT": f"tcp://{host}:{port}",
        }
        for source in c.get("envFrom") or []:
            kind = "configMap" if "configMapRef" in source else "secret"
            ref = source.get("configMapRef") or source.get("secretRef") or {}
            data = self.agent.read_data(kind, self.ns, ref["name"]) or {}
            env.update({source.get("prefix", "") + k: v.decode() for k, v in data.items()})
        for e in c.get("env") or []:
            if "value" in e or "valueFrom" not in e:
                env[e["name"]] = expand(e.get("value", ""), env)
                continue
            src = e["valueFrom"]
            if "fieldRef" in src:
                env[e["name"]] = self._field(src["fieldRef"]["fieldPath"])
            elif "resourceFieldRef" in src:
                env[e["name"]] = self._resource(c, src["resourceFieldRef"])
            else:
                kind = "configMap" if "configMapKeyRef" in src else "secret"
                ref = src.get("configMapKeyRef") or src.get("secretKeyRef") or {}
                data = self.agent.read_data(kind, self.ns, ref["name"]) or {}
                if ref["key"] not in data and not ref.get("optional"):
                    raise Refused(f"env {e['name']}: key {ref['key']!r} not in {kind} {ref['name']!r}")
                if ref["key"] in data:
                    env[e["name"]] = data[ref["key"]].decode()
        return env

    # ----- status -----

    def _statuses(self, states: dict[str, dict[str, Any]], ready: bool) -> list[dict[str, Any]]:
        return [
            {"name": c["name"], "image": c.get("image", ""), "imageID": "", "ready": ready, "started": ready,
             "restartCount": 0, "containerID": f"local://{self.uid[:8]}-{c['name']}", "state": states[c["name"]]}
            for c in self.pod["spec"]["containers"]
        ]  # fmt: skip

    def _report_running(self, started: str) -> None:
        states = {name: {"running": {"startedAt": started}} for name in self.procs}
        conds = [{"type": t, "status": "True", "lastTransitionTime": started}
                 for t in ("PodReadyToStartContainers", "Initialized", "ContainersReady", "Ready")]  # fmt: skip
        self.agent.patch_status(self, {
            "phase": "Running", "startTime": started, "hostIP": POD_IP, "hostIPs": [{"ip": POD_IP}],
            "podIP": POD_IP, "podIPs": [{"ip": POD_IP}], "conditions": conds,
            "containerStatuses": self._statuses(states, True),
        })  # fmt: skip

    def _report_ended(self, started: str, codes: dict[str, int]) -> None:
        ended, states = now(), {}
        by_name = {c["name"]: c for c in self.pod["spec"]["containers"]}
        for name, code in codes.items():
            term: dict[str, Any] = {"exitCode": code, "reason": "Completed" if code == 0 else "Error",
                                    "startedAt": started, "finishedAt": ended}  # fmt: skip
            if code != 0 and by_name[name].get("terminationMessagePolicy") == "FallbackToLogsOnError":
                tail = self.logs[name].read_bytes()[-2048:].decode(errors="replace").splitlines()[-80:]
                term["message"] = "\n".join(tail)
            states[name] = {"terminated": term}
        failed = any(codes.values())
        why = "PodFailed" if failed else "PodCompleted"
        self.agent.patch_status(self, {
            "phase": "Failed" if failed else "Succeeded",
            "conditions": [{"type": t, "status": "False", "reason": why, "lastTransitionTime": ended}
                           for t in ("ContainersReady", "Ready")],
            "containerStatuses": self._statuses(states, False),
        })  # fmt: skip
        self.agent.say(f"{self.ns}/{self.name} ended: {codes}")

    def _report_refused(self, message: str) -> None:
        self.agent.say(f"{self.ns}/{self.name} refused: {message}")
        states = {c["name"]: {"terminated": {"exitCode": 128, "reason": "ContainerCannotRun", "message": message,
                                             "startedAt": now(), "finishedAt": now()}}
                  for c in self.pod["spec"]["containers"]}  # fmt: skip
        self.agent.patch_status(self, {
            "phase": "Failed", "reason": "ContainerCannotRun", "message": message,
            "containerStatuses": self._statuses(states, False),
        })  # fmt: skip


def _signal(p: subprocess.Popen[bytes], sig: int) -> None:
    try:
        os.killpg(p.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _exit_code(code: int) -> int:
    return 128 - code if code < 0 else code  # killed by signal N: 128 + N, as container runtimes say
