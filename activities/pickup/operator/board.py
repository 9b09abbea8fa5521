"""The board as a door drives it: reads, and each transition in one transaction then its kick."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup import board as machine
from activities.pickup.errors import not_found
from activities.pickup.kick import Kicker
from activities.pickup.models import School, Student
from shared.db.models import utcnow

Sessions = async_sessionmaker[AsyncSession]


async def school_board(sessions: Sessions, school_id: int) -> tuple[School, list[Student]]:
    """The school and every one of its students, in id order."""
    async with sessions() as session:
        school = await session.get(School, school_id)
        if school is None:
            raise not_found("School", school_id)
        students = (await session.exec(select(Student).where(Student.school_id == school_id)
                                       .order_by(Student.id))).all()
    return school, list(students)


async def students_of_school(sessions: Sessions, school_id: int) -> list[Student]:
    """The school's students in id order (none for an unknown school)."""
    async with sessions() as session:
        return list((await session.exec(select(Student).where(
            Student.school_id == school_id).order_by(Student.id))).all())


async def get_student(sessions: Sessions, student_id: int) -> Student:
    """One student's pickup state."""
    async with sessions() as session:
        student = await session.get(Student, student_id)
    if student is None:
        raise not_found("Student", student_id)
    return student


async def signal_arrival(sessions: Sessions, kicker: Kicker, *, student_id: int,
                         actor: str) -> Student:
    """An arrival recorded by staff: AT_SCHOOL -> AWAITING, and its arrival timer."""
    async with sessions() as session, session.begin():
        change = await machine.signal_arrival(session, student_id=student_id, guardian_id=None,
                                              at=utcnow(), actor=actor)
    await kicker.after(timers=change.timers, notifications=change.notifications)
    return change.student


async def mark_ready(sessions: Sessions, kicker: Kicker, *, student_id: int, version: int,
                     actor: str, ready_timeout: timedelta) -> Student:
    """AWAITING -> READY: the exit grant goes to the ledger and the READY timer starts."""
    async with sessions() as session, session.begin():
        change = await machine.mark_ready(session, student_id=student_id, version=version,
                                          at=utcnow(), actor=actor, ready_timeout=ready_timeout)
    await kicker.after(controllers=change.controllers, timers=change.timers,
                       notifications=change.notifications)
    return change.student


async def confirm_pickup(sessions: Sessions, kicker: Kicker, *, student_id: int, version: int,
                         actor: str) -> Student:
    """READY -> PICKED_UP confirmed by an operator; the one-shot credential is revoked."""
    async with sessions() as session, session.begin():
        change = await machine.confirm_pickup(session, student_id=student_id, version=version,
                                              at=utcnow(), actor=actor, origin="operator")
    await kicker.after(controllers=change.controllers, notifications=change.notifications)
    return change.student


async def undo(sessions: Sessions, kicker: Kicker, *, student_id: int, version: int,
               actor: str, ready_timeout: timedelta) -> Student:
    """Staff's "Desfazer": READY -> AWAITING, or an operator's PICKED_UP -> READY."""
    async with sessions() as session, session.begin():
        change = await machine.undo(session, student_id=student_id, version=version,
                                    at=utcnow(), actor=actor, ready_timeout=ready_timeout)
    await kicker.after(controllers=change.controllers, timers=change.timers,
                       notifications=change.notifications)
    return change.student


def staff_actions(student: Student) -> tuple[str, ...]:
    """The transitions staff may start from this card: `ready`, `pickup`, `undo`."""
    return machine.staff_actions(student.state, student.state_reason)
