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

# The one table from an error's HTTP status to its gRPC status (by name: workflows import this
# module and must not load grpc). The stable code itself travels in the google.rpc.Status
# details (ErrorInfo.reason), so codes sharing a status stay distinguishable.
GRPC_STATUS: dict[int, str] = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "FAILED_PRECONDITION",
    413: "RESOURCE_EXHAUSTED",
    422: "INVALID_ARGUMENT",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


class EsteiraError(Exception):
    """An error with a stable code, mapped to a status by the service layer."""

    def __init__(self, code: str, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status or HTTP_STATUS.get(code, 400)

    @property
    def grpc_status(self) -> str:
        """The gRPC status name of this error (from `GRPC_STATUS`)."""
        fallback = "INVALID_ARGUMENT" if self.status < 500 else "INTERNAL"
        return GRPC_STATUS.get(self.status, fallback)

    def body(self) -> dict[str, str]:
        """The JSON error body: `{"code": …, "message": …}`."""
        return {"code": self.code, "message": self.message}

