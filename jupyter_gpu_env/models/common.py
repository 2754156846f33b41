from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ApiModel(BaseModel):
    """Base of every API model: unknown fields in a request are an error, not silently dropped."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class ApiError(ApiModel):
    """The body of every error response."""

    message: str = Field(description="What went wrong, in words a user can act on.")
    reason: str = Field(description="A short machine-readable code, e.g. `not_found`, `invalid_request`.")
    details: list[dict] | None = Field(
        default=None, description="Per-field validation problems, when the request body was invalid."
    )
