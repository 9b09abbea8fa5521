"""Schools as a door creates and reads them; a new school's defaults come from the settings."""

from __future__ import annotations

from typing import Any

from sqlmodel import select

from activities.pickup.errors import not_found
from activities.pickup.models import School
from activities.pickup.records import audit
from shared.db.engine import Sessions
from shared.db.models import utcnow
from shared.settings import PickupSettings

# What an operator may change on a school after creating it.
EDITABLE = frozenset({"name", "time_zone", "day_start", "arrival_timeout_minutes",
                      "turnstile_url"})


class PickupSchools:
    """Schools: each with its arrival-signal timeout, its day (zone, start), its controller."""

    def __init__(self, sessions: Sessions, settings: PickupSettings) -> None:
        self._sessions = sessions
        self._settings = settings

    async def create(self, *, name: str, turnstile_url: str | None = None,
                     arrival_timeout_minutes: float | None = None, time_zone: str | None = None,
                     day_start: str | None = None, actor: str) -> School:
        """A school, audited as `actor`; what is not given is
        `ESTEIRA_PICKUP__ARRIVAL_TIMEOUT_MINUTES`, `…__DAY_TIME_ZONE`, `…__DAY_START`."""
        pickup = self._settings
        school = School(name=name, turnstile_url=turnstile_url,
                        arrival_timeout_minutes=arrival_timeout_minutes
                        or pickup.arrival_timeout_minutes,
                        time_zone=time_zone or pickup.day_time_zone,
                        day_start=day_start or pickup.day_start)
        async with self._sessions() as session, session.begin():
            session.add(school)
            await session.flush()
            audit(session, entity="school", entity_id=school.id, action="created", actor=actor,
                  at=utcnow(), school_id=school.id, name=name)
        return school

    async def update(self, school_id: int, *, changes: dict[str, Any], actor: str) -> School:
        """Change a school's name, day (zone, start), arrival timeout or controller URL,
        audited as `actor` with the fields it changed (the values are the caller's, checked
        as the REST schema checks them)."""
        unknown = set(changes) - EDITABLE
        if unknown:
            raise ValueError(f"not editable: {sorted(unknown)}")
        async with self._sessions() as session, session.begin():
            school = await session.get(School, school_id, with_for_update=True)
            if school is None:
                raise not_found("School", school_id)
            changed = sorted(k for k, v in changes.items() if getattr(school, k) != v)
            for key in changed:
                setattr(school, key, changes[key])
            if changed:
                audit(session, entity="school", entity_id=school_id, action="updated",
                      actor=actor, at=utcnow(), school_id=school_id, fields=changed)
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
