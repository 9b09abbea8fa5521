"""The pickup audit trail, newest first: of an entity, of a school, or of one school day."""

from __future__ import annotations

from datetime import date

from sqlmodel import and_, select

from activities.pickup.errors import not_found
from activities.pickup.models import AuditEntry, School, Student
from activities.pickup.operator.listing import id_page
from activities.pickup.school_day import day_bounds
from shared.db.engine import Sessions
from shared.errors import ErrorCode, EsteiraError
from shared.paging import Page


class AuditTrail:
    """Audit rows a page at a time, newest first."""

    def __init__(self, sessions: Sessions) -> None:
        self._sessions = sessions

    async def trail(self, *, entity: str | None = None, entity_id: int | None = None,
                    school_id: int | None = None, limit: int = 100,
                    cursor: str | None = None) -> Page[AuditEntry]:
        """Audit rows, optionally of one entity or one school."""
        query = select(AuditEntry)
        if school_id is not None:
            query = query.where(AuditEntry.school_id == school_id)
        if entity:
            query = query.where(AuditEntry.entity == entity)
        if entity_id is not None:
            query = query.where(AuditEntry.entity_id == entity_id)
        return await id_page(self._sessions, AuditEntry, query, limit=limit, cursor=cursor,
                             descending=True)

    async def of_day(self, *, day: date, student_id: int | None, school_id: int | None,
                     limit: int = 100, cursor: str | None = None) -> Page[AuditEntry]:
        """Audit rows of one school day (in the school's zone).

        Of a student (its own rows), or of a whole school; the day's bounds come from the
        school of the student or the school given.
        """
        async with self._sessions() as session:
            if student_id is not None:
                student = await session.get(Student, student_id)
                if student is None:
                    raise not_found("Student", student_id)
                school_id = student.school_id
            if school_id is None:
                raise EsteiraError(ErrorCode.REQUEST_INVALID,
                                   "An audit day needs student_id or school_id (whose time "
                                   "zone).")
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
        return await id_page(self._sessions, AuditEntry, query, limit=limit, cursor=cursor,
                             descending=True)
