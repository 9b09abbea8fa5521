"""Turnstile Monitor pushes: an exit granted to a READY student's credential is the pickup."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup.board import Transition, confirm_pickup
from activities.pickup.contracts.board import LedgerCommand, LedgerStatus, PickupState, SubjectKind
from activities.pickup.models import LedgerEntry, Student
from activities.pickup.records import audit
from shared.errors import EsteiraError

ACCESS_GRANTED = "7"


def granted_users(body: dict[str, Any]) -> list[tuple[int, int]]:
    """(access log id, device user id) of every access-granted log in a `/dao` push."""
    found = []
    for change in body.get("object_changes") or []:
        values = change.get("values") or {}
        if change.get("object") == "access_logs" and change.get("type") == "inserted" \
                and str(values.get("event")) == ACCESS_GRANTED:
            found.append((int(values.get("id") or 0), int(values.get("user_id") or 0)))
    return found


async def student_for_device_user(session: AsyncSession, controller: int,
                                  device_user: int) -> int | None:
    """The student whose confirmed exit grant created that device user."""
    return (await session.exec(
        select(LedgerEntry.subject_id).where(
            LedgerEntry.controller == controller, LedgerEntry.device_user_id == device_user,
            LedgerEntry.command == LedgerCommand.GRANT,
            LedgerEntry.status == LedgerStatus.CONFIRMED,
            LedgerEntry.subject_kind == SubjectKind.STUDENT)
        .order_by(LedgerEntry.id.desc()))).first()


async def record_exit(session: AsyncSession, *, controller: int, log_id: int, device_user: int,
                      at: datetime) -> Transition | None:
    """READY -> PICKED_UP for the exit read at the turnstile; a repeat push is a no-op."""
    student_id = await student_for_device_user(session, controller, device_user)
    if student_id is None:
        return None
    student = await session.get(Student, student_id)
    if student is None or student.state != PickupState.READY:
        audit(session, entity="student", entity_id=student_id, action="exit-ignored",
              actor=f"turnstile:{controller}", at=at, school_id=controller,
              from_state=student.state if student else None, access_log_id=log_id)
        return None
    try:
        return await confirm_pickup(session, student_id=student_id, version=student.version,
                                    at=at, actor=f"turnstile:{controller}", origin="turnstile")
    except EsteiraError:
        return None  # the timeout revert or the operator got there first
