"""Tables of the pickup domain (migration `pickup_0001`)."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Column, DateTime, Index, UniqueConstraint
from sqlmodel import Field, SQLModel

from activities.pickup.contracts.schools import DEFAULT_DAY_START, DEFAULT_DAY_TIME_ZONE
from shared.db.models import utcnow


def _at(**kwargs: Any) -> Any:
    return Field(default_factory=utcnow, sa_column=Column(DateTime(timezone=True), **kwargs))


def _maybe_at(**kwargs: Any) -> Any:
    return Field(default=None, sa_column=Column(DateTime(timezone=True), **kwargs))


class School(SQLModel, table=True):
    """A school, with its own arrival-signal timeout and turnstile controller."""

    __tablename__ = "pickup_schools"
    __table_args__ = (
        Index("ux_pickup_schools_monitor_token", "monitor_token_hash", unique=True),
    )

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(max_length=200)
    arrival_timeout_minutes: float
    turnstile_url: str | None = Field(default=None, max_length=500)
    created_at: datetime = _at(nullable=False)
    # The school day (pickup_0002): it starts at `day_start` ("HH:MM") in `time_zone`;
    # `closed_day` is the last day an operator closed by hand.
    time_zone: str = Field(default=DEFAULT_DAY_TIME_ZONE, max_length=64)
    day_start: str = Field(default=DEFAULT_DAY_START, max_length=5)
    closed_day: date | None = None
    # SHA-256 of the school's own Monitor token (pickup_0003); the raw token is shown once.
    monitor_token_hash: str | None = Field(default=None, max_length=64)


class Student(SQLModel, table=True):
    """A student and today's pickup state, versioned: every transition is a CAS on it."""

    __tablename__ = "pickup_students"
    __table_args__ = (
        Index("ix_pickup_students_school", "school_id", "state"),
        Index("ix_pickup_students_state_since", "state", "state_since"),
        Index("ix_pickup_students_school_since", "school_id", "state_since"),
        Index("uq_pickup_students_registration", "school_id", "registration", unique=True),
    )

    id: int | None = Field(default=None, primary_key=True)
    school_id: int = Field(foreign_key="pickup_schools.id")
    name: str = Field(max_length=200)
    state: str = Field(default="AT_SCHOOL", max_length=16)
    version: int = 0
    state_since: datetime = _at(nullable=False)
    state_reason: str | None = Field(default=None, max_length=200)
    arrival_id: int | None = None
    # The school's own student number (the roster's key); `revision` guards record edits.
    registration: str | None = Field(default=None, max_length=64)
    revision: int = Field(default=0, sa_column_kwargs={"server_default": "0"})


class Guardian(SQLModel, table=True):
    """A guardian who uses the app."""

    __tablename__ = "pickup_guardians"
    __table_args__ = (
        Index("uq_pickup_guardians_cpf", "cpf", unique=True),
        Index("ix_pickup_guardians_school", "school_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(max_length=200)
    contact: str | None = Field(default=None, max_length=200)
    # The roster's key (11 digits); the school that registered the guardian, if any.
    cpf: str | None = Field(default=None, max_length=11)
    school_id: int | None = None
    revision: int = Field(default=0, sa_column_kwargs={"server_default": "0"})


class GuardianLink(SQLModel, table=True):
    """Student–guardian link: permanent (titular, no dates) or temporary (valid_until)."""

    __tablename__ = "pickup_guardian_links"
    __table_args__ = (
        UniqueConstraint("student_id", "guardian_id", name="uq_pickup_links_pair"),
        Index("ix_pickup_links_kind_until", "kind", "valid_until"),
        Index("ix_pickup_links_guardian", "guardian_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    student_id: int = Field(foreign_key="pickup_students.id")
    guardian_id: int = Field(foreign_key="pickup_guardians.id")
    kind: str = Field(max_length=16)
    valid_from: datetime | None = _maybe_at()
    valid_until: datetime | None = _maybe_at()
    created_at: datetime = _at(nullable=False)
    revision: int = Field(default=0, sa_column_kwargs={"server_default": "0"})


class AuthorizedPerson(SQLModel, table=True):
    """Someone authorized to pick a student up; approval grants a badge on the turnstile."""

    __tablename__ = "pickup_authorized_persons"
    __table_args__ = (
        Index("ix_pickup_authorized_expiry", "kind", "status", "valid_until"),
        Index("ix_pickup_authorized_student", "student_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    student_id: int = Field(foreign_key="pickup_students.id")
    name: str = Field(max_length=200)
    document: str | None = Field(default=None, max_length=64)
    kind: str = Field(max_length=16)
    status: str = Field(default="pending", max_length=32)
    sync_status: str = Field(default="none", max_length=16)
    valid_from: datetime | None = _maybe_at()
    valid_until: datetime | None = _maybe_at()
    version: int = 0
    created_at: datetime = _at(nullable=False)
    updated_at: datetime = _at(nullable=False)


class EarlyRelease(SQLModel, table=True):
    """A dated, single-use permission to leave early."""

    __tablename__ = "pickup_early_releases"
    __table_args__ = (Index("ix_pickup_early_expiry", "status", "valid_until"),)

    id: int | None = Field(default=None, primary_key=True)
    student_id: int = Field(foreign_key="pickup_students.id")
    reason: str | None = Field(default=None, max_length=500)
    status: str = Field(default="pending", max_length=32)
    valid_until: datetime = _at(nullable=False)
    used_at: datetime | None = _maybe_at()
    version: int = 0
    created_at: datetime = _at(nullable=False)


class AccessToken(SQLModel, table=True):
    """A guardian's access token (only its SHA-256 is stored): the app's bearer token, or
    the guardian page's session cookie (`kind`, migration pickup_0007)."""

    __tablename__ = "pickup_access_tokens"

    id: int | None = Field(default=None, primary_key=True)
    guardian_id: int = Field(foreign_key="pickup_guardians.id")
    token_hash: str = Field(max_length=64, unique=True)
    expires_at: datetime = _at(nullable=False, index=True)
    created_at: datetime = _at(nullable=False)
    kind: str = Field(default="app", max_length=16, sa_column_kwargs={"server_default": "app"})


class SignInLink(SQLModel, table=True):
    """A one-time link to the guardian page (only its SHA-256 is stored), used at most once."""

    __tablename__ = "pickup_sign_in_links"

    id: int | None = Field(default=None, primary_key=True)
    guardian_id: int = Field(foreign_key="pickup_guardians.id", index=True)
    token_hash: str = Field(max_length=64, unique=True)
    created_at: datetime = _at(nullable=False)
    expires_at: datetime = _at(nullable=False, index=True)
    used_at: datetime | None = _maybe_at()


class SignInRequest(SQLModel, table=True):
    """One request for a sign-in link, counted per key (an identity's hash, an address)
    whether or not a guardian matched, so the limit itself reveals nothing."""

    __tablename__ = "pickup_sign_in_requests"
    __table_args__ = (Index("ix_pickup_sign_in_requests_key", "key", "at"),)

    id: int | None = Field(default=None, primary_key=True)
    key: str = Field(max_length=80)
    at: datetime = _at(nullable=False)


class Arrival(SQLModel, table=True):
    """An "I'm arriving" signal for one student, open until `expires_at`."""

    __tablename__ = "pickup_arrivals"
    __table_args__ = (Index("ix_pickup_arrivals_open", "status", "expires_at"),)

    id: int | None = Field(default=None, primary_key=True)
    school_id: int = Field(foreign_key="pickup_schools.id")
    student_id: int = Field(foreign_key="pickup_students.id")
    guardian_id: int | None = Field(default=None, foreign_key="pickup_guardians.id")
    status: str = Field(default="open", max_length=16)
    created_at: datetime = _at(nullable=False)
    expires_at: datetime = _at(nullable=False)
    closed_at: datetime | None = _maybe_at()


class AuditEntry(SQLModel, table=True):
    """One transition or decision, with who or what made it."""

    __tablename__ = "pickup_audit"
    __table_args__ = (Index("ix_pickup_audit_entity", "entity", "entity_id"),)

    id: int | None = Field(default=None, primary_key=True)
    at: datetime = _at(nullable=False)
    school_id: int | None = None
    entity: str = Field(max_length=32)
    entity_id: int
    action: str = Field(max_length=64)
    from_state: str | None = Field(default=None, max_length=32)
    to_state: str | None = Field(default=None, max_length=32)
    reason: str | None = Field(default=None, max_length=200)
    actor: str = Field(max_length=200)
    details: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))


class BoardEvent(SQLModel, table=True):
    """A broadcast (`StudentStateChanged`, `StudentRosterChanged`); its `seq` is the SSE id."""

    __tablename__ = "pickup_events"
    __table_args__ = (
        Index("ix_pickup_events_school", "school_id", "seq"),
        Index("ix_pickup_events_guardian", "guardian_id", "seq"),
        Index("ix_pickup_events_student", "student_id", "seq"),
        Index("ix_pickup_events_seq", "seq", unique=True),
    )

    id: int | None = Field(default=None, primary_key=True)
    # Commit order, set by the store at COMMIT (migration pickup_0005); NULL only inside the
    # writing transaction. Never written by the application.
    seq: int | None = Field(default=None, sa_column=Column(BigInteger, nullable=True))
    at: datetime = _at(nullable=False)
    type: str = Field(max_length=64)
    school_id: int
    student_id: int
    guardian_id: int | None = None
    reason: str | None = Field(default=None, max_length=200)
    payload: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))


class LedgerEntry(SQLModel, table=True):
    """An outbound grant/revoke for a turnstile controller; pending until it confirms."""

    __tablename__ = "pickup_ledger"
    __table_args__ = (
        Index("ix_pickup_ledger_pending", "status", "controller", "id"),
        Index("ix_pickup_ledger_subject", "subject_kind", "subject_id"),
        Index("ix_pickup_ledger_device_user", "controller", "device_user_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    controller: int
    command: str = Field(max_length=16)
    subject_kind: str = Field(max_length=32)
    subject_id: int
    registration: str = Field(max_length=64)
    name: str = Field(default="", max_length=200)
    begin_time: int = 0
    end_time: int = 0
    status: str = Field(default="pending", max_length=16)
    attempts: int = 0
    last_error: str | None = Field(default=None, max_length=500)
    device_user_id: int | None = None
    card_value: int | None = Field(default=None, sa_column=Column(BigInteger, nullable=True))
    qr_value: str | None = Field(default=None, max_length=200)
    idempotency_key: str = Field(max_length=200, unique=True)
    created_at: datetime = _at(nullable=False)
    last_attempt_at: datetime | None = _maybe_at()
    confirmed_at: datetime | None = _maybe_at()


class Notification(SQLModel, table=True):
    """A guardian notification in the outbox; sent once per idempotency key."""

    __tablename__ = "pickup_notifications"
    __table_args__ = (Index("ix_pickup_notifications_status", "status", "id"),)

    id: int | None = Field(default=None, primary_key=True)
    guardian_id: int
    student_id: int
    kind: str = Field(max_length=64)
    message: str = Field(max_length=500)
    idempotency_key: str = Field(max_length=200, unique=True)
    status: str = Field(default="pending", max_length=16)
    attempts: int = 0
    last_error: str | None = Field(default=None, max_length=500)
    created_at: datetime = _at(nullable=False)
    sent_at: datetime | None = _maybe_at()
    # Each notification backs off on its own (migration pickup_0004): not tried before this.
    next_attempt_at: datetime | None = _maybe_at()
    last_attempt_at: datetime | None = _maybe_at()


class QueueSnapshot(SQLModel, table=True):
    """A point of the outbound-queue series (ledger, notifications) every 5 minutes."""

    __tablename__ = "pickup_queue_snapshots"

    id: int | None = Field(default=None, primary_key=True)
    at: datetime = _at(nullable=False, index=True)
    queue: str = Field(max_length=32)
    pending: int
    failed: int
    oldest_pending_seconds: float


class Credential(SQLModel, table=True):
    """A student's, guardian's or authorized person's card number and/or QR value at a school."""

    __tablename__ = "pickup_credentials"
    __table_args__ = (
        Index("ux_pickup_credentials_card", "school_id", "card_value", unique=True),
        Index("ux_pickup_credentials_qr", "school_id", "qr_value", unique=True),
        Index("ux_pickup_credentials_holder", "school_id", "holder_kind", "holder_id",
              unique=True),
    )

    id: int | None = Field(default=None, primary_key=True)
    school_id: int = Field(foreign_key="pickup_schools.id")
    holder_kind: str = Field(max_length=32)
    holder_id: int
    card_value: int | None = Field(default=None, sa_column=Column(BigInteger, nullable=True))
    qr_value: str | None = Field(default=None, max_length=200)
    created_at: datetime = _at(nullable=False)
    updated_at: datetime = _at(nullable=False)
