"""Authorized persons and early releases as a door handles them; each dated one gets its timer.

The validity window is a workflow's (`pickup-entity-timer`, visible in the Temporal history):
the timer is started when the record is created (a person's again on approval and on an edit)
and expires it at `valid_until`; the hourly sweeps only reconcile what a lost timer start
left behind.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlmodel import delete, update

from activities.pickup import authorizations
from activities.pickup.contracts.board import (
    AuthorizationStatus,
    Kind,
    PickupErrorCode,
    SubjectKind,
    SyncStatus,
    TimerInput,
    TimerKind,
)
from activities.pickup.credentials import attach, drop_credentials
from activities.pickup.errors import not_found, pickup_error
from activities.pickup.kick import Kicker
from activities.pickup.models import AuthorizedPerson, EarlyRelease, Student
from activities.pickup.record_rules import check_person_window
from activities.pickup.records import audit
from shared.db.engine import Sessions
from shared.db.models import as_utc, utcnow

A = AuthorizedPerson
# An approved person is on the turnstile: its badge carries the data, so it is revoked
# (and a new one requested) rather than edited.
EDITABLE = (AuthorizationStatus.PENDING, AuthorizationStatus.ADJUSTMENTS_REQUESTED)


def _expiry(person: AuthorizedPerson, student: Student) -> TimerInput:
    """The timer that expires a temporary person at `valid_until`."""
    return TimerInput(kind=TimerKind.AUTHORIZATION, entity_id=person.id,
                      deadline=as_utc(person.valid_until), school_id=student.school_id,
                      student_id=student.id)


class PickupAuthorizations:
    """Authorized persons (created, decided, edited, deleted) and early releases."""

    def __init__(self, sessions: Sessions, kicker: Kicker) -> None:
        self._sessions = sessions
        self._kicker = kicker

    async def create_person(self, *, student_id: int, name: str, document: str | None,
                            kind: Kind, valid_from: datetime | None,
                            valid_until: datetime | None, actor: str,
                            card_value: int | None = None,
                            qr_value: str | None = None) -> AuthorizedPerson:
        """Someone authorized to pick up (pending), with their card / QR code if given; a
        temporary one gets its expiry timer."""
        check_person_window(kind, valid_from, valid_until)
        now = utcnow()
        async with self._sessions() as session, session.begin():
            student = await session.get(Student, student_id)
            if student is None:
                raise not_found("Student", student_id)
            person = A(student_id=student_id, name=name, document=document, kind=kind,
                       valid_from=valid_from, valid_until=valid_until, created_at=now,
                       updated_at=now)
            session.add(person)
            await session.flush()
            if card_value is not None or qr_value is not None:
                await attach(session, school_id=student.school_id,
                             holder_kind=SubjectKind.AUTHORIZED_PERSON, holder_id=person.id,
                             card_value=card_value, qr_value=qr_value, at=now)
            audit(session, entity="authorized_person", entity_id=person.id, action="created",
                  actor=actor, at=now, to_state=person.status, kind=kind)
        if kind == Kind.TEMPORARY:
            await self._kicker.timers([_expiry(person, student)])
        return person

    async def person(self, person_id: int) -> AuthorizedPerson:
        """One authorized person, with its sync status."""
        async with self._sessions() as session:
            person = await session.get(A, person_id)
        if person is None:
            raise not_found("Authorized person", person_id)
        return person

    async def decide_person(self, *, person_id: int, decision: str, version: int,
                            actor: str) -> AuthorizedPerson:
        """approve (grant on the turnstile) / request-adjustments / revoke (revocation if
        granted).

        An approval also (re)starts a temporary person's expiry timer: a start lost at
        creation is made good before the badge reaches the turnstile (a running timer is kept).
        """
        async with self._sessions() as session, session.begin():
            person, controllers = await authorizations.decide_person(
                session, person_id=person_id, decision=decision, version=version, at=utcnow(),
                actor=actor)
            student = await session.get(Student, person.student_id)
        if decision == "approve" and person.kind == Kind.TEMPORARY:
            await self._kicker.timers([_expiry(person, student)])
        await self._kicker.drains(controllers)
        return person

    async def edit_person(self, *, person_id: int, version: int, changes: dict[str, Any],
                          actor: str) -> AuthorizedPerson:
        """Edit a pending person, or one with adjustments requested (which goes back to
        pending for review), as a CAS on status and version."""
        now = utcnow()
        async with self._sessions() as session, session.begin():
            person = await session.get(A, person_id)
            if person is None:
                raise not_found("Authorized person", person_id)
            if person.status not in EDITABLE:
                raise pickup_error(PickupErrorCode.STATUS_CONFLICT,
                                   f"Authorized person {person_id} is {person.status}.")
            merged = {"kind": person.kind, "valid_from": person.valid_from,
                      "valid_until": person.valid_until, **changes}
            check_person_window(merged["kind"], merged["valid_from"], merged["valid_until"])
            previous = person.status
            result = await session.exec(update(A).where(
                A.id == person_id, A.status == previous, A.version == version).values(
                **changes, status=AuthorizationStatus.PENDING, version=A.version + 1,
                updated_at=now))
            if result.rowcount != 1:
                raise pickup_error(PickupErrorCode.VERSION_CONFLICT,
                                   f"Authorized person {person_id} changed; reload it "
                                   f"(version {version}).")
            await session.refresh(person)
            student = await session.get(Student, person.student_id)
            audit(session, entity="authorized_person", entity_id=person_id, action="edited",
                  actor=actor, at=now, school_id=student.school_id, from_state=previous,
                  to_state=person.status, fields=sorted(changes))
        if person.kind == Kind.TEMPORARY:
            # A running expiry timer is kept: it re-reads valid_until when it fires, and the
            # hourly sweep reconciles a window that was moved earlier.
            await self._kicker.timers([_expiry(person, student)])
        return person

    async def delete_person(self, *, person_id: int, actor: str) -> None:
        """Delete an authorized person that holds no badge: refused (409 in-use) while
        approved or while a revocation is not yet confirmed by the controller."""
        async with self._sessions() as session, session.begin():
            person = await session.get(A, person_id)
            if person is None:
                raise not_found("Authorized person", person_id)
            if person.status == AuthorizationStatus.APPROVED \
                    or person.sync_status == SyncStatus.PENDING:
                raise pickup_error(PickupErrorCode.IN_USE,
                                   f"Authorized person {person_id} is on the turnstile "
                                   f"({person.status}, sync {person.sync_status}); revoke it "
                                   "and wait for the controller to confirm.")
            student = await session.get(Student, person.student_id)
            await session.exec(delete(A).where(A.id == person_id))
            # Their card or QR value is free again at the school.
            await drop_credentials(session, holder_kind=SubjectKind.AUTHORIZED_PERSON,
                                   holder_id=person_id)
            audit(session, entity="authorized_person", entity_id=person_id, action="deleted",
                  actor=actor, at=utcnow(), school_id=student.school_id,
                  from_state=person.status, name=person.name)

    async def create_release(self, *, student_id: int, valid_until: datetime,
                             reason: str | None, actor: str) -> EarlyRelease:
        """A dated, single-use early release (pending), with the timer that expires it
        unused."""
        now = utcnow()
        async with self._sessions() as session, session.begin():
            student = await session.get(Student, student_id)
            if student is None:
                raise not_found("Student", student_id)
            release = EarlyRelease(student_id=student_id, valid_until=valid_until,
                                   reason=reason, created_at=now)
            session.add(release)
            await session.flush()
            audit(session, entity="early_release", entity_id=release.id, action="created",
                  actor=actor, at=now, to_state=release.status)
        await self._kicker.timers([TimerInput(kind=TimerKind.EARLY_RELEASE,
                                              entity_id=release.id, deadline=valid_until,
                                              school_id=student.school_id,
                                              student_id=student_id)])
        return release

    async def release(self, release_id: int) -> EarlyRelease:
        """One early release."""
        async with self._sessions() as session:
            release = await session.get(EarlyRelease, release_id)
        if release is None:
            raise not_found("Early release", release_id)
        return release

    async def decide_release(self, *, release_id: int, decision: str, version: int,
                             actor: str) -> EarlyRelease:
        """approve (the guardians are told) / request-adjustments / use (once, before its
        date)."""
        async with self._sessions() as session, session.begin():
            release = await authorizations.decide_early_release(
                session, release_id=release_id, decision=decision, version=version,
                at=utcnow(), actor=actor)
        if decision == "approve":
            await self._kicker.drains(notifications=True)
        return release
