"""``python -m jupyter_gpu_env.backends.kubernetes.pipelines.carry JOB_FOLDER``: what the pod of a pipeline
node does once its runner has ended, so the pipeline goes on with no Jupyter server.

From the finished job's ``job.json`` (its ``pipeline`` entry) it reads the pipeline's ``pipeline.json``,
asks the same pure decider the server uses (:func:`...pipelines.graph.decide` over
:func:`...pipelines.folder.standing_from_files`) which waiting nodes can be decided now, and, unless the
pipeline was cancelled: creates each node that runs from the Job the server staged in its folder
(:data:`MANIFEST`), and marks each node that must not run skipped (``skipped.json``, with why).

Every step may be done twice: by the last two runs of a sweep ending together, or by the server completing
what a crashed pod left undone. Job names are deterministic, so a second creation is answered 409 by the
API server and counts as done; a skip already marked is kept.

The pod's image has only the runner's dependencies: the API is called with the standard library
(``http.client``, ``ssl``) and the pod's service account (in-cluster: ``KUBERNETES_SERVICE_HOST`` and
``_PORT``, the token, CA and namespace under :data:`SA_DIR`). ``JUPYTER_GPU_ENV_KUBE_API`` replaces the
API server's URL (a proxy in front of it such as ``kubectl proxy``, which may authenticate itself: the
token is then sent only if the pod has one; or a test's emulator).
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import ssl
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from ....contracts import jobfiles
from ....contracts.pipelines import folder as pipeline_folder
from ....contracts.pipelines.graph import decide

log = logging.getLogger("jupyter_gpu_env.carry")

MANIFEST = "kubernetes.json"  # a held node's Job, in its folder (a sweep's: in the sweep's folder)
MAX_MANIFEST = 1 << 20
SA_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
API_ENV = "JUPYTER_GPU_ENV_KUBE_API"
TIMEOUT = 15.0  # seconds for one call: the pod is ending, and the server completes what is left


class CarryError(Exception):
    """Why the pipeline could not be carried on from this pod (the server will do it)."""


@dataclass(frozen=True)
class Endpoint:
    """An API server and the credentials to create Jobs there."""

    url: str
    namespace: str
    token: str | None = None
    ca_file: str | None = None
    timeout: float = TIMEOUT

    @classmethod
    def in_cluster(cls, env: Mapping[str, str] | None = None, sa_dir: Path = SA_DIR) -> Endpoint:
        """The pod's own API server and service account; CarryError when the pod has none."""
        env = os.environ if env is None else env
        url = env.get(API_ENV, "")
        if not url:
            host, port = env.get("KUBERNETES_SERVICE_HOST", ""), env.get("KUBERNETES_SERVICE_PORT", "443")
            if not host:
                raise CarryError("not in a Kubernetes pod (KUBERNETES_SERVICE_HOST is not set)")
            url = f"https://[{host}]:{port}" if ":" in host else f"https://{host}:{port}"
        token = _read_text(sa_dir / "token")
        if token is None and not env.get(API_ENV):  # a proxy named instead authenticates itself
            raise CarryError(
                f"the pod has no service account token ({sa_dir / 'token'}): give pipeline nodes a service "
                "account that may create Jobs (c.KubernetesBackend.pipeline_service_account)"
            )
        ca = sa_dir / "ca.crt"
        return cls(
            url=url.rstrip("/"),
            namespace=_read_text(sa_dir / "namespace") or "default",
            token=token,
            ca_file=str(ca) if ca.is_file() else None,
        )

    def create_job(self, body: Mapping[str, Any]) -> bool:
        """Create the Job ``body`` in its namespace (else this one): True when made, False when a Job of
        its name exists already (409). CarryError for any other answer."""
        namespace = str((body.get("metadata") or {}).get("namespace") or self.namespace)
        path = f"/apis/batch/v1/namespaces/{quote(namespace, safe='')}/jobs"
        status, reply = self._post(path, json.dumps(body).encode())
        if status in (200, 201, 202):
            return True
        if status == 409:
            return False
        raise CarryError(f"creating the Job was answered {status}: {_message(reply)}")

    def _post(self, path: str, data: bytes) -> tuple[int, bytes]:
        parts = urlsplit(self.url)
        host, port = parts.hostname or "", parts.port
        conn: http.client.HTTPConnection
        if parts.scheme == "https":
            context = ssl.create_default_context(cafile=self.ca_file)
            conn = http.client.HTTPSConnection(host, port, timeout=self.timeout, context=context)
        elif parts.scheme == "http":
            conn = http.client.HTTPConnection(host, port, timeout=self.timeout)
        else:
            raise CarryError(f"the API server's URL {self.url!r} is neither https nor http")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        try:
            conn.request("POST", (parts.path.rstrip("/") + path), body=data, headers=headers)
            resp = conn.getresponse()
            return resp.status, resp.read(MAX_MANIFEST)
        except (OSError, http.client.HTTPException) as e:
            raise CarryError(f"the Kubernetes API at {self.url} cannot be reached ({e})") from None
        finally:
            conn.close()


@dataclass
class Outcome:
    """What one carry did: nodes whose Job it created, found already made, marked skipped, or could not
    create (no staged Job: the server hands those over)."""

    created: list[str] = field(default_factory=list)
    existed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    unstaged: list[str] = field(default_factory=list)


def carry(job_folder: Path, endpoint: Callable[[], Endpoint] = Endpoint.in_cluster) -> Outcome:
    """Carry the pipeline of the job in ``job_folder`` on; nothing for a job of no pipeline. CarryError
    when the pipeline cannot be read or a Job cannot be created (what was done stays done)."""
    spec = jobfiles.read_json(job_folder / jobfiles.JOB_JSON)
    entry = (spec or {}).get("pipeline")
    if not isinstance(entry, Mapping) or not isinstance(entry.get("folder"), str):
        return Outcome()
    where = Path(entry["folder"])
    doc = pipeline_folder.read_doc(where)
    if doc is None:
        raise CarryError(f"{where / pipeline_folder.DOC} is missing or damaged")
    out = Outcome()
    if doc.cancelled:
        return out
    api: Endpoint | None = None
    failures: list[str] = []
    for decision in decide(doc.edges(), pipeline_folder.standing_from_files(doc, {})):
        node = doc.node(decision.node)
        if not decision.run:
            pipeline_folder.mark_skipped(node, decision.why)
            out.skipped.append(node.id)
            continue
        try:
            body = read_manifest(Path(node.folder))
            if body is None:
                out.unstaged.append(node.id)
                continue
            again = pipeline_folder.read_doc(where)  # a cancel may have come since: create nothing then
            if again is None or again.cancelled:
                break
            api = api or endpoint()
            (out.created if api.create_job(body) else out.existed).append(node.id)
        except CarryError as e:
            failures.append(f"node '{node.id}': {e}")
    if failures:
        raise CarryError("; ".join(failures))
    return out


def read_manifest(folder: Path) -> dict[str, Any] | None:
    """The Job staged in ``folder``, or None when there is none; CarryError when it is not a Job."""
    try:
        raw = jobfiles.read_bytes(folder / MANIFEST, MAX_MANIFEST)
        body = None if raw is None else json.loads(raw)
    except (jobfiles.Damaged, ValueError, RecursionError) as e:
        raise CarryError(f"{folder / MANIFEST} is damaged ({e})") from None
    if body is None:
        return None
    if not isinstance(body, dict) or body.get("apiVersion") != "batch/v1" or body.get("kind") != "Job":
        raise CarryError(f"{folder / MANIFEST} holds no batch/v1 Job")
    return body


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text().strip() or None
    except OSError:
        return None


def _message(reply: bytes) -> str:
    try:
        data = json.loads(reply)
    except ValueError:
        return reply[:300].decode("utf-8", "replace")
    return str(data.get("message") or data) if isinstance(data, dict) else str(data)[:300]


def main(argv: list[str] | None = None) -> int:
    """Run from the pod's entry point after the runner: never fails the pod, says what it did on stderr."""
    args = sys.argv[1:] if argv is None else argv
    logging.basicConfig(stream=sys.stderr, format="jupyter-gpu-env pipeline: %(message)s", level=logging.INFO)
    if len(args) != 1:
        log.error("usage: python -m %s JOB_FOLDER", __spec__.name if __spec__ else "carry")
        return 2
    t0 = time.monotonic()
    try:
        out = carry(Path(args[0]))
    except (CarryError, jobfiles.Damaged) as e:
        log.warning("could not carry the pipeline on from here (the Jupyter server will): %s", e)
        return 1
    except Exception:  # the pod's end must not hang on a bug here; the server completes the pipeline
        log.exception("could not carry the pipeline on from here (the Jupyter server will)")
        return 1
    for what, nodes in (
        ("started", out.created),
        ("already started", out.existed),
        ("skipped", out.skipped),
        ("left to the server (not staged)", out.unstaged),
    ):
        if nodes:
            log.info("%s: %s", what, ", ".join(nodes))
    log.debug("carried on in %.2f s", time.monotonic() - t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
