"""Stable error codes the SISBAJUD activities raise, and which of them Temporal retries."""

from __future__ import annotations

from enum import StrEnum

from temporalio.exceptions import ApplicationError


class SisbajudErrorCode(StrEnum):
    """`ApplicationError.type` values of this domain."""

    MENSAGERIA_UNAVAILABLE = "mensageria.unavailable"
    MIDAZ_UNAVAILABLE = "midaz.unavailable"
    MIDAZ_REFUSED = "midaz.refused"
    INSTITUTION_UNCONFIGURED = "institution.unconfigured"
    TEMPORAL_UNAVAILABLE = "temporal.unavailable"


RETRYABLE = frozenset({SisbajudErrorCode.MENSAGERIA_UNAVAILABLE,
                       SisbajudErrorCode.MIDAZ_UNAVAILABLE,
                       SisbajudErrorCode.TEMPORAL_UNAVAILABLE})


def fail(code: SisbajudErrorCode, message: str) -> ApplicationError:
    """An `ApplicationError` whose retryability follows the table above."""
    return ApplicationError(message, type=code, non_retryable=code not in RETRYABLE)
