"""Guardians' access as a door asks for it: links, app tokens, bearer auth, their students."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup import access
from activities.pickup import board as machine
from activities.pickup.contracts.board import Kind, PickupErrorCode
from activities.pickup.errors import pickup_error
from activities.pickup.guardian_access import sync_guardian
from activities.pickup.kick import Kicker
from activities.pickup.models import AccessToken, GuardianLink, Student
from shared.db.models import utcnow

Sessions = async_sessionmaker[AsyncSession]


async def guardian_for_header(sessions: Sessions, authorization: str | None) -> int:
    """The guardian of an `Authorization: Bearer <token>` header; refused without a live one."""
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise pickup_error(PickupErrorCode.TOKEN_MISSING,
                           "An `Authorization: Bearer <access token>` header is required.")
    async with sessions() as session:
        return await access.guardian_for_token(session, token.strip(), utcnow())


async def linked_students(sessions: Sessions, guardian_id: int) -> list[Student]:
    """Students the guardian may pick up now (expired temporary links excluded)."""
    async with sessions() as session:
        return await access.linked_students(session, guardian_id, utcnow())


async def signal_arrivals(sessions: Sessions, kicker: Kicker, *, guardian_id: int,
                          student_ids: list[int]) -> list[Student]:
    """"Estou chegando" for some students, all or none: refused for any not linked now."""
    now = utcnow()
    timers, students, notes = [], [], 0
    async with sessions() as session, session.begin():
        for student_id in student_ids:
            await access.require_link(session, guardian_id, student_id, now)
        for student_id in student_ids:
            change = await machine.signal_arrival(session, student_id=student_id,
                                                  guardian_id=guardian_id, at=now,
                                                  actor=f"guardian:{guardian_id}")
            timers += change.timers
            notes += change.notifications
            students.append(change.student)
    await kicker.after(timers=timers, notifications=notes)
    return students


async def link_guardian(sessions: Sessions, *, student_id: int, guardian_id: int, kind: Kind,
                        valid_from: datetime | None, valid_until: datetime | None,
                        actor: str, kicker: Kicker | None = None) -> GuardianLink:
    """Link a guardian to a student (`StudentRosterChanged` for the guardian's app); a
    credential they hold at the student's school is granted on its turnstile."""
    now = utcnow()
    async with sessions() as session, session.begin():
        link = await access.create_link(session, student_id=student_id, guardian_id=guardian_id,
                                        kind=kind, valid_from=valid_from,
                                        valid_until=valid_until, at=now, actor=actor)
        school_id = (await session.get(Student, student_id)).school_id
        synced = await sync_guardian(session, guardian_id=guardian_id, school_id=school_id,
                                     at=now)
    if synced and kicker is not None:
        await kicker.drains({school_id})
    return link


async def issue_token(sessions: Sessions, *, guardian_id: int,
                      ttl: timedelta) -> tuple[str, AccessToken]:
    """A guardian-app token; the raw value is returned once and never stored."""
    async with sessions() as session, session.begin():
        return await access.issue_token(session, guardian_id=guardian_id, ttl=ttl, at=utcnow())
