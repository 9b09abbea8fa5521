"""Records a door creates and reads: schools, students, guardians."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup.contracts.board import SubjectKind
from activities.pickup.errors import not_found
from activities.pickup.models import Guardian, School, Student
from activities.pickup.operator.credentials import attach
from activities.pickup.operator.editing import cpf_free, registration_free, valid_cpf
from activities.pickup.settings import DEFAULT_DAY_START, DEFAULT_DAY_TIME_ZONE
from shared.db.models import utcnow

Sessions = async_sessionmaker[AsyncSession]


async def create_school(sessions: Sessions, *, name: str, turnstile_url: str | None,
                        arrival_timeout_minutes: float, time_zone: str = DEFAULT_DAY_TIME_ZONE,
                        day_start: str = DEFAULT_DAY_START) -> School:
    """A school with its arrival-signal timeout, its day (zone, start) and controller URL."""
    school = School(name=name, turnstile_url=turnstile_url,
                    arrival_timeout_minutes=arrival_timeout_minutes, time_zone=time_zone,
                    day_start=day_start)
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


async def create_student(sessions: Sessions, *, school_id: int, name: str,
                         registration: str | None = None, card_value: int | None = None,
                         qr_value: str | None = None) -> Student:
    """A student of an existing school, AT_SCHOOL, with its own card / QR code if given
    (the credential its READY exit grant carries; 409 if taken at the school)."""
    async with sessions() as session, session.begin():
        if await session.get(School, school_id) is None:
            raise not_found("School", school_id)
        await registration_free(session, school_id, registration)
        student = Student(school_id=school_id, name=name, registration=registration)
        session.add(student)
        if card_value is not None or qr_value is not None:
            await session.flush()
            await attach(session, school_id=school_id, holder_kind=SubjectKind.STUDENT,
                         holder_id=student.id, card_value=card_value, qr_value=qr_value,
                         at=utcnow())
    return student


async def create_guardian(sessions: Sessions, *, name: str, contact: str | None,
                          school_id: int | None = None, card_value: int | None = None,
                          qr_value: str | None = None, cpf: str | None = None) -> Guardian:
    """A guardian, with their card / QR code at `school_id` if given."""
    cpf = valid_cpf(cpf) if cpf is not None else None
    guardian = Guardian(name=name, contact=contact, school_id=school_id, cpf=cpf)
    async with sessions() as session, session.begin():
        await cpf_free(session, cpf)
        session.add(guardian)
        if card_value is not None or qr_value is not None:
            await session.flush()
            await attach(session, school_id=school_id, holder_kind=SubjectKind.GUARDIAN,
                         holder_id=guardian.id, card_value=card_value, qr_value=qr_value,
                         at=utcnow())
    return guardian


async def list_schools(sessions: Sessions) -> list[School]:
    """Every school, by name."""
    async with sessions() as session:
        return list((await session.exec(select(School).order_by(School.name))).all())
