"""What every handler shares: authentication, authorization, body parsing, and the one error mapping.

Handlers are thin: decorate each verb with :func:`operation`, parse the body into a pydantic
model, call one service and return its model. The decorator also records what the OpenAPI
document says about the operation, so the document cannot drift from the code.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from jupyter_server.extension.handler import ExtensionHandlerMixin
from pydantic import BaseModel, ValidationError
from tornado import web

from ..errors import GpuEnvError

log = logging.getLogger(__name__)

_STATUS_REASONS = {
    400: "invalid_request",
    401: "unauthenticated",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "too_large",
}

AUTH_RESOURCE = "gpu_env"
API_PREFIX = "gpu-env/api"

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Param:
    name: str
    schema: dict[str, Any]
    description: str
    required: bool = False


@dataclass(frozen=True)
class OperationSpec:
    summary: str
    response: type[BaseModel] | None
    status: int = 200
    request: type[BaseModel] | None = None
    query: tuple[Param, ...] = ()
    errors: tuple[int, ...] = ()
    description: str = ""
    also: tuple[tuple[int, type[BaseModel]], ...] = ()
    response_content_type: str = "application/json"


def _validation_message(err: ValidationError) -> str:
    parts = []
    for e in err.errors():
        where = ".".join(str(p) for p in e.get("loc", ())) or "body"
        msg = str(e.get("msg", "")).removeprefix("Value error, ")
        parts.append(f"{where}: {msg}")
    return "Invalid request: " + "; ".join(parts)


class _ApiHttpError(web.HTTPError):
    """An HTTPError that carries validation details into the JSON error body."""

    def __init__(self, status: int, message: str, reason: str, details: list[dict] | None = None):
        super().__init__(status, message, reason=reason)
        self.details = details


def operation(
    summary: str,
    *,
    response: type[BaseModel] | None = None,
    status: int = 200,
    request: type[BaseModel] | None = None,
    query: tuple[Param, ...] = (),
    errors: tuple[int, ...] = (),
    description: str = "",
    also: tuple[tuple[int, type[BaseModel]], ...] = (),
) -> Callable[[Callable[..., Awaitable[Any]]], Callable[..., Awaitable[None]]]:
    """Authenticate, authorize, map errors, write the returned model; record the OpenAPI spec.

    ``also`` documents other success answers a handler may choose with ``override_status``.
    """

    spec = OperationSpec(summary, response, status, request, query, errors, description, also)

    def decorate(fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[None]]:
        @functools.wraps(fn)
        async def mapped(self: GpuEnvHandler, *args: Any, **kwargs: Any) -> None:
            try:
                await self.services.start()
                if request is not None:
                    kwargs["body"] = self.parse_body(request)
                result = await fn(self, *args, **kwargs)
            except GpuEnvError as e:
                raise _ApiHttpError(e.status, e.message, e.reason) from e
            except ValidationError as e:
                raise _ApiHttpError(
                    400, _validation_message(e), "invalid_request", e.errors(include_url=False)
                ) from e
            if self._finished:
                return
            self.set_status(self._status_override or status)
            if result is None:
                self.finish()
            elif isinstance(result, BaseModel):
                self.finish(result.model_dump_json())
            elif isinstance(result, bytes):  # JSON serialized once by the service and shared (see Sampler)
                self.set_header("Content-Type", "application/json")
                self.finish(result)
            else:
                self.finish(json.dumps(result))

        guarded = web.authenticated(authorized(mapped))
        guarded.__openapi__ = spec  # type: ignore[attr-defined]
        return guarded

    return decorate


class GpuEnvHandler(ExtensionHandlerMixin, APIHandler):
    """Base of the extension's REST handlers."""

    auth_resource = AUTH_RESOURCE
    _status_override: int | None = None

    def override_status(self, code: int) -> None:
        """Answer ``code`` instead of the operation's usual status (documented with ``also=``)."""
        self._status_override = code

    def parse_body(self, model: type[M]) -> M:
        raw = self.request.body or b"{}"
        try:
            data = json.loads(raw)
        except ValueError as e:
            raise _ApiHttpError(400, f"The request body is not valid JSON: {e}", "invalid_json") from e
        try:
            return model.model_validate(data)
        except ValidationError as e:
            raise _ApiHttpError(
                400, _validation_message(e), "invalid_request", e.errors(include_url=False)
            ) from e

    def query_arg(self, name: str, default: str | None = None) -> str | None:
        return self.get_query_argument(name, default)

    def api_url(self, *parts: str) -> str:
        """A base_url-aware URL of an API resource, for Location headers."""
        return "/".join([self.base_url.rstrip("/"), API_PREFIX, *parts])

    @property
    def services(self) -> Any:
        return self.settings["gpu_env_services"]

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        exc = kwargs.get("exc_info", (None, None, None))[1]
        self.set_header("Content-Type", "application/json")
        if isinstance(exc, web.HTTPError):
            body: dict[str, Any] = {
                "message": exc.log_message or self._reason,
                "reason": exc.reason or _STATUS_REASONS.get(status_code, "http_error"),
            }
            details = getattr(exc, "details", None)
            if details:
                body["details"] = json.loads(json.dumps(details, default=str))
        else:
            body = {
                "message": "The server hit an unexpected error; the details are in the server log.",
                "reason": "internal_error",
            }
        self.finish(json.dumps(body))


class NotFoundHandler(GpuEnvHandler):
    """JSON 404 for any path under the API that no handler serves (after authentication)."""

    async def prepare(self) -> None:  # type: ignore[override]
        await super().prepare()
        if not self.current_user:
            raise web.HTTPError(403)
        raise _ApiHttpError(
            404,
            f"No API resource at '{self.request.path}'. The API is described at {API_PREFIX}/openapi.json.",
            "not_found",
        )
