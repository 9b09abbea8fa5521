"""RFC 9457 problem details: the body every HTTP refusal carries (REST, dashboard, webhook
gateway), its OpenAPI schema, and the one way an HTTP door refuses."""

from __future__ import annotations

from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from shared.errors import EsteiraError

PROBLEM_MEDIA_TYPE = "application/problem+json"
# RFC 9457 §4.2.1: with no type of our own the status says it all; `code` tells codes apart.
BLANK_TYPE = "about:blank"


class Problem(BaseModel):
    """An RFC 9457 problem; `code` (the seeds' stable code) and `message` are extensions."""

    model_config = ConfigDict(extra="allow")

    type: str = Field(BLANK_TYPE, description="RFC 9457 problem type (about:blank).")
    title: str = Field(description="The HTTP status phrase.")
    status: int = Field(description="The HTTP status, as on the response.")
    detail: str = Field(description="What went wrong, for a person.")
    code: str = Field(description="The stable error code (`auth.missing-key`, …).")
    message: str = Field(description="The same text as `detail` (earlier clients read it).")
    errors: list[dict[str, Any]] | None = Field(
        None, description="Where and why, for a request that failed validation.")


class ProblemResponse(JSONResponse):
    """A JSON response sent as `application/problem+json`."""

    media_type = PROBLEM_MEDIA_TYPE


def problem_body(status: int, code: str, message: str, **extra: Any) -> dict[str, Any]:
    """The problem document of a refusal with `status`, `code` and `message` (plus `extra`)."""
    return {"type": BLANK_TYPE, "title": HTTPStatus(status).phrase, "status": status,
            "detail": message, "code": code, "message": message, **extra}


def refusal(error: EsteiraError, *, headers: Mapping[str, str] | None = None,
            **extra: Any) -> ProblemResponse:
    """The problem document of `error` (plus `extra` members) with its HTTP status."""
    body = problem_body(error.status, error.code, error.message, **extra)
    return ProblemResponse(body, status_code=error.status,
                           headers=dict(headers) if headers else None)
