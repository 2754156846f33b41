"""`openapi.json`: the API's own description, generated from the routes and their models."""

from __future__ import annotations

from .base import GpuEnvHandler, operation


class OpenApiHandler(GpuEnvHandler):
    @operation(
        "This API's OpenAPI 3 document", description="Generated from the pydantic models of every route."
    )
    async def get(self) -> dict:
        from ..openapi import build_openapi

        return build_openapi()
