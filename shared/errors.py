"""Error tables: how a stable code is refused over HTTP and gRPC; the codes common to all."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from enum import Enum, StrEnum


class Refusal(Enum):
    """An HTTP status and the gRPC status (by name) that says the same thing.

    By name, not `grpc.StatusCode`: workflows import this module and must not load grpc.
    """

    INVALID = (422, "INVALID_ARGUMENT")
    UNAUTHENTICATED = (401, "UNAUTHENTICATED")
    FORBIDDEN = (403, "PERMISSION_DENIED")
    NOT_FOUND = (404, "NOT_FOUND")
    # Not in the state the call needs; retrying is pointless until that state changes.
    CONFLICT = (409, "FAILED_PRECONDITION")
    # The version the caller read moved on (a lost compare-and-set): read again, then retry.
    STALE = (409, "ABORTED")
    EXISTS = (409, "ALREADY_EXISTS")
    TOO_LARGE = (413, "RESOURCE_EXHAUSTED")
    INTERNAL = (500, "INTERNAL")
    BAD_GATEWAY = (502, "UNAVAILABLE")
    UNAVAILABLE = (503, "UNAVAILABLE")

    @property
    def http(self) -> int:
        """The HTTP status."""
        return self.value[0]

    @property
    def grpc(self) -> str:
        """The gRPC status name (a `grpc.StatusCode` member)."""
        return self.value[1]


class ErrorTable(Mapping[str, Refusal]):
    """One contract's error table: each code it refuses with, and how."""

    def __init__(self, rows: Mapping[str, Refusal]) -> None:
        self._rows = {str(code): refusal for code, refusal in rows.items()}

    def __getitem__(self, code: str) -> Refusal:
        return self._rows[code]

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def error(self, code: str, message: str) -> EsteiraError:
        """An `EsteiraError` refused as this table says (KeyError for a code not in it)."""
        return EsteiraError(code, message, refusal=self[code])

    def __or__(self, other: ErrorTable) -> ErrorTable:
        """Both tables as one; a code in both is a mistake (ValueError)."""
        shared = set(self) & set(other)
        if shared:
            raise ValueError(f"codes in two error tables: {sorted(shared)}")
        return ErrorTable({**self._rows, **other._rows})


class ErrorCode(StrEnum):
    """Codes operators and integrators see; values never change once published."""

    AUTH_MISSING_KEY = "auth.missing-key"
    AUTH_INVALID_KEY = "auth.invalid-key"
    REQUEST_INVALID = "request.invalid"
    NOT_FOUND = "resource.not-found"
    STORE_UNAVAILABLE = "store.unavailable"
    TEMPORAL_UNAVAILABLE = "temporal.unavailable"
    INTERNAL = "internal.error"


COMMON_ERRORS = ErrorTable({
    ErrorCode.AUTH_MISSING_KEY: Refusal.UNAUTHENTICATED,
    ErrorCode.AUTH_INVALID_KEY: Refusal.UNAUTHENTICATED,
    ErrorCode.REQUEST_INVALID: Refusal.INVALID,
    ErrorCode.NOT_FOUND: Refusal.NOT_FOUND,
    ErrorCode.STORE_UNAVAILABLE: Refusal.UNAVAILABLE,
    ErrorCode.TEMPORAL_UNAVAILABLE: Refusal.UNAVAILABLE,
    ErrorCode.INTERNAL: Refusal.INTERNAL,
})


class EsteiraError(Exception):
    """An error with a stable code and how it is refused (REST and gRPC helpers read it).

    A domain's code comes with its table's refusal (`<DOMAIN>_ERRORS.error(code, message)`);
    without one, the code must be one of `ErrorCode` (KeyError otherwise).
    """

    def __init__(self, code: str, message: str, *, refusal: Refusal | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.refusal = refusal or COMMON_ERRORS[code]

    @property
    def status(self) -> int:
        """The HTTP status of this error."""
        return self.refusal.http

    @property
    def grpc_status(self) -> str:
        """The gRPC status name of this error."""
        return self.refusal.grpc

    def body(self) -> dict[str, str]:
        """The JSON error body: `{"code": …, "message": …}`."""
        return {"code": self.code, "message": self.message}

