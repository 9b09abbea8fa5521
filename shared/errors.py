"""Stable error codes shared by every domain, and their HTTP status."""

from __future__ import annotations

from enum import StrEnum


class ErrorCode(StrEnum):
    """Codes operators and integrators see; values never change once published."""

    AUTH_MISSING_KEY = "auth.missing-key"
    AUTH_INVALID_KEY = "auth.invalid-key"
    REQUEST_INVALID = "request.invalid"
    NOT_FOUND = "resource.not-found"
    STORE_UNAVAILABLE = "store.unavailable"
    TEMPORAL_UNAVAILABLE = "temporal.unavailable"
    INTERNAL = "internal.error"


HTTP_STATUS: dict[str, int] = {
    ErrorCode.AUTH_MISSING_KEY: 401,
    ErrorCode.AUTH_INVALID_KEY: 401,
    ErrorCode.REQUEST_INVALID: 422,
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.STORE_UNAVAILABLE: 503,
    ErrorCode.TEMPORAL_UNAVAILABLE: 503,
    ErrorCode.INTERNAL: 500,
}


class EsteiraError(Exception):
    """An error with a stable code, mapped to a status by the service layer."""

    def __init__(self, code: str, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status or HTTP_STATUS.get(code, 400)

    def body(self) -> dict[str, str]:
        """The JSON error body: `{"code": …, "message": …}`."""
        return {"code": self.code, "message": self.message}

