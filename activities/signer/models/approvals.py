"""Tables of the signer's approvals and payment files: rule snapshots, decisions, tokens,
the notification outbox and the CNAB240 per-line breakdown (all deleted with their job)."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Column,
    Date,
    DateTime,
    ForeignKey,
    String,
    UniqueConstraint,
)
from sqlmodel import Field, SQLModel

from shared.db.models import utcnow


def _job_fk(*, primary_key: bool = False) -> Any:
    # CASCADE: deleting a job (or Clear Jobs) removes its approval evidence and breakdown.
    return Field(sa_column=Column(String(36), ForeignKey("jobs.id", ondelete="CASCADE"),
                                  primary_key=primary_key, nullable=False,
                                  index=not primary_key))


def _ts(nullable: bool = True) -> Any:
    if nullable:
        return Field(default=None, sa_column=Column(DateTime(timezone=True), nullable=True))
    return Field(default_factory=utcnow, sa_column=Column(DateTime(timezone=True),
                                                          nullable=False))


class JobApproval(SQLModel, table=True):
    """The rule a held job waits for, its staged copy's hash, and where the wait stands."""

    __tablename__ = "signer_job_approvals"

    job_id: str = _job_fk(primary_key=True)
    profile_name: str = Field(max_length=100)
    # Snapshot of the profile's Approval block when the job was held (masked addresses).
    rule: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    quorum: int
    staged_path: str
    staged_size: int = Field(sa_column=Column(BigInteger, nullable=False))
    staged_sha256: str = Field(max_length=64)
    # Waiting -> Released -> Sealed (signing may happen), or Rejected / Expired / Canceled.
    state: str = Field(max_length=16)
    requested_at: datetime = _ts(nullable=False)
    expires_at: datetime | None = _ts()
    ended_at: datetime | None = _ts()


class ApprovalDecision(SQLModel, table=True):
    """One approver's approve or reject (with a reason) on one job."""

    __tablename__ = "signer_approval_decisions"
    __table_args__ = (UniqueConstraint("job_id", "approver", name="ux_approval_decision_once"),)

    id: int | None = Field(default=None, primary_key=True)
    job_id: str = _job_fk()
    approver: str = Field(max_length=200)
    email_masked: str = Field(max_length=320)
    decision: str = Field(max_length=16)
    reason: str | None = None
    at: datetime = _ts(nullable=False)


class ApproverToken(SQLModel, table=True):
    """An approver's credential for one job, stored only as its SHA-256."""

    __tablename__ = "signer_approver_tokens"

    token_sha256: str = Field(primary_key=True, max_length=64)
    job_id: str = _job_fk()
    approver: str = Field(max_length=200)
    email: str = Field(max_length=320)
    created_at: datetime = _ts(nullable=False)


class NotificationOutbox(SQLModel, table=True):
    """An e-mail to send; the body (it carries a token) is dropped once sent."""

    __tablename__ = "signer_notification_outbox"

    id: int | None = Field(default=None, primary_key=True)
    job_id: str = _job_fk()
    to_address: str = Field(max_length=320)
    subject: str = Field(max_length=300)
    body: str | None = None
    created_at: datetime = _ts(nullable=False)
    sent_at: datetime | None = _ts()
    attempts: int = 0
    last_error: str | None = None


class Cnab240Line(SQLModel, table=True):
    """One record of a CNAB240 payment file, as the job detail shows it."""

    __tablename__ = "signer_cnab240_lines"

    id: int | None = Field(default=None, primary_key=True)
    job_id: str = _job_fk()
    line_no: int
    record_type: str = Field(max_length=1)
    segment: str | None = Field(default=None, max_length=1)
    movement: str | None = Field(default=None, max_length=1)
    payment_date: date | None = Field(default=None, sa_column=Column(Date, nullable=True))
    amount_cents: int | None = Field(default=None, sa_column=Column(BigInteger, nullable=True))
