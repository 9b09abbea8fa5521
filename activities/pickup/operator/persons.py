"""Authorized persons edited after "request-adjustments", and deleted once off the turnstile."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import delete, update
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup.contracts.board import (
    AuthorizationStatus,
    Kind,
    PickupErrorCode,
    SubjectKind,
    SyncStatus,
    TimerInput,
    TimerKind,
)
from activities.pickup.credentials import drop_credentials
from activities.pickup.errors import not_found, pickup_error
from activities.pickup.kick import Kicker
from activities.pickup.models import AuthorizedPerson, Student
from activities.pickup.records import audit
from shared.db.models import as_utc, utcnow

Sessions = async_sessionmaker[AsyncSession]
A = AuthorizedPerson
# An approved person is on the turnstile: its badge carries the data, so it is revoked
# (and a new one requested) rather than edited.
EDITABLE = (AuthorizationStatus.PENDING, AuthorizationStatus.ADJUSTMENTS_REQUESTED)


def _check_window(person: dict[str, Any]) -> None:
    dated = person["valid_from"] is not None or person["valid_until"] is not None
    if (person["kind"] == Kind.PERMANENT and dated) or (
            person["kind"] == Kind.TEMPORARY and person["valid_until"] is None):
        raise pickup_error(PickupErrorCode.INVALID_VALIDITY,
                           "Temporary authorizations need valid_until; permanent ones no dates.")


async def edit_person(sessions: Sessions, kicker: Kicker, *, person_id: int, version: int,
                      changes: dict[str, Any], actor: str) -> AuthorizedPerson:
    """Edit a pending person, or one with adjustments requested (which goes back to pending
    for review), as a CAS on status and version."""
    now = utcnow()
    async with sessions() as session, session.begin():
        person = await session.get(A, person_id)
        if person is None:
            raise not_found("Authorized person", person_id)
        if person.status not in EDITABLE:
            raise pickup_error(PickupErrorCode.STATUS_CONFLICT,
                               f"Authorized person {person_id} is {person.status}.")
        _check_window({"kind": person.kind, "valid_from": person.valid_from,
                       "valid_until": person.valid_until, **changes})
        previous = person.status
        result = await session.exec(update(A).where(
            A.id == person_id, A.status == previous, A.version == version).values(
            **changes, status=AuthorizationStatus.PENDING, version=A.version + 1,
            updated_at=now))
        if result.rowcount != 1:
            raise pickup_error(PickupErrorCode.VERSION_CONFLICT,
                               f"Authorized person {person_id} changed; reload it "
                               f"(version {version}).")
        person = await session.get(A, person_id, populate_existing=True)
        student = await session.get(Student, person.student_id)
        audit(session, entity="authorized_person", entity_id=person_id, action="edited",
              actor=actor, at=now, school_id=student.school_id, from_state=previous,
              to_state=person.status, fields=sorted(changes))
    if person.kind == Kind.TEMPORARY:
        # A running expiry timer is kept: it re-reads valid_until when it fires, and the
        # hourly sweep reconciles a window that was moved earlier.
        await kicker.timers([TimerInput(kind=TimerKind.AUTHORIZATION, entity_id=person.id,
                                        deadline=as_utc(person.valid_until),
                                        school_id=student.school_id, student_id=student.id)])
    return person


async def delete_person(sessions: Sessions, *, person_id: int, actor: str) -> None:
    """Delete an authorized person that holds no badge: refused (409 in-use) while approved
    or while a revocation is not yet confirmed by the controller."""
    async with sessions() as session, session.begin():
        person = await session.get(A, person_id)
        if person is None:
            raise not_found("Authorized person", person_id)
        if person.status == AuthorizationStatus.APPROVED \
                or person.sync_status == SyncStatus.PENDING:
            raise pickup_error(PickupErrorCode.IN_USE,
                               f"Authorized person {person_id} is on the turnstile "
                               f"({person.status}, sync {person.sync_status}); revoke it and "
                               "wait for the controller to confirm.")
        student = await session.get(Student, person.student_id)
        await session.exec(delete(A).where(A.id == person_id))
        # Their card or QR value is free again at the school.
        await drop_credentials(session, holder_kind=SubjectKind.AUTHORIZED_PERSON,
                               holder_id=person_id)
        audit(session, entity="authorized_person", entity_id=person_id, action="deleted",
              actor=actor, at=utcnow(), school_id=student.school_id, from_state=person.status,
              name=person.name)
