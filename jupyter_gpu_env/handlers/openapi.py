"""`openapi.json`: the OpenAPI 3 document, built from ROUTES and what each operation declares.

Everything the server enforces is stated: request bodies and query values by the schemas they are
parsed with, every status an operation answers (the 403 of authentication and authorization, 405 for
a method a resource does not serve, 413 for a body beyond the limit), content types, the permissions
Jupyter's authorizer is asked for (``x-jupyter-permissions``), and links from a created resource to
the operations on it.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from .. import __version__
from ..models import ApiError
from ..models.common import ApiJsonSchema
from ..models.envs import CloneResult, CreateResult, PackagesResult, PublishResult, UndoResult
from ..models.envs.packages import PackagesPlan
from .base import AUTH_RESOURCE, VERBS, GpuEnvHandler, OperationSpec, operation

_ERROR_TEXT = {
    400: "The request is invalid: `message` says which field and why.",
    403: "Not authenticated (no or a wrong token, or no XSRF token with a cookie), not authorized, or the "
    "target may not be changed.",
    404: "No such resource, or something the request names does not exist.",
    405: "This resource does not serve that method; the `Allow` header lists those it does.",
    409: "The request conflicts with the current state: `reason` says how.",
    413: "The request body, or a part of it, is larger than this server accepts.",
    502: "A tool the operation runs failed.",
    503: "A tool or backend this request needs is not available.",
    507: "The disk filled up; nothing was kept.",
}
_ACTIONS = {"get": "read", "post": "write", "put": "write", "patch": "write", "delete": "write"}
_REF = "#/components/schemas/{model}"
# Path parameters: one segment of a URL, one line of text.
_SEGMENT = {"type": "string", "minLength": 1, "maxLength": 255, "pattern": r"^[^\x00-\x1f\x7f/]+$"}


def _accepts_empty(model: type[BaseModel]) -> bool:
    try:
        model.model_validate({})
    except ValueError:
        return False
    return True


def operation_id(verb: str, path: str) -> str:
    return f"{verb}_{re.sub(r'[^a-zA-Z0-9]+', '_', path).strip('_')}"


def _operations() -> list[tuple[str, str, OperationSpec]]:
    from . import ALIASES, ROUTES  # this module is one of them

    handlers = dict(ROUTES)
    ops = []
    for path, handler, current in [(p, h, "") for p, h in ROUTES] + [(a, handlers[n], n) for a, n in ALIASES]:
        for verb in VERBS:
            fn = handler.__dict__.get(verb)
            spec = getattr(fn, "__openapi__", None)
            if spec is not None:
                # An older path of an operation: the same operation, pointing at its current path.
                ops.append(
                    (path, verb, replace(spec, deprecated=f"{verb.upper()} {current}") if current else spec)
                )
    return ops


def _error(code: int, refs: dict[type[BaseModel], str]) -> dict[str, Any]:
    return {
        "description": _ERROR_TEXT.get(code, "Error"),
        "content": {"application/json": {"schema": {"$ref": refs[ApiError]}}},
    }


def _operation(path: str, verb: str, spec: OperationSpec, refs: dict[type[BaseModel], str]) -> dict[str, Any]:
    op: dict[str, Any] = {
        "summary": spec.summary,
        "operationId": operation_id(verb, path),
        "tags": [path.split("/")[0].split(".")[0]],
        "responses": {},
        "x-jupyter-permissions": [
            {"action": _ACTIONS[verb], "resource": AUTH_RESOURCE},
            *({"action": a, "resource": r} for a, r in spec.permissions),
        ],
    }
    if spec.description:
        op["description"] = spec.description
    if spec.beyond_schema:
        op["x-beyond-schema"] = spec.beyond_schema
        op["description"] = (
            f"{op.get('description', '')} Beyond what its schema says: {spec.beyond_schema}".strip()
        )
    if spec.deprecated:
        op["deprecated"] = True
        op["description"] = (
            f"Deprecated (still served): use `{spec.deprecated}`. {op.get('description', '')}".strip()
        )
    params: list[dict[str, Any]] = [
        {"name": name, "in": "path", "required": True, "schema": dict(_SEGMENT)}
        for name in re.findall(r"\{(\w+)\}", path)
    ]
    params += [
        {
            "name": p.name,
            "in": "query",
            "required": p.required,
            "schema": p.schema,
            "description": p.description,
        }
        for p in spec.query
    ]
    if params:
        op["parameters"] = params
    if spec.request is not None:
        op["requestBody"] = {
            # A request whose defaults alone are valid may be sent as no body at all.
            "required": not _accepts_empty(spec.request),
            "content": {"application/json": {"schema": {"$ref": refs[spec.request]}}},
        }
    ok: dict[str, Any] = {
        "description": {202: "Accepted", 201: "Created", 204: "No content"}.get(spec.status, "OK")
    }
    if spec.response is not None:
        same = [{"$ref": refs[m]} for code, m in spec.also if code == spec.status]
        schema = {"anyOf": [{"$ref": refs[spec.response]}, *same]} if same else {"$ref": refs[spec.response]}
        ok["content"] = {spec.response_content_type: {"schema": schema}}
        for text in spec.also_text:
            ok["content"][text] = {"schema": {"type": "string"}}
    elif spec.response_content_type != "application/json":
        ok["content"] = {spec.response_content_type: {"schema": {"type": "string", "format": "binary"}}}
    elif verb == "get":
        ok["content"] = {"application/json": {"schema": {"type": "object"}}}
    if spec.status in (201, 202):
        ok["headers"] = {
            "Location": {
                "description": "The created resource, or the task to follow.",
                "schema": {"type": "string"},
            }
        }
    if spec.links:
        ok["links"] = {
            name: {"operationId": target, "parameters": parameters} for name, target, parameters in spec.links
        }
    op["responses"][str(spec.status)] = ok
    for code, model in spec.also:
        if code == spec.status:
            continue
        op["responses"][str(code)] = {
            "description": "OK",
            "content": {"application/json": {"schema": {"$ref": refs[model]}}},
        }
    codes = {403, *spec.errors}
    if spec.request is not None or spec.query or "{" in path:
        codes.add(400)
    if spec.request is not None:
        codes.add(413)
    for code in sorted(codes):
        op["responses"][str(code)] = _error(code, refs)
    return op


def build_openapi() -> dict[str, Any]:
    ops = _operations()
    # Task results are not a response of their own (a task's `result` is any of them); listed so
    # that clients get their types from this document too.
    models: set[type[BaseModel]] = {
        ApiError,
        CloneResult,
        CreateResult,
        PackagesResult,
        PackagesPlan,
        PublishResult,
        UndoResult,
    }
    for _, _, spec in ops:
        models.update(m for m in (spec.response, spec.request) if m is not None)
        models.update(m for _, m in spec.also)
    ordered = sorted(models, key=lambda m: m.__name__)
    keys, defs = models_json_schema(
        [(m, "serialization") for m in ordered], ref_template=_REF, schema_generator=ApiJsonSchema
    )
    # Request bodies are validated in "validation" mode; the schemas coincide for these models.
    refs = {m: keys[(m, "serialization")]["$ref"] for m in ordered}

    paths: dict[str, dict[str, Any]] = {}
    for path, verb, spec in ops:
        paths.setdefault(f"/{path}", {})[verb] = _operation(path, verb, spec, refs)

    return {
        "openapi": "3.1.0",
        "info": {
            "title": "jupyter-gpu-env",
            "version": __version__,
            "description": "REST API of the jupyter-gpu-env server extension, served under "
            "`{base_url}gpu-env/api/`. Authenticate as for any Jupyter Server API (token or cookie + XSRF). "
            "Every answer is JSON (the image download excepted): errors are `{message, reason}`, with 4xx "
            "for anything the caller can change and 403 for a missing or wrong token. A request that this "
            "document calls valid is accepted: what it names may not exist (404) or may conflict with the "
            "current state (409), but it is never refused as malformed.",
        },
        "servers": [{"url": "/gpu-env/api"}],
        "paths": paths,
        "components": {
            "schemas": defs.get("$defs", {}),
            "securitySchemes": {"token": {"type": "apiKey", "in": "header", "name": "Authorization"}},
        },
        "security": [{"token": []}],
    }


class OpenApiHandler(GpuEnvHandler):
    @operation(
        "This API's OpenAPI 3 document", description="Generated from the pydantic models of every route."
    )
    async def get(self) -> dict[str, Any]:
        return build_openapi()


def render() -> str:
    """The document as committed in docs/openapi.json (stable key order, trailing newline)."""
    import json

    return json.dumps(build_openapi(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    import sys

    sys.stdout.write(render())
