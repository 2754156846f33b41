"""What an administrator sets up for the backend, on the real cluster: the namespace, Kueue's queue and
priorities, and the server's identity with exactly the RBAC of docs/admin-kubernetes.md.

The RBAC, the pipeline's and the Dask keeper's accounts and the PriorityClass/WorkloadPriorityClass come
from the YAML blocks of the guide itself, read at test time: the guide is what is tested. The server's
service account gets a token through the TokenRequest API and a kubeconfig of its own; the backend under
test uses that kubeconfig, never the admin's.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from helpers import wait_until_sync

from .cluster import ControlPlane

GUIDE = Path(__file__).parents[4] / "docs" / "admin-kubernetes.md"
FLAVOR = "h200"
CLUSTER_QUEUE = "gpu"
QUOTA = {"cpu": "16", "memory": "64Gi", "nvidia.com/gpu": "2", "nvidia.com/mig-1g.10gb": "4"}


def guide_objects() -> list[dict[str, Any]]:
    """Every object of every ```yaml block of the admin guide, in order."""
    text = GUIDE.read_text()
    out = []
    for block in re.findall(r"^```yaml\n(.*?)^```", text, flags=re.S | re.M):
        out += [doc for doc in yaml.safe_load_all(block) if isinstance(doc, dict) and "kind" in doc]
    return out


def pick(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    found = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    assert len(found) == 1, f"docs/admin-kubernetes.md has {len(found)} {kind} named {name!r}"
    return copy.deepcopy(found[0])


@dataclass
class Tenancy:
    """The namespace, its queue and priorities, and the accounts, as the guide has them."""

    plane: ControlPlane
    namespace: str = ""
    server_account: str = ""
    local_queue: str = ""
    kubeconfig: Path = Path()
    pipeline_account: str = ""
    dask_account: str = ""
    priorities: dict[str, dict[str, str]] | None = None

    def setup(self) -> None:
        docs = guide_objects()
        role = pick(docs, "Role", "jupyter-gpu-env-jobs")
        binding = pick(docs, "RoleBinding", "jupyter-gpu-env-jobs")
        self.namespace = role["metadata"]["namespace"]
        (subject,) = binding["subjects"]
        self.server_account = subject["name"]
        p = self.plane
        p.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.namespace}})
        wait_until_sync(self._namespace_ready, within=60, every=0.2,
                        what=f"the default ServiceAccount and kube-root-ca.crt in {self.namespace}")  # fmt: skip
        p.create({"apiVersion": "v1", "kind": "ServiceAccount",
                  "metadata": {"name": self.server_account, "namespace": self.namespace}})  # fmt: skip
        for obj in (
            role, binding,
            pick(docs, "ClusterRole", "jupyter-gpu-env-nodes"), pick(docs, "ClusterRoleBinding", "jupyter-gpu-env-nodes"),
            # pipeline nodes' pods create their children with this account
            pick(docs, "ServiceAccount", "jupyter-gpu-env-pipeline"), pick(docs, "Role", "jupyter-gpu-env-pipeline"),
            pick(docs, "RoleBinding", "jupyter-gpu-env-pipeline"),
            # the Dask scheduler's keeper starts and stops workers with this one
            pick(docs, "ServiceAccount", "dask-keeper"), pick(docs, "Role", "dask-keeper"),
            pick(docs, "RoleBinding", "dask-keeper"),
            # opportunistic jobs: the pods' PriorityClass and the Workloads' WorkloadPriorityClass
            pick(docs, "PriorityClass", "batch-low"), pick(docs, "WorkloadPriorityClass", "opportunistic"),
        ):  # fmt: skip
            p.create(obj, exist_ok=False)
        self.pipeline_account, self.dask_account = "jupyter-gpu-env-pipeline", "dask-keeper"
        self.priorities = {
            "opportunistic": {"priority_class": "batch-low", "workload_priority_class": "opportunistic"}
        }
        self._queues()
        token = self.token(self.server_account)
        self.kubeconfig = p.kubeconfig(
            p.state / "server.kubeconfig", self.server_account, token, self.namespace
        )

    def _namespace_ready(self) -> bool:
        ns = self.namespace
        return (
            self.plane.get(f"/api/v1/namespaces/{ns}/serviceaccounts/default")[0] == 200
            and self.plane.get(f"/api/v1/namespaces/{ns}/configmaps/kube-root-ca.crt")[0] == 200
        )

    def _queues(self) -> None:
        docs = guide_objects()
        self.local_queue = pick(docs, "LocalQueue", "team-a")["metadata"]["name"]
        kueue = "kueue.x-k8s.io/v1beta2"
        self.plane.create({"apiVersion": kueue, "kind": "ResourceFlavor", "metadata": {"name": FLAVOR},
                           "spec": {"nodeLabels": {"gpu-env.test/node": "real"}}})  # fmt: skip
        self.plane.create({
            "apiVersion": kueue, "kind": "ClusterQueue", "metadata": {"name": CLUSTER_QUEUE},
            "spec": {
                "namespaceSelector": {}, "queueingStrategy": "BestEffortFIFO",
                "resourceGroups": [{"coveredResources": list(QUOTA), "flavors": [{"name": FLAVOR, "resources": [
                    {"name": r, "nominalQuota": q} for r, q in QUOTA.items()]}]}],
                "preemption": {"withinClusterQueue": "LowerPriority"},
            },
        })  # fmt: skip
        self.plane.create({"apiVersion": kueue, "kind": "LocalQueue",
                           "metadata": {"name": self.local_queue, "namespace": self.namespace},
                           "spec": {"clusterQueue": CLUSTER_QUEUE}})  # fmt: skip

        def active() -> bool:
            status, cq = self.plane.get(f"/apis/{kueue}/clusterqueues/{CLUSTER_QUEUE}")
            conds = {c["type"]: c["status"] for c in (cq.get("status") or {}).get("conditions") or []}
            return status == 200 and conds.get("Active") == "True"

        wait_until_sync(active, within=60, every=0.2, what=f"ClusterQueue {CLUSTER_QUEUE} Active")

    def token(self, account: str, seconds: int = 24 * 3600) -> str:
        path = f"/api/v1/namespaces/{self.namespace}/serviceaccounts/{account}/token"
        body = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": seconds},
        }
        status, answer = self.plane.request("POST", path, body)
        assert status == 201, f"TokenRequest for {account}: HTTP {status}: {answer}"
        return str(answer["status"]["token"])
