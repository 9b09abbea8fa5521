"""A READY student's live exit credential: the student's own card / QR code on the exit rule.

A Control iD controller identifies whoever presents a card or a QR code (never a typed
registration), so the grant carries the student's credential at the school, windowed to the
READY episode, and every revocation names exactly the values the last grant put there (read
back from the ledger, so a credential changed in between is still revoked as granted).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any
from uuid import uuid4

from sqlmodel import func, select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup.contracts.board import LedgerCommand, LedgerStatus, SubjectKind
from activities.pickup.credentials import credential_of
from activities.pickup.models import Credential, LedgerEntry, Student
from activities.pickup.records import enqueue_ledger, student_registration
from shared.db.models import as_utc

S = SubjectKind.STUDENT
# The device drops the exit credential on its own this long after the READY timeout, in
# case our revocation is stuck (Control iD `users.end_time`); it also opens this much before
# READY, so a controller whose clock runs a little behind still reads it.
DEVICE_GRACE = timedelta(minutes=5)


async def grant_exit(session: AsyncSession, student: Student, *, at: datetime,
                     until: datetime, key: str) -> bool:
    """Queue the grant of the student's card / QR code up to `until` (+ grace); False when
    the student holds none (nothing a controller could read: staff confirm the pickup)."""
    credential = await credential_of(session, school_id=student.school_id, holder_kind=S,
                                     holder_id=student.id)
    if credential is None or (credential.card_value is None and credential.qr_value is None):
        return False
    enqueue_ledger(session, controller=student.school_id, command=LedgerCommand.GRANT,
                   subject_kind=S, subject_id=student.id,
                   registration=student_registration(student.id), name=student.name,
                   begin_time=int((at - DEVICE_GRACE).timestamp()),
                   end_time=int((until + DEVICE_GRACE).timestamp()),
                   card_value=credential.card_value, qr_value=credential.qr_value, at=at,
                   key=key)
    return True


async def held_exits(session: AsyncSession, student_ids: list[int]) -> dict[int, LedgerEntry]:
    """The last grant of each student whose last ledger entry is a grant (still on the device
    or on its way there)."""
    if not student_ids:
        return {}
    last = (select(func.max(LedgerEntry.id))
            .where(LedgerEntry.subject_kind == S, LedgerEntry.subject_id.in_(student_ids))
            .group_by(LedgerEntry.subject_id, LedgerEntry.controller))
    rows = (await session.exec(select(LedgerEntry).where(LedgerEntry.id.in_(last)))).all()
    return {row.subject_id: row for row in rows if row.command == LedgerCommand.GRANT}


def revoke_row(grant: LedgerEntry, *, at: datetime, key: str, card_value: Any = ...,
               qr_value: Any = ...) -> dict[str, Any]:
    """The ledger row revoking what `grant` put on the device (or only the values named)."""
    return {"controller": grant.controller, "command": LedgerCommand.REVOKE,
            "subject_kind": S, "subject_id": grant.subject_id,
            "registration": grant.registration, "name": "", "begin_time": 0, "end_time": 0,
            "card_value": grant.card_value if card_value is ... else card_value,
            "qr_value": grant.qr_value if qr_value is ... else qr_value,
            "status": LedgerStatus.PENDING, "attempts": 0, "created_at": at,
            "idempotency_key": key}


async def revoke_exit(session: AsyncSession, student: Student, *, at: datetime,
                      key: str) -> bool:
    """Queue the revocation of exactly the credential the student's last grant holds;
    False when nothing is granted."""
    grant = (await held_exits(session, [student.id])).get(student.id)
    if grant is None:
        return False
    session.add(LedgerEntry(**revoke_row(grant, at=at, key=key)))
    return True


async def swap_exit(session: AsyncSession, student: Student, new: Credential, at: datetime,
                    ready_timeout: timedelta) -> None:
    """A READY student's exit grant moves to the new values, within the same READY window."""
    change = uuid4().hex  # one key per swap: each swap is its own pair of commands
    held = (await held_exits(session, [student.id])).get(student.id)
    if held is not None:
        gone_card = held.card_value if held.card_value != new.card_value else None
        gone_qr = held.qr_value if held.qr_value != new.qr_value else None
        if gone_card is not None or gone_qr is not None:
            session.add(LedgerEntry(**revoke_row(
                held, at=at, key=f"revoke:student:{student.id}:{change}",
                card_value=gone_card, qr_value=gone_qr)))
    await grant_exit(session, student, at=as_utc(student.state_since),
                     until=as_utc(student.state_since) + ready_timeout,
                     key=f"grant:student:{student.id}:{change}")
