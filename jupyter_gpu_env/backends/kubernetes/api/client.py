"""Talking to a Kubernetes API server: loading the configuration, one call, its errors.

Shared by the Kubernetes backend and the cluster capacity reader (gpu/cluster.py), so that both honour
``c.KubernetesBackend.kubeconfig`` and ``context``. The official client is synchronous: :meth:`KubeApi.run`
runs blocking work in a worker thread, so the event loop never waits on the network. Replies are parsed
here (``_preload_content=False``), not by the client's models: faster for a hundred Jobs, the same for
custom resources, and independent of the client's model generation. The ``kubernetes`` package is
imported only when a client is made: the backend's module is importable without it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ....errors import Conflict, Forbidden, GpuEnvError, InvalidRequest, NotFound, Unavailable

SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


def error_message(data: Any) -> str | None:
    """The message of an API server's error body (a Status object), or its text."""
    try:
        body = json.loads(data) if isinstance(data, bytes | str) else data
    except ValueError:
        return data.decode("utf-8", "replace")[:500] if isinstance(data, bytes) else str(data)[:500]
    if isinstance(body, dict):
        return body.get("message") or body.get("reason")
    return None


class ApiError(Exception):
    """An API server reply with an error status, with the server's message."""

    def __init__(self, status: int, message: str, what: str) -> None:
        super().__init__(f"{what}: HTTP {status}: {message}")
        self.status = status
        self.message = message
        self.what = what

    @classmethod
    def from_exception(cls, e: Any, what: str) -> ApiError:
        return cls(
            int(getattr(e, "status", 0) or 0), error_message(getattr(e, "body", None)) or str(e.reason), what
        )

    def as_error(self, doing: str) -> GpuEnvError:
        text = f"Kubernetes refused to {self.what} ({self.status}): {self.message}"
        if self.status in (401, 403):
            return Forbidden(
                text + " The server's service account needs the Role in docs/admin-kubernetes.md.",
                reason="kubernetes_forbidden",
            )
        if self.status == 404:
            return NotFound(text, reason="kubernetes_not_found")
        if self.status == 409:
            return Conflict(text, reason="kubernetes_conflict")
        if self.status in (400, 422):
            return InvalidRequest(text, reason="kubernetes_invalid")
        return Unavailable(f"Could not {doing}: {text}", reason="kubernetes_unavailable")


def load_client(kubeconfig: str = "", context: str = "") -> tuple[Any, str | None]:
    """An ApiClient from the pod's service account, else kubeconfig (KUBECONFIG is respected).

    Returns the client and the namespace the configuration names (None when it names none).
    """
    from kubernetes import client, config

    cfg = client.Configuration()
    if not kubeconfig and not context:
        try:
            config.load_incluster_config(client_configuration=cfg)  # type: ignore[no-untyped-call]  # the kubernetes client has no type hints
        except config.ConfigException:
            pass
        else:
            try:
                namespace = SERVICE_ACCOUNT_NAMESPACE.read_text().strip() or None
            except OSError:
                namespace = None
            return client.ApiClient(cfg), namespace
    path = kubeconfig or None
    config.load_kube_config(  # type: ignore[no-untyped-call]  # the kubernetes client has no type hints
        config_file=path, context=context or None, client_configuration=cfg
    )
    namespace = None
    with contextlib.suppress(Exception):
        contexts, active = config.list_kube_config_contexts(config_file=path)  # type: ignore[no-untyped-call]  # the kubernetes client has no type hints
        chosen = next((c for c in contexts if c.get("name") == context), active) if context else active
        namespace = ((chosen or {}).get("context") or {}).get("namespace")
    return client.ApiClient(cfg), namespace


def unreachable(e: Exception) -> bool:
    """Connection refused, DNS, TLS, timeouts, or no usable configuration (kubeconfig, service account)."""
    import urllib3

    if isinstance(e, OSError | urllib3.exceptions.HTTPError):
        return True
    return type(e).__name__ == "ConfigException"


def current_user() -> str:
    """Who the jobs belong to: JupyterHub's user name, else the account running the server."""
    import getpass

    return os.environ.get("JUPYTERHUB_USER") or getpass.getuser()


class KubeApi:
    """One lazily made ApiClient and the calls on it; ``factory`` replaces configuration loading (tests)."""

    def __init__(
        self,
        kubeconfig: str = "",
        context: str = "",
        *,
        request_timeout: float = 30.0,
        factory: Callable[[], Any] | None = None,
    ) -> None:
        self.kubeconfig = kubeconfig
        self.context = context
        self.request_timeout = request_timeout
        self._factory = factory
        self._client: Any = None
        self.namespace: str | None = None  # what the configuration names, once loaded
        self._lock = threading.Lock()

    def client(self) -> Any:
        """The ApiClient, made on first use (in a worker thread: it reads kubeconfig files)."""
        with self._lock:
            if self._client is None:
                if self._factory is not None:
                    self._client = self._factory()
                else:
                    self._client, self.namespace = load_client(self.kubeconfig, self.context)
            return self._client

    def raw(
        self, method: Callable[..., Any], *args: Any, what: str, parse: bool = True, **kwargs: Any
    ) -> Any:
        """Call a client method; return the reply's JSON (its bytes when ``parse`` is false). Raises ApiError."""
        from kubernetes.client.exceptions import ApiException

        kwargs.setdefault("_request_timeout", self.request_timeout)
        try:
            resp = method(*args, _preload_content=False, **kwargs)
        except ApiException as e:
            raise ApiError.from_exception(e, what) from None
        status = getattr(resp, "status", 200)
        data = resp.data if hasattr(resp, "data") else resp.read()
        if status >= 400:
            raise ApiError(status, error_message(data) or str(getattr(resp, "reason", "")), what)
        if not parse:
            return data
        try:
            return json.loads(data)
        except ValueError:
            return data

    def one(self, method: Callable[..., Any], *args: Any, what: str, **kwargs: Any) -> dict[str, Any]:
        """A call whose reply is one object (a Job made or read), as JSON."""
        reply = self.raw(method, *args, what=what, **kwargs)
        return reply if isinstance(reply, dict) else {}

    def items(self, what: str, method: Callable[..., Any], *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        """The ``items`` of a list call."""
        reply = self.raw(method, *args, what=what, **kwargs)
        return list(reply.get("items") or []) if isinstance(reply, dict) else []

    async def run(self, fn: Callable[[], Any], doing: str) -> Any:
        """Run blocking client work in a thread; turn every failure into a GpuEnvError."""
        try:
            return await asyncio.to_thread(fn)
        except GpuEnvError:
            raise
        except ApiError as e:
            raise e.as_error(doing) from None
        except Exception as e:
            if not unreachable(e):
                raise  # a bug, not the cluster: let it show as one
            raise Unavailable(f"Could not {doing}: the Kubernetes API cannot be reached ({e}).") from e

    async def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(client.close)
