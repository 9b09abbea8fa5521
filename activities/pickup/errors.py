"""Pickup refusals: the contract's table (`activities/pickup/contracts/errors.py`), and 404."""

from __future__ import annotations

from activities.pickup.contracts.errors import pickup_error as pickup_error
from shared.errors import ErrorCode, EsteiraError


def not_found(what: str, ident: object) -> EsteiraError:
    """404 with the foundation's code."""
    return EsteiraError(ErrorCode.NOT_FOUND, f"{what} {ident} was not found.")
