"""The rules a record edit checks in its transaction: revisions, link windows, unique keys."""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypeVar

from sqlmodel import select, update
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup.contracts.board import Kind, PickupErrorCode
from activities.pickup.errors import not_found, pickup_error
from activities.pickup.models import Guardian, GuardianLink, Student
from activities.pickup.roster_csv import CpfError, normalize_cpf
from shared.errors import ErrorCode, EsteiraError

# The records whose edits are guarded by a `revision`.
Revised = TypeVar("Revised", Student, Guardian, GuardianLink)


async def revise(session: AsyncSession, model: type[Revised], ident: int, revision: int,
                 values: dict[str, Any], what: str) -> Revised:
    """Apply `values` only if the row is still at `revision` (409 version-conflict if not)."""
    row = await session.get(model, ident)
    if row is None:
        raise not_found(what, ident)
    result = await session.exec(update(model).where(
        model.id == ident, model.revision == revision).values(
        **values, revision=model.revision + 1))
    if result.rowcount != 1:
        raise pickup_error(PickupErrorCode.VERSION_CONFLICT,
                           f"{what} {ident} changed; reload it (revision {revision}).")
    await session.refresh(row)
    return row


def check_link_window(kind: str, valid_from: datetime | None,
                      valid_until: datetime | None) -> None:
    """Permanent links carry no dates; temporary ones end after they start."""
    if kind == Kind.PERMANENT and (valid_from or valid_until):
        raise pickup_error(PickupErrorCode.INVALID_VALIDITY, "A permanent link has no dates.")
    if kind == Kind.TEMPORARY and (
            valid_until is None or (valid_from is not None and valid_from >= valid_until)):
        raise pickup_error(PickupErrorCode.INVALID_VALIDITY,
                           "A temporary link needs validUntil after validFrom.")


def check_person_window(kind: str, valid_from: datetime | None,
                        valid_until: datetime | None) -> None:
    """Temporary authorizations end at `valid_until`; permanent ones carry no dates."""
    dated = valid_from is not None or valid_until is not None
    if (kind == Kind.PERMANENT and dated) or (kind == Kind.TEMPORARY and valid_until is None):
        raise pickup_error(PickupErrorCode.INVALID_VALIDITY,
                           "Temporary authorizations need validUntil; permanent ones no dates.")


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
