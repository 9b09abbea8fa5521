"""Bounds on operator free text (reasons, notes): stored, logged and echoed in events."""

from __future__ import annotations

from shared.errors import ErrorCode, EsteiraError

# The bound SISBAJUD operator actions and approval rejections already use: a paragraph, not a
# file. Unbounded, a 5 MB pause reason made every events page 16 MB.
MAX_REASON_CHARS = 2000


def bounded_reason(reason: str | None, *, field: str = "reason") -> str | None:
    """`reason` as given, or request.invalid (422) when it is longer than the bound."""
    if reason is not None and len(reason) > MAX_REASON_CHARS:
        raise EsteiraError(ErrorCode.REQUEST_INVALID,
                           f"`{field}` is {len(reason)} characters; at most "
                           f"{MAX_REASON_CHARS} are kept.")
    return reason
