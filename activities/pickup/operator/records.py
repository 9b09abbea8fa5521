"""Students, guardians and links as a door creates, edits and deletes them; each audited.

Edits are a CAS on the row's `revision` (a student's board `version` is untouched); a change
that moves a guardian's turnstile window queues it in the same transaction, then wakes the
school's drain.
"""

from __future__ import annotations

from typing import Any

from sqlmodel import delete, func, select, update
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup.contracts.board import PickupErrorCode, PickupState, SubjectKind
from activities.pickup.credentials import attach, drop_credentials
from activities.pickup.errors import not_found, pickup_error
from activities.pickup.guardian_access import sync_guardian, sync_guardian_everywhere
from activities.pickup.guardian_sign_in import forget_links
from activities.pickup.kick import Kicker
from activities.pickup.models import (
    AccessToken,
    Arrival,
    AuthorizedPerson,
    EarlyRelease,
    Guardian,
    GuardianLink,
    School,
    Student,
)
from activities.pickup.record_rules import (
    check_link_window,
    cpf_free,
    registration_free,
    revise,
    valid_cpf,
)
from activities.pickup.records import audit, broadcast_roster
from shared.db.engine import Sessions
from shared.db.models import utcnow


async def _count(session: AsyncSession, column: Any, value: int) -> int:
    return (await session.exec(select(func.count()).where(column == value))).one()


class PickupRecords:
    """Creation, edits and deletions of students, guardians and links."""

    def __init__(self, sessions: Sessions, kicker: Kicker) -> None:
        self._sessions = sessions
        self._kicker = kicker

    async def create_student(self, *, school_id: int, name: str,
                             registration: str | None = None, card_value: int | None = None,
                             qr_value: str | None = None, actor: str) -> Student:
        """A student of an existing school, AT_SCHOOL, with its own card / QR code if given
        (the credential its READY exit grant carries; 409 if taken at the school); audited
        as `actor`."""
        async with self._sessions() as session, session.begin():
            if await session.get(School, school_id) is None:
                raise not_found("School", school_id)
            await registration_free(session, school_id, registration)
            student = Student(school_id=school_id, name=name, registration=registration)
            session.add(student)
            await session.flush()
            audit(session, entity="student", entity_id=student.id, action="created",
                  actor=actor, at=utcnow(), school_id=school_id, to_state=student.state)
            if card_value is not None or qr_value is not None:
                await attach(session, school_id=school_id, holder_kind=SubjectKind.STUDENT,
                             holder_id=student.id, card_value=card_value, qr_value=qr_value,
                             at=utcnow())
        return student

    async def create_guardian(self, *, name: str, contact: str | None = None,
                              school_id: int | None = None, card_value: int | None = None,
                              qr_value: str | None = None, cpf: str | None = None,
                              actor: str) -> Guardian:
        """A guardian, with their card / QR code at `school_id` if given; audited as
        `actor`."""
        cpf = valid_cpf(cpf) if cpf is not None else None
        guardian = Guardian(name=name, contact=contact, school_id=school_id, cpf=cpf)
        async with self._sessions() as session, session.begin():
            await cpf_free(session, cpf)
            session.add(guardian)
            await session.flush()
            audit(session, entity="guardian", entity_id=guardian.id, action="created",
                  actor=actor, at=utcnow(), school_id=school_id)
            if card_value is not None or qr_value is not None:
                await attach(session, school_id=school_id, holder_kind=SubjectKind.GUARDIAN,
                             holder_id=guardian.id, card_value=card_value, qr_value=qr_value,
                             at=utcnow())
        return guardian

    async def update_student(self, *, student_id: int, revision: int,
                             changes: dict[str, Any], actor: str) -> Student:
        """Rename a student or set its registration (the board's state version is untouched)."""
        async with self._sessions() as session, session.begin():
            current = await session.get(Student, student_id)
            if current is None:
                raise not_found("Student", student_id)
            if "registration" in changes:
                await registration_free(session, current.school_id, changes["registration"],
                                        student_id)
            student = await revise(session, Student, student_id, revision, changes, "Student")
            audit(session, entity="student", entity_id=student_id, action="updated",
                  actor=actor, at=utcnow(), school_id=student.school_id, fields=sorted(changes))
        return student

    async def update_guardian(self, *, guardian_id: int, revision: int,
                              changes: dict[str, Any], actor: str) -> Guardian:
        """Change a guardian's name, contact or CPF."""
        if changes.get("cpf") is not None:
            changes = {**changes, "cpf": valid_cpf(changes["cpf"])}
        async with self._sessions() as session, session.begin():
            await cpf_free(session, changes.get("cpf"), guardian_id)
            guardian = await revise(session, Guardian, guardian_id, revision, changes,
                                    "Guardian")
            audit(session, entity="guardian", entity_id=guardian_id, action="updated",
                  actor=actor, at=utcnow(), school_id=guardian.school_id,
                  fields=sorted(changes))
        return guardian

    async def update_link(self, *, link_id: int, revision: int, changes: dict[str, Any],
                          actor: str) -> GuardianLink:
        """Change a link's kind or window (`StudentRosterChanged` for the guardian's app); the
        guardian's turnstile window at the school follows."""
        now = utcnow()
        async with self._sessions() as session, session.begin():
            link = await session.get(GuardianLink, link_id)
            if link is None:
                raise not_found("Link", link_id)
            merged = {"kind": link.kind, "valid_from": link.valid_from,
                      "valid_until": link.valid_until, **changes}
            check_link_window(merged["kind"], merged["valid_from"], merged["valid_until"])
            link = await revise(session, GuardianLink, link_id, revision, changes, "Link")
            student = await session.get(Student, link.student_id)
            broadcast_roster(session, school_id=student.school_id, student_id=link.student_id,
                             guardian_id=link.guardian_id, at=now, reason="link-changed",
                             link_id=link_id)
            audit(session, entity="guardian_link", entity_id=link_id, action="updated",
                  actor=actor, at=now, school_id=student.school_id, to_state=link.kind,
                  fields=sorted(changes))
            synced = await sync_guardian(session, guardian_id=link.guardian_id,
                                         school_id=student.school_id, at=now)
        await self._kick({student.school_id} if synced else set())
        return link

    async def delete_student(self, *, student_id: int, actor: str) -> None:
        """Delete a student that is AT_SCHOOL with no links, authorized persons or releases.

        AWAITING / READY are live (READY is a credential on the turnstile); links and
        authorizations are deleted first, each with its own effects.
        """
        async with self._sessions() as session, session.begin():
            student = await session.get(Student, student_id)
            if student is None:
                raise not_found("Student", student_id)
            if student.state not in (PickupState.AT_SCHOOL, PickupState.PICKED_UP):
                raise pickup_error(PickupErrorCode.IN_USE,
                                   f"Student {student_id} is {student.state}; finish that first.")
            for column, what in ((GuardianLink.student_id, "links"),
                                 (AuthorizedPerson.student_id, "authorized persons"),
                                 (EarlyRelease.student_id, "early releases")):
                if await _count(session, column, student_id):
                    raise pickup_error(PickupErrorCode.IN_USE, f"Student {student_id} still "
                                                               f"has {what}; delete them first.")
            # Closed arrival signals are history the audit already holds.
            await session.exec(delete(Arrival).where(Arrival.student_id == student_id))
            await drop_credentials(session, holder_kind=SubjectKind.STUDENT,
                                   holder_id=student_id)
            await session.exec(delete(Student).where(Student.id == student_id))
            audit(session, entity="student", entity_id=student_id, action="deleted",
                  actor=actor, at=utcnow(), school_id=student.school_id,
                  from_state=student.state, name=student.name)

    async def delete_guardian(self, *, guardian_id: int, actor: str) -> None:
        """Delete a guardian with no links left; its tokens (page sessions too) and sign-in
        links go with it, and whatever the turnstiles still hold of its credentials is
        revoked."""
        async with self._sessions() as session, session.begin():
            guardian = await session.get(Guardian, guardian_id)
            if guardian is None:
                raise not_found("Guardian", guardian_id)
            if await _count(session, GuardianLink.guardian_id, guardian_id):
                raise pickup_error(PickupErrorCode.IN_USE, f"Guardian {guardian_id} still has "
                                                           "links; delete them first.")
            await session.exec(delete(AccessToken).where(
                AccessToken.guardian_id == guardian_id))
            await forget_links(session, guardian_id)
            await session.exec(update(Arrival).where(Arrival.guardian_id == guardian_id)
                               .values(guardian_id=None))
            # Revoke before the rows go: the revocation names the values the credential held.
            synced = await sync_guardian_everywhere(session, guardian_id=guardian_id,
                                                    at=utcnow(), gone=True)
            await session.exec(delete(Guardian).where(Guardian.id == guardian_id))
            await drop_credentials(session, holder_kind=SubjectKind.GUARDIAN,
                                   holder_id=guardian_id)
            audit(session, entity="guardian", entity_id=guardian_id, action="deleted",
                  actor=actor, at=utcnow(), school_id=guardian.school_id, name=guardian.name)
        await self._kick(synced)

    async def delete_link(self, *, link_id: int, actor: str) -> None:
        """Unlink (`StudentRosterChanged`: the guardian's app drops the student); the last link
        to a school's students revokes the guardian's credential on its turnstile."""
        now = utcnow()
        async with self._sessions() as session, session.begin():
            link = await session.get(GuardianLink, link_id)
            if link is None:
                raise not_found("Link", link_id)
            student = await session.get(Student, link.student_id)
            await session.exec(delete(GuardianLink).where(GuardianLink.id == link_id))
            broadcast_roster(session, school_id=student.school_id, student_id=link.student_id,
                             guardian_id=link.guardian_id, at=now, reason="link-removed",
                             link_id=link_id)
            audit(session, entity="guardian_link", entity_id=link_id, action="deleted",
                  actor=actor, at=now, school_id=student.school_id, from_state=link.kind,
                  student_id=link.student_id, guardian_id=link.guardian_id)
            synced = await sync_guardian(session, guardian_id=link.guardian_id,
                                         school_id=student.school_id, at=now)
        await self._kick({student.school_id} if synced else set())

    async def _kick(self, controllers: set[int]) -> None:
        """Wake the drains of controllers that got ledger entries (after the commit)."""
        if controllers:
            await self._kicker.drains(controllers)
