"""Kueue as a local process beside the control plane of :mod:`.cluster`.

- Its CRDs from ``$GPU_ENV_K8S_BIN/kueue-crds`` (the files of Kueue's config/components/crd/bases).
- Its webhooks from ``$GPU_ENV_K8S_BIN/kueue-webhooks.yaml``, registered by URL on 127.0.0.1 with this
  cluster's CA, only those of Kueue's own API and of batch Jobs: the only integration enabled is
  ``batch/job`` (the pod, deployment... webhooks fail closed and would block every pod).
- Kueue reads certificates at fixed paths when its internal certificate management is off
  (``/etc/kueue/metrics/certs``) and for its visibility server (``/visibility``): it runs in a mount
  namespace of its own where this cluster's certificates are bind-mounted there, so nothing is written to
  those paths of this machine (only their empty mount points are made if missing).
- The visibility API (``VisibilityOnDemand``, on by default) is an aggregated API: APIServices for
  v1beta1 and v1beta2 point at a Service of type ExternalName, 127.0.0.1, since a ClusterIP leads nowhere
  without kube-proxy; the API server sends the request through its front proxy to Kueue's port there.
"""

from __future__ import annotations

import base64
import time
from pathlib import Path
from typing import TYPE_CHECKING

import yaml
from helpers import wait_until_sync

if TYPE_CHECKING:
    from .cluster import ControlPlane

VISIBILITY_SERVICE = ("kueue-system", "visibility-server")
FIXED_PATHS = ("/etc/kueue/metrics/certs", "/visibility")
# Binds the cluster's certificate folders over Kueue's fixed paths, then becomes Kueue.
UNDER_MOUNTS = 'mount --bind "$1" "$2" && mount --bind "$3" "$4" && shift 4 && exec "$@"'


class Kueue:
    def __init__(self, plane: ControlPlane) -> None:
        from .cluster import free_port

        self.plane = plane
        self.webhook_port = free_port()
        self.visibility_port = free_port()
        self.health_port = free_port()
        self.folder = plane.state / "kueue"

    def start(self) -> None:
        plane, ca = self.plane, self.plane.pki.ca
        certs = self.folder / "certs"
        ca.issue(certs, "kueue-webhook", cert_name="tls.crt", key_name="tls.key")
        service = ".".join(reversed(VISIBILITY_SERVICE)) + ".svc"  # the name the aggregator checks
        ca.issue(self.folder / "visibility", "kueue-visibility", dns=("localhost", service),
                 cert_name="tls.crt", key_name="tls.key")  # fmt: skip
        config = {
            "apiVersion": "config.kueue.x-k8s.io/v1beta2",
            "kind": "Configuration",
            "namespace": "kueue-system",
            "health": {"healthProbeBindAddress": f"127.0.0.1:{self.health_port}"},
            "metrics": {"bindAddress": "0"},
            "webhook": {"port": self.webhook_port, "host": "127.0.0.1", "certDir": str(certs)},
            "leaderElection": {"leaderElect": False},
            "internalCertManagement": {"enable": False},
            "visibilityServer": {"bindAddress": "127.0.0.1", "bindPort": self.visibility_port},
            "integrations": {"frameworks": ["batch/job"]},
        }
        (self.folder / "config.yaml").write_text(yaml.safe_dump(config))
        t0 = time.monotonic()
        plane.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kueue-system"}})
        self._crds()
        self._webhooks()
        self._visibility_objects()
        for path in FIXED_PATHS:
            Path(path).mkdir(parents=True, exist_ok=True)  # mount points only; nothing is written in them
        plane.run("kueue", [
            "unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", UNDER_MOUNTS, "kueue-mounts",
            str(certs), FIXED_PATHS[0], str(self.folder / "visibility"), FIXED_PATHS[1],
            str(plane.bin_dir / "kueue"), "--config", str(self.folder / "config.yaml"),
            "--kubeconfig", str(plane.admin),  # also the visibility server's delegated authn/authz
        ])  # fmt: skip
        plane.timings["kueue_objects_s"] = time.monotonic() - t0

    def _crds(self) -> None:
        names = []
        for path in sorted((self.plane.bin_dir / "kueue-crds").glob("*.yaml")):
            for doc in yaml.safe_load_all(path.read_text()):
                if doc and doc.get("kind") == "CustomResourceDefinition":
                    self.plane.create(doc)
                    names.append(doc["metadata"]["name"])

        def established() -> bool:
            for name in names:
                status, crd = self.plane.get(
                    f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}"
                )
                conds = {c["type"]: c["status"] for c in (crd.get("status") or {}).get("conditions") or []}
                if status != 200 or conds.get("Established") != "True":
                    return False
            return True

        wait_until_sync(established, within=60, every=0.2, what="Kueue's CRDs being established")

    def _webhooks(self) -> None:
        ca = base64.b64encode(self.plane.pki.ca.cert.read_bytes()).decode()
        source = (self.plane.bin_dir / "kueue-webhooks.yaml").read_text()
        for doc in yaml.safe_load_all(source):
            if not doc:
                continue
            keep = []
            for hook in doc.get("webhooks") or []:
                groups = {g for rule in hook.get("rules") or [] for g in rule.get("apiGroups") or []}
                if not groups & {"kueue.x-k8s.io", "batch"}:
                    continue  # the pod, deployment... integrations are off: their webhooks would block pods
                path = hook["clientConfig"]["service"]["path"]
                hook["clientConfig"] = {"url": f"https://127.0.0.1:{self.webhook_port}{path}", "caBundle": ca}
                keep.append(hook)
            doc["metadata"] = {"name": "kueue-" + doc["metadata"]["name"]}
            doc["webhooks"] = keep
            self.plane.create(doc)

    def _visibility_objects(self) -> None:
        ns, name = VISIBILITY_SERVICE
        service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": ns},
                   "spec": {"type": "ExternalName", "externalName": "127.0.0.1"}}  # fmt: skip
        try:
            self.plane.create(service)
        except RuntimeError:  # an IP refused as a DNS name here: localhost resolves to it too
            service["spec"]["externalName"] = "localhost"
            self.plane.create(service)
        ca = base64.b64encode(self.plane.pki.ca.cert.read_bytes()).decode()
        for version in ("v1beta1", "v1beta2"):
            self.plane.create({
                "apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
                "metadata": {"name": f"{version}.visibility.kueue.x-k8s.io"},
                "spec": {"group": "visibility.kueue.x-k8s.io", "version": version, "groupPriorityMinimum": 100,
                         "versionPriority": 100, "caBundle": ca,
                         "service": {"name": name, "namespace": ns, "port": self.visibility_port}},
            })  # fmt: skip

    def _webhook_answers(self) -> bool:
        probe = {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ResourceFlavor",
            "metadata": {"name": "probe"},
        }
        try:
            self.plane.create(probe, exist_ok=False, dry_run=True)
        except RuntimeError:
            return False
        return True

    def wait_ready(self) -> str:
        """Wait for the webhooks to answer; then for the visibility API: "served", or why not."""
        t0 = time.monotonic()
        wait_until_sync(self._webhook_answers, within=90, every=0.2,
                        what=self.plane._waiting("Kueue's webhooks answering"))  # fmt: skip
        self.plane.timings["kueue_ready_s"] = time.monotonic() - t0
        last: list[str] = []

        def available() -> bool:
            status, svc = self.plane.get(
                "/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.visibility.kueue.x-k8s.io"
            )
            conds = [c for c in (svc.get("status") or {}).get("conditions") or [] if c["type"] == "Available"]
            last[:] = [f"{c.get('reason')}: {c.get('message')}" for c in conds]
            return status == 200 and bool(conds) and conds[0]["status"] == "True"

        try:
            wait_until_sync(available, within=45, every=0.3, what="Kueue's visibility APIService Available")
        except AssertionError:
            return "not served: " + (last[0] if last else "no condition")
        return "served"

    def cleanup(self) -> None:
        """Nothing outside the state folder to remove: the fixed paths were only mount points."""
