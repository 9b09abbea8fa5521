"""The school day as an operator drives it: close today by hand."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from sqlalchemy import or_
from sqlmodel import update

from activities.pickup.contracts.board import DAY_START_REASON
from activities.pickup.day_cycle import DayBatch, start_day
from activities.pickup.errors import not_found
from activities.pickup.kick import Kicker
from activities.pickup.models import School
from activities.pickup.records import audit
from activities.pickup.school_day import school_day_of
from shared.db.engine import Sessions
from shared.db.models import utcnow


@dataclass(frozen=True)
class DayClosure:
    """A close-the-day request: whether it closed the day now, and what it reset."""

    school_id: int
    day: date
    closed: bool
    students: int = 0
    revoked: int = 0
    arrivals_closed: int = 0


class SchoolDay:
    """A school's day closed by hand (the day-cycle schedule does it at each day start)."""

    def __init__(self, sessions: Sessions, kicker: Kicker) -> None:
        self._sessions = sessions
        self._kicker = kicker

    async def close(self, *, school_id: int, actor: str) -> DayClosure:
        """Close the school's current day: every student AT_SCHOOL, grants revoked, signals
        closed.

        Once per school day (a CAS on `closed_day`), all in one transaction: a second request
        the same day changes nothing and answers `closed=False`.
        """
        now = utcnow()
        async with self._sessions() as session, session.begin():
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
            audit(session, entity="school", entity_id=school_id, action="day-closed",
                  actor=actor, at=now, school_id=school_id, reason=DAY_START_REASON,
                  day=day.isoformat(), students=batch.changed, revoked=batch.revoked,
                  arrivals_closed=batch.arrivals_closed)
        await self._kicker.drains(batch.controllers)
        return DayClosure(school_id=school_id, day=day, closed=True, students=batch.changed,
                          revoked=batch.revoked, arrivals_closed=batch.arrivals_closed)
