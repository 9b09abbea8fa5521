"""The pickup board's error table: each code a door refuses with, its HTTP and gRPC status."""

from __future__ import annotations

from activities.pickup.contracts.board import PickupErrorCode
from shared.errors import ErrorTable, EsteiraError, Refusal

PICKUP_ERRORS = ErrorTable({
    PickupErrorCode.VERSION_CONFLICT: Refusal.STALE,
    PickupErrorCode.INVALID_TRANSITION: Refusal.CONFLICT,
    PickupErrorCode.ACCESS_DENIED: Refusal.FORBIDDEN,
    PickupErrorCode.TOKEN_MISSING: Refusal.UNAUTHENTICATED,
    PickupErrorCode.TOKEN_INVALID: Refusal.UNAUTHENTICATED,
    PickupErrorCode.MONITOR_UNAUTHORIZED: Refusal.UNAUTHENTICATED,
    PickupErrorCode.INVALID_VALIDITY: Refusal.INVALID,
    PickupErrorCode.STATUS_CONFLICT: Refusal.CONFLICT,
    PickupErrorCode.LEDGER_NOT_FAILED: Refusal.CONFLICT,
    PickupErrorCode.TURNSTILE_UNAVAILABLE: Refusal.UNAVAILABLE,
    PickupErrorCode.TURNSTILE_REJECTED: Refusal.BAD_GATEWAY,
    PickupErrorCode.NOTIFICATION_FAILED: Refusal.BAD_GATEWAY,
    # A card number or QR value already held by someone else at the same school.
    PickupErrorCode.CREDENTIAL_TAKEN: Refusal.EXISTS,
    # A valid monitor token of one school pushing to another school's path.
    PickupErrorCode.MONITOR_WRONG_SCHOOL: Refusal.FORBIDDEN,
    # A record others still depend on (a live credential, links, an unconfirmed revocation).
    PickupErrorCode.IN_USE: Refusal.CONFLICT,
    # A roster file with any refused line writes nothing; the body carries the line report.
    PickupErrorCode.ROSTER_REFUSED: Refusal.INVALID,
    # A school-scoped API key on an operation that spans schools (another school's records
    # answer 404 instead, so their existence does not leak).
    PickupErrorCode.SCHOOL_SCOPE: Refusal.FORBIDDEN,
    PickupErrorCode.NOTIFICATION_NOT_FAILED: Refusal.CONFLICT,
    # A guardian sign-in link unknown, used already or expired: the same answer for each.
    PickupErrorCode.SIGN_IN_LINK_INVALID: Refusal.UNAUTHENTICATED,
})


def pickup_error(code: PickupErrorCode, message: str) -> EsteiraError:
    """An `EsteiraError` refused as the pickup table says."""
    return PICKUP_ERRORS.error(code, message)
