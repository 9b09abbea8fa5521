"""The board as a door drives it: reads, and each transition in one transaction then its kick."""

from __future__ import annotations

from datetime import timedelta

from sqlmodel import select

from activities.pickup import board as machine
from activities.pickup.errors import not_found
from activities.pickup.kick import Kicker
from activities.pickup.models import School, Student
from shared.db.engine import Sessions
from shared.db.models import utcnow
from shared.errors import ErrorCode, EsteiraError


class PickupBoard:
    """Students' pickup states and staff's transitions on them."""

    def __init__(self, sessions: Sessions, kicker: Kicker, ready_timeout: timedelta) -> None:
        self._sessions = sessions
        self._kicker = kicker
        self._ready_timeout = ready_timeout

    async def school_board(self, school_id: int) -> tuple[School, list[Student]]:
        """The school and every one of its students, in id order."""
        async with self._sessions() as session:
            school = await session.get(School, school_id)
            if school is None:
                raise not_found("School", school_id)
            students = (await session.exec(select(Student).where(
                Student.school_id == school_id).order_by(Student.id))).all()
        return school, list(students)

    async def students_of_school(self, school_id: int) -> list[Student]:
        """The school's students in id order (none for an unknown school)."""
        async with self._sessions() as session:
            return list((await session.exec(select(Student).where(
                Student.school_id == school_id).order_by(Student.id))).all())

    async def student(self, student_id: int) -> Student:
        """One student's pickup state."""
        async with self._sessions() as session:
            student = await session.get(Student, student_id)
        if student is None:
            raise not_found("Student", student_id)
        return student

    async def card(self, school_id: int, student_id: int) -> Student:
        """A student as a school's board shows it (404 when not on that board)."""
        student = await self.student(student_id)
        if student.school_id != school_id:
            raise EsteiraError(ErrorCode.NOT_FOUND,
                               f"Student {student_id} is not on school {school_id}'s board.")
        return student

    async def signal_arrival(self, *, student_id: int, actor: str) -> Student:
        """An arrival recorded by staff: AT_SCHOOL -> AWAITING, and its arrival timer."""
        async with self._sessions() as session, session.begin():
            change = await machine.signal_arrival(session, student_id=student_id,
                                                  guardian_id=None, at=utcnow(), actor=actor)
        await self._kicker.after(timers=change.timers, notifications=change.notifications)
        return change.student

    async def mark_ready(self, *, student_id: int, version: int, actor: str) -> Student:
        """AWAITING -> READY: the exit grant goes to the ledger and the READY timer starts."""
        async with self._sessions() as session, session.begin():
            change = await machine.mark_ready(session, student_id=student_id, version=version,
                                              at=utcnow(), actor=actor,
                                              ready_timeout=self._ready_timeout)
        await self._kicker.after(controllers=change.controllers, timers=change.timers,
                                 notifications=change.notifications)
        return change.student

    async def confirm_pickup(self, *, student_id: int, version: int, actor: str) -> Student:
        """READY -> PICKED_UP confirmed by an operator; the one-shot credential is revoked."""
        async with self._sessions() as session, session.begin():
            change = await machine.confirm_pickup(session, student_id=student_id,
                                                  version=version, at=utcnow(), actor=actor,
                                                  origin="operator")
        await self._kicker.after(controllers=change.controllers,
                                 notifications=change.notifications)
        return change.student

    async def undo(self, *, student_id: int, version: int, actor: str) -> Student:
        """Staff's "Desfazer": READY -> AWAITING, or an operator's PICKED_UP -> READY."""
        async with self._sessions() as session, session.begin():
            change = await machine.undo(session, student_id=student_id, version=version,
                                        at=utcnow(), actor=actor,
                                        ready_timeout=self._ready_timeout)
        await self._kicker.after(controllers=change.controllers, timers=change.timers,
                                 notifications=change.notifications)
        return change.student

    async def staff_action(self, action: str, *, student_id: int, version: int,
                           actor: str) -> Student:
        """The transition a card's button names (`ready`, `pickup`, `undo`); 404 for another."""
        if action == "ready":
            return await self.mark_ready(student_id=student_id, version=version, actor=actor)
        if action == "pickup":
            return await self.confirm_pickup(student_id=student_id, version=version,
                                             actor=actor)
        if action == "undo":
            return await self.undo(student_id=student_id, version=version, actor=actor)
        raise EsteiraError(ErrorCode.NOT_FOUND, f"No card action {action!r}.")

    @staticmethod
    def staff_actions(student: Student) -> tuple[str, ...]:
        """The transitions staff may start from this card: `ready`, `pickup`, `undo`."""
        return machine.staff_actions(student.state, student.state_reason)
