"""Set-based versions of the two board sweeps: one CAS statement per batch, same effects.

The per-student functions in `board.py` (used by the timers and the API) and these write the
same rows: revocation, notifications, broadcast and audit per reverted student.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import tuple_
from sqlmodel import select, update
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup.contracts.board import (
    ARRIVAL_TIMEOUT_REASON,
    READY_TIMEOUT_REASON,
    ArrivalStatus,
    PickupState,
)
from activities.pickup.exit_grant import held_exits, revoke_row
from activities.pickup.models import (
    Arrival,
    AuditEntry,
    BoardEvent,
    GuardianLink,
    LedgerEntry,
    Notification,
    Student,
)
from activities.pickup.records import bulk_insert, state_event_row, valid_link


@dataclass
class Batch:
    """What one batch looked at and changed."""

    examined: int = 0
    changed: int = 0
    skipped: int = 0
    reverted: int = 0
    notifications: int = 0
    controllers: set[int] = field(default_factory=set)


def _audit(student_id: int, school_id: int, version: int, previous: str, at: datetime,
           actor: str, reason: str, action: str) -> dict:
    return {"at": at, "school_id": school_id, "entity": "student", "entity_id": student_id,
            "action": action, "from_state": previous, "to_state": PickupState.AT_SCHOOL,
            "reason": reason, "actor": actor, "details": {"version": version,
                                                          "origin": "timeout"}}


async def _cas_to_school(session: AsyncSession, pairs: list[tuple[int, int]], *,
                         previous: PickupState, at: datetime, reason: str,
                         cutoff: datetime | None = None) -> list:
    """The batch CAS: only rows still at (id, version) and `previous` move; RETURNING them."""
    conditions = [tuple_(Student.id, Student.version).in_(pairs), Student.state == previous]
    if cutoff is not None:
        conditions.append(Student.state_since <= cutoff)
    result = await session.exec(
        update(Student).where(*conditions)
        .values(state=PickupState.AT_SCHOOL, version=Student.version + 1, state_since=at,
                state_reason=reason, arrival_id=None)
        .returning(Student.id, Student.version, Student.school_id, Student.name))
    return sorted(result.all())


async def revert_ready_batch(session: AsyncSession, *, cutoff: datetime, at: datetime,
                             actor: str, limit: int) -> Batch:
    """READY since before `cutoff` -> AT_SCHOOL; a row whose version moved is skipped."""
    # No ORDER BY: the (state, state_since) index hands out the first `limit` rows at once.
    pairs = sorted(tuple(row) for row in (await session.exec(
        select(Student.id, Student.version)
        .where(Student.state == PickupState.READY, Student.state_since <= cutoff)
        .limit(limit))).all())
    if not pairs:
        return Batch()
    moved = await _cas_to_school(session, pairs, previous=PickupState.READY, at=at,
                                 reason=READY_TIMEOUT_REASON, cutoff=cutoff)
    out = Batch(examined=len(pairs), changed=len(moved), skipped=len(pairs) - len(moved),
                reverted=len(moved))
    guardians: dict[int, list[int]] = {}
    if moved:
        links = await session.exec(select(GuardianLink.student_id, GuardianLink.guardian_id)
                                   .where(GuardianLink.student_id.in_([m[0] for m in moved]),
                                          valid_link(at)))
        for student_id, guardian_id in links.all():
            guardians.setdefault(student_id, []).append(guardian_id)
    ledger, notes, events, audits = [], [], [], []
    held = await held_exits(session, [m[0] for m in moved])
    for student_id, version, school_id, name in moved:
        out.controllers.add(school_id)
        if student_id in held:
            ledger.append(revoke_row(held[student_id], at=at,
                                     key=f"revoke:student:{student_id}:{version}"))
        for guardian_id in sorted(guardians.get(student_id, [])):
            notes.append({"guardian_id": guardian_id, "student_id": student_id,
                          "kind": "pickup-reverted", "status": "pending", "attempts": 0,
                          "message": f"A retirada de {name} foi revertida: "
                                     f"{READY_TIMEOUT_REASON}.", "created_at": at,
                          "idempotency_key": f"ready-timeout:{student_id}:{version}:{guardian_id}"})
        events.append(state_event_row(student_id=student_id, school_id=school_id, name=name,
                                      previous=PickupState.READY, state=PickupState.AT_SCHOOL,
                                      version=version, at=at, reason=READY_TIMEOUT_REASON,
                                      origin="timeout"))
        audits.append(_audit(student_id, school_id, version, PickupState.READY, at, actor,
                             READY_TIMEOUT_REASON, "ready-reverted"))
    await bulk_insert(session, LedgerEntry, ledger)
    await bulk_insert(session, Notification, notes)
    await bulk_insert(session, BoardEvent, events)
    await bulk_insert(session, AuditEntry, audits)
    out.notifications = len(notes)
    return out


async def expire_arrivals_batch(session: AsyncSession, *, cutoff: datetime, at: datetime,
                                actor: str, limit: int) -> Batch:
    """Close open arrival signals that expired by `cutoff`; revert students still AWAITING."""
    ids = list((await session.exec(
        select(Arrival.id).where(Arrival.status == ArrivalStatus.OPEN,
                                 Arrival.expires_at <= cutoff)
        .limit(limit))).all())
    if not ids:
        return Batch()
    closed = (await session.exec(
        update(Arrival).where(Arrival.id.in_(ids), Arrival.status == ArrivalStatus.OPEN,
                              Arrival.expires_at <= cutoff)
        .values(status=ArrivalStatus.EXPIRED, closed_at=at)
        .returning(Arrival.id, Arrival.school_id))).all()
    audits = [{"at": at, "school_id": school_id, "entity": "arrival", "entity_id": arrival_id,
               "action": "arrival-expired", "from_state": ArrivalStatus.OPEN,
               "to_state": ArrivalStatus.EXPIRED, "reason": ARRIVAL_TIMEOUT_REASON,
               "actor": actor, "details": {}} for arrival_id, school_id in closed]
    pairs = [tuple(row) for row in (await session.exec(
        select(Student.id, Student.version).where(
            Student.arrival_id.in_([c[0] for c in closed]),
            Student.state == PickupState.AWAITING))).all()]
    moved = await _cas_to_school(session, pairs, previous=PickupState.AWAITING, at=at,
                                 reason=ARRIVAL_TIMEOUT_REASON) if pairs else []
    events = []
    for student_id, version, school_id, name in moved:
        events.append(state_event_row(student_id=student_id, school_id=school_id, name=name,
                                      previous=PickupState.AWAITING, state=PickupState.AT_SCHOOL,
                                      version=version, at=at, reason=ARRIVAL_TIMEOUT_REASON,
                                      origin="timeout"))
        audits.append(_audit(student_id, school_id, version, PickupState.AWAITING, at, actor,
                             ARRIVAL_TIMEOUT_REASON, "awaiting-reverted"))
    await bulk_insert(session, BoardEvent, events)
    await bulk_insert(session, AuditEntry, audits)
    return Batch(examined=len(ids), changed=len(closed), skipped=len(pairs) - len(moved),
                 reverted=len(moved))
