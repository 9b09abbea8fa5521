"""The school day as an operator drives it: close today by hand, read the audit of a day."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from sqlalchemy import or_
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import and_, select, update
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup.contracts.board import DAY_START_REASON
from activities.pickup.day_cycle import DayBatch, start_day
from activities.pickup.errors import not_found
from activities.pickup.kick import Kicker
from activities.pickup.models import AuditEntry, School, Student
from activities.pickup.records import audit
from activities.pickup.school_day import day_bounds, school_day_of
from shared.db.models import utcnow
from shared.errors import ErrorCode, EsteiraError

Sessions = async_sessionmaker[AsyncSession]


@dataclass(frozen=True)
class DayClosure:
    """A close-the-day request: whether it closed the day now, and what it reset."""

    school_id: int
    day: date
    closed: bool
    students: int = 0
    revoked: int = 0
    arrivals_closed: int = 0


async def close_day(sessions: Sessions, kicker: Kicker, *, school_id: int,
                    actor: str) -> DayClosure:
    """Close the school's current day: every student AT_SCHOOL, grants revoked, signals closed.

    Once per school day (a CAS on `closed_day`), all in one transaction: a second request the
    same day changes nothing and answers `closed=False`.
    """
    now = utcnow()
    async with sessions() as session, session.begin():
        school = await session.get(School, school_id)
        if school is None:
            raise not_found("School", school_id)
        day = school_day_of(now, school.time_zone, school.day_start)
        won = await session.exec(update(School).where(
            School.id == school_id,
            or_(School.closed_day.is_(None), School.closed_day < day)).values(closed_day=day))
        if won.rowcount != 1:
            return DayClosure(school_id=school_id, day=day, closed=False)
        batch: DayBatch = await start_day(session, school_ids=[school_id], boundary=now,
                                          at=now, actor=actor, origin="operator", day=day)
        audit(session, entity="school", entity_id=school_id, action="day-closed", actor=actor,
              at=now, school_id=school_id, reason=DAY_START_REASON, day=day.isoformat(),
              students=batch.changed, revoked=batch.revoked,
              arrivals_closed=batch.arrivals_closed)
    await kicker.drains(batch.controllers)
    return DayClosure(school_id=school_id, day=day, closed=True, students=batch.changed,
                      revoked=batch.revoked, arrivals_closed=batch.arrivals_closed)


async def audit_of_day(sessions: Sessions, *, day: date, student_id: int | None,
                       school_id: int | None, limit: int) -> list[AuditEntry]:
    """Audit rows of one school day (in the school's zone), newest first.

    Of a student (its own rows), or of a whole school; the day's bounds come from the school
    of the student or the school given.
    """
    async with sessions() as session:
        if student_id is not None:
            student = await session.get(Student, student_id)
            if student is None:
                raise not_found("Student", student_id)
            school_id = student.school_id
        if school_id is None:
            raise EsteiraError(ErrorCode.REQUEST_INVALID,
                               "An audit day needs student_id or school_id (whose time zone).")
        school = await session.get(School, school_id)
        if school is None:
            raise not_found("School", school_id)
        try:
            start, end = day_bounds(day, school.time_zone, school.day_start)
        except OverflowError:  # 9999-12-31 has no next day
            raise EsteiraError(ErrorCode.REQUEST_INVALID, f"No school day {day}.") from None
        whose = (and_(AuditEntry.entity == "student", AuditEntry.entity_id == student_id)
                 if student_id is not None else AuditEntry.school_id == school_id)
        query = select(AuditEntry).where(whose, AuditEntry.at >= start, AuditEntry.at < end)
        return list((await session.exec(
            query.order_by(AuditEntry.id.desc()).limit(limit))).all())
