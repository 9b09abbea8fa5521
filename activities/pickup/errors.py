"""Pickup errors with their HTTP status."""

from __future__ import annotations

from shared.contracts.pickup import PICKUP_HTTP_STATUS, PickupErrorCode
from shared.errors import ErrorCode, EsteiraError


def pickup_error(code: PickupErrorCode, message: str) -> EsteiraError:
    """An `EsteiraError` carrying a pickup code and its status."""
    return EsteiraError(code, message, status=PICKUP_HTTP_STATUS[code])


def not_found(what: str, ident: object) -> EsteiraError:
    """404 with the foundation's code."""
    return EsteiraError(ErrorCode.NOT_FOUND, f"{what} {ident} was not found.")
