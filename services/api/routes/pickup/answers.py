"""The pickup API's answers: camelCase on the wire, built from the face's domain values."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, TypeVar

from activities.pickup.contracts.board import (
    AuthorizationStatus,
    Kind,
    LedgerCommand,
    LedgerStatus,
    NotificationKind,
    NotificationStatus,
    PickupState,
    SubjectKind,
    SyncStatus,
    TokenKind,
)
from shared.db.models import as_utc
from shared.paging import Page
from shared.wire import PageOut, WireModel

W = TypeVar("W", bound=WireModel)


def paged(model: type[W], page: Page[Any]) -> PageOut[W]:
    """A page of the face's values as `model`s."""
    return PageOut[model](items=[model.model_validate(item) for item in page.items],  # type: ignore[valid-type]
                          next_cursor=page.next_cursor)


class School(WireModel):
    """A school: its arrival-signal timeout, its controller, its day (zone, start)."""

    id: int
    name: str
    arrival_timeout_minutes: float
    turnstile_url: str | None
    created_at: datetime
    time_zone: str
    day_start: str
    # The last day an operator closed by hand.
    closed_day: date | None


class Student(WireModel):
    """A student and today's pickup state; every transition is conditional on `version`."""

    id: int
    school_id: int
    name: str
    state: PickupState
    version: int
    state_since: datetime
    state_reason: str | None
    arrival_id: int | None
    registration: str | None
    # Record edits (name, registration) are conditional on it; `version` is the board's.
    revision: int


class Guardian(WireModel):
    """A guardian who uses the app."""

    id: int
    name: str
    contact: str | None
    cpf: str | None
    school_id: int | None
    revision: int


class GuardianLink(WireModel):
    """A student–guardian link: permanent (no dates) or temporary (until `validUntil`)."""

    id: int
    student_id: int
    guardian_id: int
    kind: Kind
    valid_from: datetime | None
    valid_until: datetime | None
    created_at: datetime
    revision: int


class AuthorizedPerson(WireModel):
    """Someone authorized to pick a student up; approval grants a badge on the turnstile."""

    id: int
    student_id: int
    name: str
    document: str | None
    kind: Kind
    status: AuthorizationStatus
    sync_status: SyncStatus
    valid_from: datetime | None
    valid_until: datetime | None
    version: int
    created_at: datetime
    updated_at: datetime


class EarlyRelease(WireModel):
    """A dated, single-use permission to leave early."""

    id: int
    student_id: int
    reason: str | None
    status: AuthorizationStatus
    valid_until: datetime
    used_at: datetime | None
    version: int
    created_at: datetime


class Credential(WireModel):
    """A holder's card value and/or QR value at a school."""

    id: int
    school_id: int
    holder_kind: SubjectKind
    holder_id: int
    card_value: int | None
    qr_value: str | None
    created_at: datetime
    updated_at: datetime


class AccessToken(WireModel):
    """A guardian's token as listed: its id, kind (`app`, or `web` for a guardian page
    session) and dates, never its value."""

    id: int
    guardian_id: int
    kind: TokenKind
    created_at: datetime
    expires_at: datetime


class IssuedToken(WireModel):
    """A guardian-app access token, shown this once."""

    token: str
    id: int
    guardian_id: int
    expires_at: datetime


class LedgerEntry(WireModel):
    """An outbound grant or revoke for a controller; pending until it confirms."""

    id: int
    controller: int
    command: LedgerCommand
    subject_kind: SubjectKind
    subject_id: int
    registration: str
    name: str
    begin_time: int
    end_time: int
    status: LedgerStatus
    attempts: int
    last_error: str | None
    device_user_id: int | None
    card_value: int | None
    qr_value: str | None
    idempotency_key: str
    created_at: datetime
    last_attempt_at: datetime | None
    confirmed_at: datetime | None


class QueuedLedgerEntry(LedgerEntry):
    """A ledger entry as listed, with how long it has waited since it was written."""

    age_seconds: float

    @classmethod
    def at(cls, entry: Any, read_at: datetime) -> QueuedLedgerEntry:
        """`entry` as read at `read_at`."""
        age = (read_at - as_utc(entry.created_at)).total_seconds()
        return cls.model_validate({**LedgerEntry.model_validate(entry).model_dump(),
                                   "age_seconds": age})


class Notification(WireModel):
    """A guardian notification in the outbox; sent once per idempotency key."""

    id: int
    guardian_id: int
    student_id: int
    kind: NotificationKind
    message: str
    idempotency_key: str
    status: NotificationStatus
    attempts: int
    last_error: str | None
    created_at: datetime
    sent_at: datetime | None
    next_attempt_at: datetime | None
    last_attempt_at: datetime | None


class AuditEntry(WireModel):
    """One transition or decision, with who or what made it (`details` as recorded)."""

    id: int
    at: datetime
    school_id: int | None
    entity: str
    entity_id: int
    action: str
    from_state: str | None
    to_state: str | None
    reason: str | None
    actor: str
    details: dict[str, Any]


class Board(WireModel):
    """`GET /schools/{id}/board`: the school and every student with state and version."""

    school: School
    students: list[Student]


class OutboxTotals(WireModel):
    """An outbox's pending and refused totals, and the age of the oldest pending one."""

    pending: int
    failed: int
    oldest_pending_seconds: float


class LedgerPage(PageOut[QueuedLedgerEntry], OutboxTotals):
    """`GET /ledger`: a page of outbound commands, with the whole ledger's totals."""


class NotificationPage(PageOut[Notification], OutboxTotals):
    """`GET /notifications`: a page of the outbox, with its totals."""


class DayClosed(WireModel):
    """`POST /schools/{id}/day/close`: whether the day closed now, and what it reset."""

    school_id: int
    day: date
    closed: bool
    students_reset: int
    grants_revoked: int
    arrivals_closed: int
    detail: str


class RosterSummary(WireModel):
    """Per kind of record, how many lines created, updated or left it unchanged."""

    student: dict[str, int]
    guardian: dict[str, int]
    link: dict[str, int]


class RosterLine(WireModel):
    """One line's outcome (`created`, `updated`, `unchanged`) or why it was refused."""

    line: int
    student: str | None = None
    guardian: str | None = None
    link: str | None = None
    student_id: int | None = None
    guardian_id: int | None = None
    reason: str | None = None


class RosterReport(WireModel):
    """`POST /schools/{id}/roster`: each line's outcome, in file order, and a summary."""

    dry_run: bool
    written: bool
    refused: int
    summary: RosterSummary
    lines: list[RosterLine]


class MonitorConfigured(WireModel):
    """Where the controller now pushes (the token in its path is not shown)."""

    monitor: str


class PickedUp(WireModel):
    """A `/dao` push's effect: the students its access-granted logs picked up."""

    picked_up: list[int]


class Acknowledged(WireModel):
    """Another Monitor push, acknowledged (the `dao` log carries the decision)."""

    ok: str
