"""Contract of the signer's approval step and payment-file checks: codes, states, payloads."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict


class ApprovalErrorCode(StrEnum):
    """Stable codes of approvals and CNAB240 checks."""

    CONTENT_CHANGED = "approval.content-changed"
    REJECTED = "approval.rejected"
    INVALID_TOKEN = "approval.invalid-token"
    FORBIDDEN = "approval.forbidden"
    ALREADY_DECIDED = "approval.already-decided"
    NOT_AWAITING = "approval.not-awaiting"
    NO_PREVIEW = "approval.no-preview"
    NOTIFY_FAILED = "approval.notify-failed"
    CNAB240_PAYMENT_DATE_PASSED = "cnab240.payment-date-passed"
    CNAB240_MALFORMED = "cnab240.malformed"


class ApprovalState(StrEnum):
    """Where a held job's approval stands."""

    WAITING = "Waiting"
    RELEASED = "Released"
    # Released and about to be signed: a rejection is now too late.
    SEALED = "Sealed"
    REJECTED = "Rejected"
    EXPIRED = "Expired"
    CANCELED = "Canceled"


class Decision(StrEnum):
    """What an approver said."""

    APPROVED = "Approved"
    REJECTED = "Rejected"


class ApprovalJobInput(BaseModel):
    """One approval step (tally, release, reject, expire, cleanup, notify) of one job."""

    model_config = ConfigDict(frozen=True)

    job_id: str


class ApprovalTally(BaseModel):
    """The decisions so far, and the window the wait runs in."""

    model_config = ConfigDict(frozen=True)

    job_status: str | None
    state: ApprovalState | None
    approvals: int = 0
    rejected: bool = False
    quorum: int = 1
    expires_at: datetime | None = None


class ApprovalStepResult(BaseModel):
    """Whether a conditional approval step won, and the job's status afterwards."""

    model_config = ConfigDict(frozen=True)

    applied: bool
    job_status: str | None = None
    message: str | None = None
