"""Schools as a door creates and reads them; a new school's defaults come from the settings."""

from __future__ import annotations

from sqlmodel import select

from activities.pickup.errors import not_found
from activities.pickup.models import School
from shared.db.engine import Sessions
from shared.settings import PickupSettings


class PickupSchools:
    """Schools: each with its arrival-signal timeout, its day (zone, start), its controller."""

    def __init__(self, sessions: Sessions, settings: PickupSettings) -> None:
        self._sessions = sessions
        self._settings = settings

    async def create(self, *, name: str, turnstile_url: str | None = None,
                     arrival_timeout_minutes: float | None = None, time_zone: str | None = None,
                     day_start: str | None = None) -> School:
        """A school; what is not given is `ESTEIRA_PICKUP__ARRIVAL_TIMEOUT_MINUTES`,
        `…__DAY_TIME_ZONE`, `…__DAY_START`."""
        pickup = self._settings
        school = School(name=name, turnstile_url=turnstile_url,
                        arrival_timeout_minutes=arrival_timeout_minutes
                        or pickup.arrival_timeout_minutes,
                        time_zone=time_zone or pickup.day_time_zone,
                        day_start=day_start or pickup.day_start)
        async with self._sessions() as session, session.begin():
            session.add(school)
        return school

    async def get(self, school_id: int) -> School:
        """One school."""
        async with self._sessions() as session:
            school = await session.get(School, school_id)
        if school is None:
            raise not_found("School", school_id)
        return school

    async def all(self) -> list[School]:
        """Every school, by name."""
        async with self._sessions() as session:
            return list((await session.exec(select(School).order_by(School.name))).all())
