"""Authorized persons and early releases as a door handles them; each dated one gets its timer.

The validity window is a workflow's (`pickup-entity-timer`, visible in the Temporal history):
the timer is started when the record is created (a person's again on approval) and expires it
at `valid_until`; the hourly sweeps only reconcile what a lost timer start left behind.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup import authorizations
from activities.pickup.contracts.board import (
    Kind,
    PickupErrorCode,
    SubjectKind,
    TimerInput,
    TimerKind,
)
from activities.pickup.errors import not_found, pickup_error
from activities.pickup.kick import Kicker
from activities.pickup.models import AuthorizedPerson, EarlyRelease, Student
from activities.pickup.operator.credentials import attach
from activities.pickup.records import audit
from shared.db.models import as_utc, utcnow

Sessions = async_sessionmaker[AsyncSession]


async def create_person(sessions: Sessions, kicker: Kicker, *, student_id: int, name: str,
                        document: str | None, kind: Kind, valid_from: datetime | None,
                        valid_until: datetime | None, actor: str, card_value: int | None = None,
                        qr_value: str | None = None) -> AuthorizedPerson:
    """Someone authorized to pick up (pending), with their card / QR code if given; a
    temporary one gets its expiry timer."""
    dated = valid_from is not None or valid_until is not None
    if (kind == Kind.PERMANENT and dated) or (kind == Kind.TEMPORARY and valid_until is None):
        raise pickup_error(PickupErrorCode.INVALID_VALIDITY,
                           "Temporary authorizations need valid_until; permanent ones no dates.")
    now = utcnow()
    async with sessions() as session, session.begin():
        student = await session.get(Student, student_id)
        if student is None:
            raise not_found("Student", student_id)
        person = AuthorizedPerson(student_id=student_id, name=name, document=document, kind=kind,
                                  valid_from=valid_from, valid_until=valid_until,
                                  created_at=now, updated_at=now)
        session.add(person)
        await session.flush()
        if card_value is not None or qr_value is not None:
            await attach(session, school_id=student.school_id,
                         holder_kind=SubjectKind.AUTHORIZED_PERSON, holder_id=person.id,
                         card_value=card_value, qr_value=qr_value, at=now)
        audit(session, entity="authorized_person", entity_id=person.id, action="created",
              actor=actor, at=now, to_state=person.status, kind=kind)
    if kind == Kind.TEMPORARY:
        await kicker.timers([_expiry(person, student)])
    return person


def _expiry(person: AuthorizedPerson, student: Student) -> TimerInput:
    """The timer that expires a temporary person at `valid_until`."""
    return TimerInput(kind=TimerKind.AUTHORIZATION, entity_id=person.id,
                      deadline=as_utc(person.valid_until), school_id=student.school_id,
                      student_id=student.id)


async def get_person(sessions: Sessions, person_id: int) -> AuthorizedPerson:
    """One authorized person, with its sync status."""
    async with sessions() as session:
        person = await session.get(AuthorizedPerson, person_id)
    if person is None:
        raise not_found("Authorized person", person_id)
    return person


async def decide_person(sessions: Sessions, kicker: Kicker, *, person_id: int, decision: str,
                        version: int, actor: str) -> AuthorizedPerson:
    """approve (grant on the turnstile) / request-adjustments / revoke (revocation if granted).

    An approval also (re)starts a temporary person's expiry timer: a start lost at creation
    is made good before the badge reaches the turnstile (a running timer is kept).
    """
    async with sessions() as session, session.begin():
        person, controllers = await authorizations.decide_person(
            session, person_id=person_id, decision=decision, version=version, at=utcnow(),
            actor=actor)
        student = await session.get(Student, person.student_id)
    if decision == "approve" and person.kind == Kind.TEMPORARY:
        await kicker.timers([_expiry(person, student)])
    await kicker.drains(controllers)
    return person


async def create_release(sessions: Sessions, kicker: Kicker, *, student_id: int,
                         valid_until: datetime, reason: str | None,
                         actor: str) -> EarlyRelease:
    """A dated, single-use early release (pending), with the timer that expires it unused."""
    now = utcnow()
    async with sessions() as session, session.begin():
        student = await session.get(Student, student_id)
        if student is None:
            raise not_found("Student", student_id)
        release = EarlyRelease(student_id=student_id, valid_until=valid_until, reason=reason,
                               created_at=now)
        session.add(release)
        await session.flush()
        audit(session, entity="early_release", entity_id=release.id, action="created",
              actor=actor, at=now, to_state=release.status)
    await kicker.timers([TimerInput(kind=TimerKind.EARLY_RELEASE, entity_id=release.id,
                                    deadline=valid_until, school_id=student.school_id,
                                    student_id=student_id)])
    return release


async def get_release(sessions: Sessions, release_id: int) -> EarlyRelease:
    """One early release."""
    async with sessions() as session:
        release = await session.get(EarlyRelease, release_id)
    if release is None:
        raise not_found("Early release", release_id)
    return release


async def decide_release(sessions: Sessions, *, release_id: int, decision: str, version: int,
                         actor: str, kicker: Kicker | None = None) -> EarlyRelease:
    """approve (the guardians are told) / request-adjustments / use (once, before its date)."""
    async with sessions() as session, session.begin():
        release = await authorizations.decide_early_release(
            session, release_id=release_id, decision=decision, version=version, at=utcnow(),
            actor=actor)
    if decision == "approve" and kicker is not None:
        # Without a kicker the queue snapshot's redrive sends it within minutes.
        await kicker.drains(notifications=True)
    return release

