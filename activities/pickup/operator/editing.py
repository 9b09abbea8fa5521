"""Edits and deletions of students, guardians and links: a CAS on `revision`, audited."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import delete, func, select, update
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup.contracts.board import Kind, PickupErrorCode, PickupState, SubjectKind
from activities.pickup.credentials import drop_credentials
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
    Student,
)
from activities.pickup.records import audit, broadcast_roster
from activities.pickup.roster_csv import CpfError, normalize_cpf
from shared.db.models import utcnow
from shared.errors import ErrorCode, EsteiraError

Sessions = async_sessionmaker[AsyncSession]


async def revise(session: AsyncSession, model: type, ident: int, revision: int,
                 values: dict[str, Any], what: str) -> Any:
    """Apply `values` only if the row is still at `revision` (409 version-conflict if not)."""
    if await session.get(model, ident) is None:
        raise not_found(what, ident)
    result = await session.exec(update(model).where(
        model.id == ident, model.revision == revision).values(
        **values, revision=model.revision + 1))
    if result.rowcount != 1:
        raise pickup_error(PickupErrorCode.VERSION_CONFLICT,
                           f"{what} {ident} changed; reload it (revision {revision}).")
    return await session.get(model, ident, populate_existing=True)


def check_link_window(kind: str, valid_from: datetime | None,
                      valid_until: datetime | None) -> None:
    """Permanent links carry no dates; temporary ones end after they start."""
    if kind == Kind.PERMANENT and (valid_from or valid_until):
        raise pickup_error(PickupErrorCode.INVALID_VALIDITY, "A permanent link has no dates.")
    if kind == Kind.TEMPORARY and (
            valid_until is None or (valid_from is not None and valid_from >= valid_until)):
        raise pickup_error(PickupErrorCode.INVALID_VALIDITY,
                           "A temporary link needs valid_until after valid_from.")


def valid_cpf(raw: str) -> str:
    """The CPF's 11 digits, or 422 request.invalid."""
    try:
        return normalize_cpf(raw)
    except CpfError as exc:
        raise EsteiraError(ErrorCode.REQUEST_INVALID, str(exc)) from None


async def registration_free(session: AsyncSession, school_id: int, registration: str | None,
                            student_id: int | None = None) -> None:
    """409 if another student of the school already has this registration."""
    if registration is None:
        return
    other = (await session.exec(select(Student.id).where(
        Student.school_id == school_id, Student.registration == registration))).first()
    if other is not None and other != student_id:
        raise pickup_error(PickupErrorCode.STATUS_CONFLICT,
                           f"Registration {registration} belongs to student {other}.")


async def cpf_free(session: AsyncSession, cpf: str | None, guardian_id: int | None = None
                   ) -> None:
    """409 if another guardian already has this CPF."""
    if cpf is None:
        return
    other = (await session.exec(select(Guardian.id).where(Guardian.cpf == cpf))).first()
    if other is not None and other != guardian_id:
        raise pickup_error(PickupErrorCode.STATUS_CONFLICT,
                           f"That CPF belongs to guardian {other}.")


async def update_student(sessions: Sessions, *, student_id: int, revision: int,
                         changes: dict[str, Any], actor: str) -> Student:
    """Rename a student or set its registration (the board's state version is untouched)."""
    async with sessions() as session, session.begin():
        current = await session.get(Student, student_id)
        if current is None:
            raise not_found("Student", student_id)
        if "registration" in changes:
            await registration_free(session, current.school_id, changes["registration"],
                                    student_id)
        student = await revise(session, Student, student_id, revision, changes, "Student")
        audit(session, entity="student", entity_id=student_id, action="updated", actor=actor,
              at=utcnow(), school_id=student.school_id, fields=sorted(changes))
    return student


async def update_guardian(sessions: Sessions, *, guardian_id: int, revision: int,
                          changes: dict[str, Any], actor: str) -> Guardian:
    """Change a guardian's name, contact or CPF."""
    if changes.get("cpf") is not None:
        changes = {**changes, "cpf": valid_cpf(changes["cpf"])}
    async with sessions() as session, session.begin():
        await cpf_free(session, changes.get("cpf"), guardian_id)
        guardian = await revise(session, Guardian, guardian_id, revision, changes, "Guardian")
        audit(session, entity="guardian", entity_id=guardian_id, action="updated", actor=actor,
              at=utcnow(), school_id=guardian.school_id, fields=sorted(changes))
    return guardian


async def update_link(sessions: Sessions, *, link_id: int, revision: int,
                      changes: dict[str, Any], actor: str,
                      kicker: Kicker | None = None) -> GuardianLink:
    """Change a link's kind or window (`StudentRosterChanged` for the guardian's app); the
    guardian's turnstile window at the school follows."""
    now = utcnow()
    async with sessions() as session, session.begin():
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
    await _kick(kicker, {student.school_id} if synced else set())
    return link


async def _kick(kicker: Kicker | None, controllers: set[int]) -> None:
    """Wake the drains of controllers that got ledger entries (after the commit)."""
    if kicker is not None and controllers:
        await kicker.drains(controllers)


async def _count(session: AsyncSession, column, value: int) -> int:
    return (await session.exec(select(func.count()).where(column == value))).one()


async def delete_student(sessions: Sessions, *, student_id: int, actor: str) -> None:
    """Delete a student that is AT_SCHOOL with no links, authorized persons or releases.

    AWAITING / READY are live (READY is a credential on the turnstile); links and
    authorizations are deleted first, each with its own effects.
    """
    async with sessions() as session, session.begin():
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
                raise pickup_error(PickupErrorCode.IN_USE,
                                   f"Student {student_id} still has {what}; delete them first.")
        # Closed arrival signals are history the audit already holds.
        await session.exec(delete(Arrival).where(Arrival.student_id == student_id))
        await drop_credentials(session, holder_kind=SubjectKind.STUDENT, holder_id=student_id)
        await session.exec(delete(Student).where(Student.id == student_id))
        audit(session, entity="student", entity_id=student_id, action="deleted", actor=actor,
              at=utcnow(), school_id=student.school_id, from_state=student.state,
              name=student.name)


async def delete_guardian(sessions: Sessions, *, guardian_id: int, actor: str,
                          kicker: Kicker | None = None) -> None:
    """Delete a guardian with no links left; its app tokens go with it, and whatever the
    turnstiles still hold of its credentials is revoked."""
    async with sessions() as session, session.begin():
        guardian = await session.get(Guardian, guardian_id)
        if guardian is None:
            raise not_found("Guardian", guardian_id)
        if await _count(session, GuardianLink.guardian_id, guardian_id):
            raise pickup_error(PickupErrorCode.IN_USE,
                               f"Guardian {guardian_id} still has links; delete them first.")
        await session.exec(delete(AccessToken).where(AccessToken.guardian_id == guardian_id))
        await forget_links(session, guardian_id)
        await session.exec(update(Arrival).where(Arrival.guardian_id == guardian_id)
                           .values(guardian_id=None))
        # Revoke before the rows go: the revocation names the values the credential held.
        synced = await sync_guardian_everywhere(session, guardian_id=guardian_id, at=utcnow(),
                                                gone=True)
        await session.exec(delete(Guardian).where(Guardian.id == guardian_id))
        await drop_credentials(session, holder_kind=SubjectKind.GUARDIAN, holder_id=guardian_id)
        audit(session, entity="guardian", entity_id=guardian_id, action="deleted",
              actor=actor, at=utcnow(), school_id=guardian.school_id, name=guardian.name)
    await _kick(kicker, synced)


async def delete_link(sessions: Sessions, *, link_id: int, actor: str,
                      kicker: Kicker | None = None) -> None:
    """Unlink (`StudentRosterChanged`: the guardian's app drops the student); the last link
    to a school's students revokes the guardian's credential on its turnstile."""
    now = utcnow()
    async with sessions() as session, session.begin():
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
    await _kick(kicker, {student.school_id} if synced else set())
