"""The one way an HTTP door refuses: `{"code", "message"}` with the status of the code's table."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi.responses import JSONResponse

from shared.errors import EsteiraError


def refusal(error: EsteiraError, *, headers: Mapping[str, str] | None = None,
            **extra: Any) -> JSONResponse:
    """The JSON error body of `error` (plus `extra` fields) with its HTTP status."""
    return JSONResponse({**error.body(), **extra}, status_code=error.status,
                        headers=dict(headers) if headers else None)
