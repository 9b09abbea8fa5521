"""The one way an HTTP door refuses: an RFC 9457 problem carrying the code and its status."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from services.api.problem import ProblemResponse, problem_body
from shared.errors import EsteiraError


def refusal(error: EsteiraError, *, headers: Mapping[str, str] | None = None,
            **extra: Any) -> ProblemResponse:
    """The problem document of `error` (plus `extra` members) with its HTTP status."""
    body = problem_body(error.status, error.code, error.message, **extra)
    return ProblemResponse(body, status_code=error.status,
                           headers=dict(headers) if headers else None)
