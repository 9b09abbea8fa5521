"""The SISBAJUD executor's error codes and table: each code a door refuses with, its HTTP and
gRPC status; also the codes its activities fail with (`ApplicationError.type`)."""

from __future__ import annotations

from enum import StrEnum

from shared.errors import ErrorCode, ErrorTable, EsteiraError, Refusal


class SisbajudApiErrorCode(StrEnum):
    """Stable codes the operator surface (REST, gRPC, dashboard) answers with."""

    DECISION_NOT_OPEN = "sisbajud.decision-not-open"
    SAME_ACTOR = "sisbajud.same-actor"
    PROPOSAL_MISMATCH = "sisbajud.proposal-mismatch"
    NOT_PARKED = "sisbajud.not-parked"
    NOTICE_UNUSABLE = "sisbajud.notice-unusable"
    ALREADY_ACKNOWLEDGED = "sisbajud.already-acknowledged"
    ACTOR_NOT_CREDENTIAL = "sisbajud.actor-not-credential"
    OPERATOR_INVALID = "sisbajud.operator-invalid"
    # A resolution of held money whose transaction the ledger does not show, or shows moving
    # another amount: the decision stays open.
    TRANSACTION_UNPROVEN = "sisbajud.transaction-unproven"


class WebhookErrorCode(StrEnum):
    """Stable codes the webhook gateway refuses a Hub delivery with."""

    NOTICE_TOO_LARGE = "notice.too-large"
    SIGNATURE_MISSING_HEADER = "signature.missing-header"
    SIGNATURE_NO_MATCH = "signature.no-match"


class SisbajudErrorCode(StrEnum):
    """`ApplicationError.type` values of this domain's activities."""

    MENSAGERIA_UNAVAILABLE = "mensageria.unavailable"
    MIDAZ_UNAVAILABLE = "midaz.unavailable"
    MIDAZ_REFUSED = "midaz.refused"
    # A read answered 403, 404 or another final 4xx: an alarm and a person, never a retry.
    MIDAZ_READ_REFUSED = "midaz.read-refused"
    INSTITUTION_UNCONFIGURED = "institution.unconfigured"
    TEMPORAL_UNAVAILABLE = ErrorCode.TEMPORAL_UNAVAILABLE.value


SISBAJUD_ERRORS = ErrorTable({
    SisbajudApiErrorCode.DECISION_NOT_OPEN: Refusal.CONFLICT,
    SisbajudApiErrorCode.SAME_ACTOR: Refusal.CONFLICT,
    SisbajudApiErrorCode.PROPOSAL_MISMATCH: Refusal.CONFLICT,
    SisbajudApiErrorCode.NOT_PARKED: Refusal.CONFLICT,
    SisbajudApiErrorCode.NOTICE_UNUSABLE: Refusal.CONFLICT,
    SisbajudApiErrorCode.ALREADY_ACKNOWLEDGED: Refusal.CONFLICT,
    SisbajudApiErrorCode.ACTOR_NOT_CREDENTIAL: Refusal.INVALID,
    SisbajudApiErrorCode.OPERATOR_INVALID: Refusal.UNAUTHENTICATED,
    SisbajudApiErrorCode.TRANSACTION_UNPROVEN: Refusal.CONFLICT,
    WebhookErrorCode.NOTICE_TOO_LARGE: Refusal.TOO_LARGE,
    WebhookErrorCode.SIGNATURE_MISSING_HEADER: Refusal.UNAUTHENTICATED,
    WebhookErrorCode.SIGNATURE_NO_MATCH: Refusal.UNAUTHENTICATED,
    # The gateway's answer when the order can't be fetched: the Hub redelivers.
    SisbajudErrorCode.MENSAGERIA_UNAVAILABLE: Refusal.UNAVAILABLE,
})


def sisbajud_error(code: SisbajudApiErrorCode | WebhookErrorCode | SisbajudErrorCode,
                   message: str) -> EsteiraError:
    """An `EsteiraError` refused as the SISBAJUD table says."""
    return SISBAJUD_ERRORS.error(code, message)
