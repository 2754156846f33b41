"""What every handler shares: authentication, authorization, body and query parsing, the one error mapping.

Handlers are thin: decorate each verb with :func:`operation`, parse the body into a pydantic
model, call one service and return its model. The decorator also records what the OpenAPI
document says about the operation (statuses, query parameters and their constraints, the
permissions it needs), so the document cannot drift from the code: the query values a handler
reads are parsed by the very schema the document publishes.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from jupyter_core.utils import ensure_async
from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from jupyter_server.extension.handler import ExtensionHandlerMixin
from pydantic import BaseModel, ValidationError
from tornado import web

from ..errors import GpuEnvError
from ..inputs import parse_json_body, parse_query_value, text_problem
from ..models.common import PAGE_LIMIT_SCHEMA, PAGE_OFFSET_SCHEMA, describe_validation_error
from ..models.tasks import Task
from ..services import Services

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
DEFAULT_MAX_BODY = 1 << 20
VERBS = ("get", "post", "put", "patch", "delete")

M = TypeVar("M", bound=BaseModel)
# (action, resource) as Jupyter's authorizer takes them, e.g. ("execute", "kernels").
Permission = tuple[str, str]


@dataclass(frozen=True)
class Param:
    name: str
    schema: dict[str, Any]
    description: str
    required: bool = False


# The query parameters of every listing that pages (its answer is a models.common.Page).
PAGE = (
    Param("limit", PAGE_LIMIT_SCHEMA, "Page size."),
    Param("offset", PAGE_OFFSET_SCHEMA, "Skip this many."),
)


# An OpenAPI link from a success answer: (name, operationId, the target's parameters).
Link = tuple[str, str, dict[str, str]]


def id_links(parameter: str, *targets: tuple[str, str]) -> tuple[Link, ...]:
    """Links from an answer that is one resource to its own operations: each ``(name, operationId)``
    takes the answer's ``id`` as its path parameter ``parameter``."""
    return tuple((name, target, {parameter: "$response.body#/id"}) for name, target in targets)


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
    permissions: tuple[Permission, ...] = ()
    links: tuple[Link, ...] = ()
    also_text: tuple[str, ...] = ()  # other content types of the success answer (text/csv), as text
    deprecated: str = ""  # what to call instead ("POST dask/clusters/{cluster_id}/cancel"); empty: current
    beyond_schema: str = ""  # what is checked that JSON Schema cannot say (min <= max), in words


class ApiHttpError(web.HTTPError):
    """An HTTPError whose message reaches the JSON body as written.

    tornado doubles every ``%`` of a ``log_message`` given without arguments (it is a format string
    for the log); the message the caller reads is kept apart from it.
    """

    def __init__(self, status: int, message: str, reason: str, details: list[Any] | None = None):
        super().__init__(status, "%s", message, reason=reason)
        self.details = details


def _error_from(e: GpuEnvError | ValidationError) -> ApiHttpError:
    if isinstance(e, GpuEnvError):
        return ApiHttpError(e.status, e.message, e.reason, e.details)
    return ApiHttpError(400, describe_validation_error(e), "invalid_request", e.errors(include_url=False))


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
    permissions: tuple[Permission, ...] = (),
    response_content_type: str = "application/json",
    links: tuple[Link, ...] = (),
    also_text: tuple[str, ...] = (),
    deprecated: str = "",
    beyond_schema: str = "",
) -> Callable[[Callable[..., Awaitable[Any]]], Callable[..., Any]]:
    """Authenticate, authorize, parse, map errors, write the returned model; record the OpenAPI spec.

    ``permissions`` are asked of Jupyter's authorizer besides the verb's own on ``gpu_env``: running
    code needs ``("execute", "kernels")`` as it does everywhere in Jupyter. ``also`` documents other
    success answers a handler may choose with ``override_status`` (one with the operation's own status
    is another model it may answer with). ``links`` are OpenAPI links from the success answer:
    ``(name, operationId, parameters)``. ``also_text``: other content types the answer may take (a
    handler that writes one finishes the request itself). ``deprecated``: the operation that replaces
    this one; it is still served, and marked deprecated in the document. ``beyond_schema``: what the
    operation checks that its schema cannot state (two values compared, what a cron field means), said in
    its description and as ``x-beyond-schema``, so that a request the document calls valid and the server
    refuses is always one named there.
    """

    spec = OperationSpec(
        summary,
        response,
        status,
        request,
        query,
        errors,
        description,
        also,
        response_content_type,
        permissions,
        links,
        also_text,
        deprecated,
        beyond_schema,
    )

    def decorate(fn: Callable[..., Awaitable[Any]]) -> Callable[..., Any]:
        @functools.wraps(fn)
        async def mapped(self: GpuEnvHandler, *args: Any, **kwargs: Any) -> None:
            await self.check_permissions(permissions)
            try:
                self.check_path_args(kwargs)
                self.query = self.parse_query(query)
                await self.services.start()
                if request is not None:
                    kwargs["body"] = self.parse_body(request)
                result = await fn(self, *args, **kwargs)
            except (GpuEnvError, ValidationError) as e:
                raise _error_from(e) from e
            if self._finished:
                return
            self.set_status(self._status_override or status)
            if isinstance(result, Task) and self.get_status() == 202:
                # The caller follows the task (or DELETEs it to cancel) at its base_url-aware URL.
                self.set_header("Location", self.api_url("tasks", result.id))
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


# The task to follow. What it makes exists once it succeeds (it is built aside), not at the 202.
TASK_LINKS = id_links("task_id", ("GetTask", "get_tasks_task_id"))


def starts_task(
    summary: str,
    *,
    errors: tuple[int, ...],
    description: str,
    request: type[BaseModel] | None = None,
    also: tuple[tuple[int, type[BaseModel]], ...] = (),
    permissions: tuple[Permission, ...] = (),
) -> Callable[[Callable[..., Awaitable[Any]]], Callable[..., Any]]:
    """An :func:`operation` that starts a long one: 202 with the Task, its Location, and the link to
    follow it. ``also``: an answer a handler may give at once instead (with ``override_status``)."""
    return operation(
        summary,
        request=request,
        response=Task,
        status=202,
        errors=errors,
        also=also,
        permissions=permissions,
        links=TASK_LINKS,
        description=description,
    )


@web.stream_request_body
class GpuEnvHandler(ExtensionHandlerMixin, APIHandler):
    """Base of the extension's REST handlers.

    Bodies are streamed so that their size is bounded before they are read: a request announcing more
    than ``gpu_env_max_body`` bytes is refused with 413 as soon as its headers arrive (after
    authentication), and one that sends more than it announced is cut off at the limit.
    """

    auth_resource = AUTH_RESOURCE
    _status_override: int | None = None
    query: dict[str, Any]

    def initialize(self, *args: Any, **kwargs: Any) -> None:
        super().initialize(*args, **kwargs)
        self._body = bytearray()
        self.query = {}

    @property
    def max_body(self) -> int:
        return int(self.settings.get("gpu_env_max_body", DEFAULT_MAX_BODY))

    async def prepare(self) -> None:  # type: ignore[override]
        await super().prepare()
        if self._finished:
            return
        # The connection refuses anything beyond the limit; the check below answers politely first.
        self.request.connection.set_max_body_size(self.max_body + 1)  # type: ignore[union-attr]
        length = self.request.headers.get("Content-Length")
        if length is not None and length.isdigit() and int(length) > self.max_body:
            raise self._too_large()

    def data_received(self, chunk: bytes) -> None:
        if len(self._body) + len(chunk) > self.max_body:
            raise self._too_large()
        self._body.extend(chunk)

    def _too_large(self) -> ApiHttpError:
        return ApiHttpError(
            413,
            f"The request body is larger than {self.max_body} bytes, the most this API accepts.",
            "too_large",
        )

    def override_status(self, code: int) -> None:
        """Answer ``code`` instead of the operation's usual status (documented with ``also=``)."""
        self._status_override = code

    async def check_permissions(self, permissions: tuple[Permission, ...]) -> None:
        for action, resource in permissions:
            allowed = await ensure_async(
                self.authorizer.is_authorized(self, self.current_user, action, resource)
            )
            if not allowed:
                raise ApiHttpError(
                    403,
                    f"You are not authorized to {action} on {resource}, which this request needs.",
                    "forbidden",
                )

    def check_path_args(self, kwargs: dict[str, Any]) -> None:
        for name, value in kwargs.items():
            if isinstance(value, str) and (problem := text_problem(value)):
                raise ApiHttpError(400, f"The {name} in the path {problem}.", "invalid_request")

    def parse_query(self, params: tuple[Param, ...]) -> dict[str, Any]:
        """The declared query values, read as sent: tornado's own getters replace control characters
        with blanks and strip, which would let a value the schema refuses through."""
        out: dict[str, Any] = {}
        for p in params:
            sent = self.request.query_arguments.get(p.name)
            if not sent:
                if p.required:
                    raise ApiHttpError(400, f"'{p.name}' is required in the query.", "invalid_request")
                out[p.name] = p.schema.get("default")
                continue
            try:
                raw = sent[-1].decode("utf-8")
            except UnicodeDecodeError:
                raise ApiHttpError(400, f"'{p.name}' is not UTF-8.", "invalid_request") from None
            out[p.name] = parse_query_value(p.name, raw, p.schema)
        return out

    def parse_body(self, model: type[M]) -> M:
        """The body as ``model``, strictly in JSON's own types: ``0`` is no boolean and ``"4"`` no
        number, as the published schema says (lax parsing would accept what the document refuses)."""
        raw = bytes(self._body)
        parse_json_body(raw)  # the rules every body obeys, with their own messages
        return model.model_validate_json(raw or b"{}", strict=True)

    def api_url(self, *parts: str) -> str:
        """A base_url-aware URL of an API resource, for Location headers."""
        return "/".join([self.base_url.rstrip("/"), API_PREFIX, *parts])

    @property
    def services(self) -> Services:
        services: Services = self.settings["gpu_env_services"]
        return services

    def allowed_methods(self) -> list[str]:
        cls = type(self)
        return [v.upper() for v in VERBS if getattr(cls, v) is not getattr(web.RequestHandler, v)]

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        exc = kwargs.get("exc_info", (None, None, None))[1]
        self.set_header("Content-Type", "application/json")
        if status_code == 405:
            self.set_header("Allow", ", ".join(self.allowed_methods()))
        if isinstance(exc, web.HTTPError):
            # log_message is a format string: formatting it also undoes tornado's doubled '%'.
            message = exc.log_message % exc.args if exc.log_message else self._reason
            if status_code == 405:
                message = (
                    f"{self.request.method} is not allowed here; this resource answers "
                    f"{', '.join(self.allowed_methods()) or 'nothing'}."
                )
            body: dict[str, Any] = {
                "message": message,
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
        raise ApiHttpError(
            404,
            f"No API resource at '{self.request.path}'. The API is described at {API_PREFIX}/openapi.json.",
            "not_found",
        )
