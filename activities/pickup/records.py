"""What every pickup change writes in its own transaction: audit, broadcast, ledger, outbox."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import or_
from sqlmodel import and_, select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup.contracts.board import EventType, Kind, LedgerCommand, SubjectKind
from activities.pickup.models import (
    AuditEntry,
    BoardEvent,
    GuardianLink,
    LedgerEntry,
    Notification,
    Student,
)


def audit(session: AsyncSession, *, entity: str, entity_id: int, action: str, actor: str,
          at: datetime, school_id: int | None = None, from_state: str | None = None,
          to_state: str | None = None, reason: str | None = None, **details: Any) -> None:
    """Add an audit row to the caller's transaction."""
    session.add(AuditEntry(at=at, school_id=school_id, entity=entity, entity_id=entity_id,
                           action=action, from_state=from_state, to_state=to_state,
                           reason=reason, actor=actor, details=details))


def state_event_row(*, student_id: int, school_id: int, name: str, previous: str, state: str,
                    version: int, at: datetime, reason: str | None,
                    origin: str) -> dict[str, Any]:
    """The `StudentStateChanged` row for one transition (also built in bulk by the sweeps)."""
    return {"at": at, "type": EventType.STUDENT_STATE_CHANGED, "school_id": school_id,
            "student_id": student_id, "guardian_id": None, "reason": reason,
            "payload": {"student_id": student_id, "name": name, "from": previous, "to": state,
                        "version": version, "reason": reason, "origin": origin}}


def broadcast_state(session: AsyncSession, student: Student, *, previous: str, at: datetime,
                    reason: str | None, origin: str) -> None:
    """`StudentStateChanged` for the school board and the student's guardians."""
    session.add(BoardEvent(**state_event_row(
        student_id=student.id, school_id=student.school_id, name=student.name,
        previous=previous, state=student.state, version=student.version, at=at, reason=reason,
        origin=origin)))


def broadcast_roster(session: AsyncSession, *, school_id: int, student_id: int,
                     guardian_id: int, at: datetime, reason: str, link_id: int) -> None:
    """`StudentRosterChanged` for one guardian (the app drops or adds the student)."""
    session.add(BoardEvent(
        at=at, type=EventType.STUDENT_ROSTER_CHANGED, school_id=school_id,
        student_id=student_id, guardian_id=guardian_id, reason=reason,
        payload={"student_id": student_id, "guardian_id": guardian_id, "link_id": link_id,
                 "change": reason},
    ))


def student_registration(student_id: int) -> str:
    """The turnstile `users.registration` of a student's exit credential."""
    return f"student-{student_id}"


def person_registration(person_id: int) -> str:
    """The turnstile `users.registration` of an authorized person's badge."""
    return f"authorized-{person_id}"


def guardian_registration(guardian_id: int) -> str:
    """The turnstile `users.registration` of a guardian's card / QR code."""
    return f"guardian-{guardian_id}"


def enqueue_ledger(session: AsyncSession, *, controller: int, command: LedgerCommand,
                   subject_kind: SubjectKind, subject_id: int, registration: str, key: str,
                   at: datetime, name: str = "", begin_time: int = 0,
                   end_time: int = 0, card_value: int | None = None,
                   qr_value: str | None = None) -> LedgerEntry:
    """Record an outbound command (with the credential it provisions or removes, if any);
    the drain workflow of `controller` delivers it."""
    entry = LedgerEntry(controller=controller, command=command, subject_kind=subject_kind,
                        subject_id=subject_id, registration=registration, name=name,
                        begin_time=begin_time, end_time=end_time, card_value=card_value,
                        qr_value=qr_value, idempotency_key=key, created_at=at)
    session.add(entry)
    return entry


def valid_link(now: datetime):
    """Links that count as approved at `now`: permanent, or temporary inside their window."""
    return or_(
        GuardianLink.kind == Kind.PERMANENT,
        and_(GuardianLink.valid_until > now,
             or_(GuardianLink.valid_from.is_(None), GuardianLink.valid_from <= now)),
    )


async def guardians_of(session: AsyncSession, student_id: int, now: datetime) -> list[int]:
    """Guardians whose link to the student is valid at `now`."""
    rows = await session.exec(select(GuardianLink.guardian_id).where(
        GuardianLink.student_id == student_id, valid_link(now)))
    return sorted(rows.all())


async def notify_guardians(session: AsyncSession, student: Student, *, kind: str, message: str,
                           key: str, at: datetime) -> int:
    """One outbox row per guardian of the student; the key makes each send happen once."""
    guardians = await guardians_of(session, student.id, at)
    for guardian_id in guardians:
        session.add(Notification(guardian_id=guardian_id, student_id=student.id, kind=kind,
                                 message=message, idempotency_key=f"{key}:{guardian_id}",
                                 created_at=at))
    return len(guardians)


async def bulk_insert(session: AsyncSession, model: type, rows: list[dict[str, Any]]) -> None:
    """Core executemany (the ORM bulk path splits batches on differing NULL columns)."""
    if rows:
        await session.exec(model.__table__.insert(), params=rows)
