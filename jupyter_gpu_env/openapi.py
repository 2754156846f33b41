"""Build the OpenAPI 3 document from ROUTES and the pydantic models each operation declares."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from . import __version__
from .handlers import ROUTES
from .handlers.base import OperationSpec
from .models import ApiError

_VERBS = ("get", "post", "put", "patch", "delete")
_ERROR_TEXT = {
    400: "The request is invalid; `message` says which field and why.",
    401: "Not authenticated.",
    403: "Not authenticated, not authorized, or the target may not be changed.",
    404: "No such resource.",
    409: "The request conflicts with the current state.",
    503: "A tool or backend this request needs is not available.",
}
_REF = "#/components/schemas/{model}"


def _operations() -> list[tuple[str, str, OperationSpec]]:
    ops = []
    for path, handler in ROUTES:
        for verb in _VERBS:
            fn = handler.__dict__.get(verb)
            spec = getattr(fn, "__openapi__", None)
            if spec is not None:
                ops.append((path, verb, spec))
    return ops


def build_openapi() -> dict[str, Any]:
    ops = _operations()
    models: set[type[BaseModel]] = {ApiError}
    for _, _, spec in ops:
        models.update(m for m in (spec.response, spec.request) if m is not None)
        models.update(m for _, m in spec.also)
    ordered = sorted(models, key=lambda m: m.__name__)
    keys, defs = models_json_schema([(m, "serialization") for m in ordered], ref_template=_REF)
    # Request bodies are validated in "validation" mode; the schemas coincide for these models.
    refs = {m: keys[(m, "serialization")]["$ref"] for m in ordered}

    paths: dict[str, dict[str, Any]] = {}
    for path, verb, spec in ops:
        op: dict[str, Any] = {
            "summary": spec.summary,
            "operationId": f"{verb}_{re.sub(r'[^a-zA-Z0-9]+', '_', path).strip('_')}",
            "tags": [path.split("/")[0].split(".")[0]],
            "responses": {},
        }
        if spec.description:
            op["description"] = spec.description
        params = [
            {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
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
                "required": True,
                "content": {"application/json": {"schema": {"$ref": refs[spec.request]}}},
            }
        ok: dict[str, Any] = {
            "description": {202: "Accepted", 201: "Created", 204: "No content"}.get(spec.status, "OK")
        }
        if spec.response is not None:
            ok["content"] = {spec.response_content_type: {"schema": {"$ref": refs[spec.response]}}}
        elif verb == "get":
            ok["content"] = {"application/json": {"schema": {"type": "object"}}}
        op["responses"][str(spec.status)] = ok
        for code, model in spec.also:
            op["responses"][str(code)] = {
                "description": "OK",
                "content": {"application/json": {"schema": {"$ref": refs[model]}}},
            }
        for code in sorted({403, *spec.errors, *((400,) if spec.request is not None else ())}):
            op["responses"][str(code)] = {
                "description": _ERROR_TEXT.get(code, "Error"),
                "content": {"application/json": {"schema": {"$ref": refs[ApiError]}}},
            }
        paths.setdefault(f"/{path}", {})[verb] = op

    return {
        "openapi": "3.1.0",
        "info": {
            "title": "jupyter-gpu-env",
            "version": __version__,
            "description": "REST API of the jupyter-gpu-env server extension, served under "
            "`{base_url}gpu-env/api/`. Authenticate as for any Jupyter Server API (token or cookie + XSRF).",
        },
        "servers": [{"url": "/gpu-env/api"}],
        "paths": paths,
        "components": {
            "schemas": defs.get("$defs", {}),
            "securitySchemes": {"token": {"type": "apiKey", "in": "header", "name": "Authorization"}},
        },
        "security": [{"token": []}],
    }


def render() -> str:
    """The document as committed in docs/openapi.json (stable key order, trailing newline)."""
    import json

    return json.dumps(build_openapi(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    import sys

    sys.stdout.write(render())
