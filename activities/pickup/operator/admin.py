"""Records a door creates and reads: schools, students, guardians."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup.errors import not_found
from shared.db.pickup_models import Guardian, School, Student

Sessions = async_sessionmaker[AsyncSession]


async def create_school(sessions: Sessions, *, name: str, turnstile_url: str | None,
                        arrival_timeout_minutes: float) -> School:
    """A school with its arrival-signal timeout and (optionally) its controller's URL."""
    school = School(name=name, turnstile_url=turnstile_url,
                    arrival_timeout_minutes=arrival_timeout_minutes)
    async with sessions() as session, session.begin():
        session.add(school)
    return school


async def get_school(sessions: Sessions, school_id: int) -> School:
    """One school."""
    async with sessions() as session:
        school = await session.get(School, school_id)
    if school is None:
        raise not_found("School", school_id)
    return school


async def create_student(sessions: Sessions, *, school_id: int, name: str) -> Student:
    """A student of an existing school, AT_SCHOOL."""
    async with sessions() as session, session.begin():
        if await session.get(School, school_id) is None:
            raise not_found("School", school_id)
        student = Student(school_id=school_id, name=name)
        session.add(student)
    return student


async def create_guardian(sessions: Sessions, *, name: str, contact: str | None) -> Guardian:
    """A guardian."""
    guardian = Guardian(name=name, contact=contact)
    async with sessions() as session, session.begin():
        session.add(guardian)
    return guardian


async def list_schools(sessions: Sessions) -> list[School]:
    """Every school, by name."""
    async with sessions() as session:
        return list((await session.exec(select(School).order_by(School.name))).all())
