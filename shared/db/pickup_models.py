"""Tables of the pickup domain (migration `pickup_0001`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, DateTime, Index, UniqueConstraint
from sqlmodel import Field, SQLModel

from shared.db.models import utcnow


def _at(**kwargs: Any) -> Any:
    return Field(default_factory=utcnow, sa_column=Column(DateTime(timezone=True), **kwargs))


def _maybe_at(**kwargs: Any) -> Any:
    return Field(default=None, sa_column=Column(DateTime(timezone=True), **kwargs))


class School(SQLModel, table=True):
    """A school, with its own arrival-signal timeout and turnstile controller."""

    __tablename__ = "pickup_schools"

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(max_length=200)
    arrival_timeout_minutes: float
    turnstile_url: str | None = Field(default=None, max_length=500)
    created_at: datetime = _at(nullable=False)


class Student(SQLModel, table=True):
    """A student and today's pickup state, versioned: every transition is a CAS on it."""

    __tablename__ = "pickup_students"
    __table_args__ = (
        Index("ix_pickup_students_school", "school_id", "state"),
        Index("ix_pickup_students_state_since", "state", "state_since"),
    )

    id: int | None = Field(default=None, primary_key=True)
    school_id: int = Field(foreign_key="pickup_schools.id")
    name: str = Field(max_length=200)
    state: str = Field(default="AT_SCHOOL", max_length=16)
    version: int = 0
    state_since: datetime = _at(nullable=False)
    state_reason: str | None = Field(default=None, max_length=200)
    arrival_id: int | None = None


class Guardian(SQLModel, table=True):
    """A guardian who uses the app."""

    __tablename__ = "pickup_guardians"

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(max_length=200)
    contact: str | None = Field(default=None, max_length=200)


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
    """A guardian-app access token (only its SHA-256 is stored)."""

    __tablename__ = "pickup_access_tokens"

    id: int | None = Field(default=None, primary_key=True)
    guardian_id: int = Field(foreign_key="pickup_guardians.id")
    token_hash: str = Field(max_length=64, unique=True)
    expires_at: datetime = _at(nullable=False, index=True)
    created_at: datetime = _at(nullable=False)


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
    """A broadcast (`StudentStateChanged`, `StudentRosterChanged`); its id is the SSE id."""

    __tablename__ = "pickup_events"
    __table_args__ = (
        Index("ix_pickup_events_school", "school_id", "id"),
        Index("ix_pickup_events_guardian", "guardian_id", "id"),
        Index("ix_pickup_events_student", "student_id", "id"),
    )

    id: int | None = Field(default=None, primary_key=True)
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


class QueueSnapshot(SQLModel, table=True):
    """A point of the outbound-queue series (ledger, notifications) every 5 minutes."""

    __tablename__ = "pickup_queue_snapshots"

    id: int | None = Field(default=None, primary_key=True)
    at: datetime = _at(nullable=False, index=True)
    queue: str = Field(max_length=32)
    pending: int
    failed: int
    oldest_pending_seconds: float
