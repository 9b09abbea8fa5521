"""Which of the SISBAJUD activities' error codes Temporal retries (the codes are the
contract's, `activities/sisbajud/contracts/errors.py`)."""

from __future__ import annotations

from temporalio.exceptions import ApplicationError

from activities.sisbajud.contracts.errors import SisbajudErrorCode

RETRYABLE = frozenset({SisbajudErrorCode.MENSAGERIA_UNAVAILABLE,
                       SisbajudErrorCode.MIDAZ_UNAVAILABLE,
                       SisbajudErrorCode.TEMPORAL_UNAVAILABLE})


def fail(code: SisbajudErrorCode, message: str) -> ApplicationError:
    """An `ApplicationError` whose retryability follows the table above."""
    return ApplicationError(message, type=code, non_retryable=code not in RETRYABLE)
