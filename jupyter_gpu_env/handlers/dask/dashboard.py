"""A Dask cluster's dashboard through this server: ``{base_url}gpu-env/dask/{cluster_id}/{path}``, its
pages and its websockets (Bokeh's live plots), authenticated like the rest of the API.

Not under the API's path (that answers JSON only): it serves the dashboard's own HTML. It goes only to
the host the backend says the scheduler runs on and the port the keeper reported (see
``DaskService.dashboard_target``), never to an address read from the cluster's folder, and over the
cluster's mutual TLS: the dashboard answers nobody who does not present the cluster's certificate, so
this authenticated proxy is the one way a browser sees it.
"""

from __future__ import annotations

import ssl
from typing import Any

from jupyter_core.utils import ensure_async
from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.base.websocket import WebSocketMixin
from jupyter_server.extension.handler import ExtensionHandlerMixin
from tornado import httpclient, web, websocket

from ...dask.service import DashboardTarget
from ...errors import GpuEnvError
from ...services.server import Services
from ..base import AUTH_RESOURCE

ROUTE = r"/gpu-env/dask/(?P<cluster_id>[0-9a-f]{12})(?:/(?P<path>.*))?"
MAX_PAGE_BYTES = 64 << 20
TIMEOUT = 30.0
# What is passed on each way; cookies and the Jupyter token are this server's, never the dashboard's.
REQUEST_HEADERS = ("Accept", "Accept-Language", "Accept-Encoding", "If-None-Match", "If-Modified-Since")
RESPONSE_HEADERS = ("Content-Type", "Cache-Control", "ETag", "Last-Modified", "Content-Encoding", "Expires")


class DashboardHandler(ExtensionHandlerMixin, WebSocketMixin, websocket.WebSocketHandler, JupyterHandler):
    auth_resource = AUTH_RESOURCE
    upstream: websocket.WebSocketClientConnection | None = None
    _ws_tls: ssl.SSLContext | None = None
    _subprotocols: list[str] = []

    @property
    def services(self) -> Services:
        services: Services = self.settings["gpu_env_services"]
        return services

    async def _target(self, cluster_id: str) -> DashboardTarget:
        if not self.current_user:
            raise web.HTTPError(403, "Log in to Jupyter to see this dashboard.")
        allowed = await ensure_async(
            self.authorizer.is_authorized(self, self.current_user, "read", AUTH_RESOURCE)
        )
        if not allowed:
            raise web.HTTPError(403, "You are not authorized to read gpu_env, which this dashboard needs.")
        try:
            return await self.services.dask.dashboard_target(cluster_id)
        except GpuEnvError as e:
            raise web.HTTPError(e.status, e.message) from None

    def _url(self, scheme: str, target: DashboardTarget, path: str) -> str:
        query = f"?{self.request.query}" if self.request.query else ""
        secure = "s" if target.tls is not None else ""
        return f"{scheme}{secure}://{target.host}:{target.port}/{path}{query}"

    async def get(self, cluster_id: str, path: str | None = None) -> None:
        path = path or ""
        await self.services.start()
        target = await self._target(cluster_id)
        where = f"{target.host}:{target.port}"
        if self.request.headers.get("Upgrade", "").lower() == "websocket":
            self._ws_url = self._url("ws", target, path)
            self._ws_tls = target.tls
            await websocket.WebSocketHandler.get(self, cluster_id, path)
            return
        headers = {k: v for k in REQUEST_HEADERS if (v := self.request.headers.get(k))}
        # its own client: the shared one's body limit (set by whoever made it first) is not ours to change
        client = httpclient.AsyncHTTPClient(force_instance=True, max_body_size=MAX_PAGE_BYTES)
        try:
            answer = await client.fetch(
                self._url("http", target, path),
                ssl_options=target.tls,
                headers=headers,
                follow_redirects=False,
                request_timeout=TIMEOUT,
                raise_error=False,
                decompress_response=False,
            )
        except OSError as e:
            raise web.HTTPError(502, f"The dashboard at {where} cannot be reached: {e}") from None
        finally:
            client.close()
        if answer.code == 599:
            raise web.HTTPError(502, f"The dashboard at {where} did not answer: {answer.error}")
        self.set_status(answer.code, answer.reason)
        for name in RESPONSE_HEADERS:
            if name in answer.headers:
                self.set_header(name, answer.headers[name])
        location = answer.headers.get("Location")
        if location:
            # the dashboard redirects within itself ("/" -> "/status"): keep the browser behind this server
            tail = (
                location.split("://", 1)[-1].split("/", 1)[-1] if "://" in location else location.lstrip("/")
            )
            self.set_header("Location", f"{self.base_url}gpu-env/dask/{cluster_id}/{tail}")
        if answer.body:
            self.write(answer.body)
        await self.finish()

    # ----- websockets, relayed both ways -----

    async def open(self, cluster_id: str, path: str | None = None) -> None:
        super().open()  # WebSocketMixin's pings
        try:
            self.upstream = await websocket.websocket_connect(
                httpclient.HTTPRequest(self._ws_url, connect_timeout=TIMEOUT, ssl_options=self._ws_tls),
                on_message_callback=self._from_dashboard,
                max_message_size=MAX_PAGE_BYTES,
                subprotocols=self._subprotocols or None,
            )
        except (OSError, httpclient.HTTPClientError, websocket.WebSocketClosedError) as e:
            self.log.info("dask dashboard websocket %s: %s", self._ws_url, e)
            self.close(1011, "The dashboard cannot be reached.")

    def select_subprotocol(self, subprotocols: list[str]) -> str | None:
        # Bokeh's session token travels as a subprotocol: passed on as the browser offered it
        self._subprotocols = list(subprotocols)
        return subprotocols[0] if subprotocols else None

    def _from_dashboard(self, message: str | bytes | None) -> None:
        if message is None:
            self.close()
            return
        try:
            self.write_message(message, binary=isinstance(message, bytes))
        except websocket.WebSocketClosedError:
            pass

    async def on_message(self, message: str | bytes) -> None:
        if self.upstream is not None:
            try:
                await self.upstream.write_message(message, binary=isinstance(message, bytes))
            except websocket.WebSocketClosedError:
                self.close()

    def on_close(self) -> None:
        if self.upstream is not None:
            self.upstream.close()
            self.upstream = None

    def set_default_headers(self) -> None:
        if self.request.headers.get("Upgrade", "").lower() != "websocket":
            super().set_default_headers()  # a page gets Jupyter's headers (its CSP); a handshake none

    def check_xsrf_cookie(self) -> None:
        return None  # GET only; a websocket's origin is checked by WebSocketMixin

    def get_compression_options(self) -> dict[str, Any] | None:
        return None
