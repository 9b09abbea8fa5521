"""The pickup state machine: AT_SCHOOL -> AWAITING -> READY -> PICKED_UP, each a CAS on version."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlmodel import update
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup import guardian_notices
from activities.pickup.contracts.board import (
    ARRIVAL_TIMEOUT_REASON,
    READY_TIMEOUT_REASON,
    ArrivalStatus,
    PickupErrorCode,
    PickupState,
    TimerInput,
    TimerKind,
)
from activities.pickup.errors import not_found, pickup_error
from activities.pickup.exit_grant import grant_exit, revoke_exit
from activities.pickup.models import Arrival, School, Student
from activities.pickup.records import audit, broadcast_state, notify_guardians

_KEEP = object()
# The reason of an operator's READY -> PICKED_UP: only that pickup can be undone.
PICKED_UP_BY_OPERATOR = "retirado"
UNDO_REASON = "desfeito"


@dataclass
class Transition:
    """A committed-with-the-caller change and the work it leaves for Temporal."""

    student: Student
    timers: list[TimerInput] = field(default_factory=list)
    controllers: set[int] = field(default_factory=set)
    notifications: int = 0
    reverted: bool = False


async def _cas(session: AsyncSession, student_id: int, *, from_state: PickupState, version: int,
               to_state: PickupState, at: datetime, reason: str | None,
               arrival_id: object = _KEEP, since_before: datetime | None = None
               ) -> Student | None:
    """The conditional update; None when another writer moved the student first."""
    conditions = [Student.id == student_id, Student.state == from_state,
                  Student.version == version]
    if since_before is not None:
        conditions.append(Student.state_since <= since_before)
    values: dict[str, object] = {"state": to_state, "version": Student.version + 1,
                                 "state_since": at, "state_reason": reason}
    if arrival_id is not _KEEP:
        values["arrival_id"] = arrival_id
    result = await session.exec(update(Student).where(*conditions).values(**values))
    if result.rowcount != 1:
        return None
    return await session.get(Student, student_id, populate_existing=True)


async def _conflict(session: AsyncSession, student_id: int, expected: PickupState,
                    version: int | None) -> Exception:
    current = await session.get(Student, student_id, populate_existing=True)
    if current is None:
        return not_found("Student", student_id)
    if current.state == expected and version is not None and current.version != version:
        return pickup_error(PickupErrorCode.VERSION_CONFLICT,
                            f"Student {student_id} is at version {current.version}, not {version}.")
    return pickup_error(PickupErrorCode.INVALID_TRANSITION,
                        f"Student {student_id} is {current.state}, not {expected}.")


def _record(session: AsyncSession, student: Student, *, previous: str, at: datetime,
            actor: str, reason: str | None, origin: str, action: str, **details: object) -> None:
    audit(session, entity="student", entity_id=student.id, action=action, actor=actor, at=at,
          school_id=student.school_id, from_state=previous, to_state=student.state,
          reason=reason, version=student.version, origin=origin, **details)
    broadcast_state(session, student, previous=previous, at=at, reason=reason, origin=origin)


async def signal_arrival(session: AsyncSession, *, student_id: int, guardian_id: int | None,
                         at: datetime, actor: str) -> Transition:
    """"I'm arriving": AT_SCHOOL -> AWAITING with an arrival signal timed by the school."""
    student = await session.get(Student, student_id)
    if student is None:
        raise not_found("Student", student_id)
    if student.state == PickupState.AWAITING:
        return Transition(student)  # a repeated tap changes nothing
    school = await session.get(School, student.school_id)
    arrival = Arrival(school_id=student.school_id, student_id=student_id, guardian_id=guardian_id,
                      created_at=at,
                      expires_at=at + timedelta(minutes=school.arrival_timeout_minutes))
    session.add(arrival)
    await session.flush()
    updated = await _cas(session, student_id, from_state=PickupState.AT_SCHOOL,
                         version=student.version, to_state=PickupState.AWAITING, at=at,
                         reason="estou chegando", arrival_id=arrival.id)
    if updated is None:
        raise await _conflict(session, student_id, PickupState.AT_SCHOOL, None)
    _record(session, updated, previous=PickupState.AT_SCHOOL, at=at, actor=actor,
            reason="estou chegando", origin="guardian", action="arrival-signalled")
    timer = TimerInput(kind=TimerKind.ARRIVAL, entity_id=arrival.id, deadline=arrival.expires_at,
                       school_id=student.school_id, student_id=student_id)
    sent = await guardian_notices.arrival_acknowledged(session, updated, at)
    return Transition(updated, timers=[timer], notifications=sent)


async def mark_ready(session: AsyncSession, *, student_id: int, version: int, at: datetime,
                     actor: str, ready_timeout: timedelta) -> Transition:
    """AWAITING -> READY: the student gets a live exit credential on the turnstile."""
    updated = await _cas(session, student_id, from_state=PickupState.AWAITING, version=version,
                         to_state=PickupState.READY, at=at, reason="pronto")
    if updated is None:
        raise await _conflict(session, student_id, PickupState.AWAITING, version)
    if updated.arrival_id is not None:
        await session.exec(update(Arrival).where(
            Arrival.id == updated.arrival_id, Arrival.status == ArrivalStatus.OPEN,
        ).values(status=ArrivalStatus.COMPLETED, closed_at=at))
    timer, granted = await _grant_exit(session, updated, at=at, ready_timeout=ready_timeout)
    _record(session, updated, previous=PickupState.AWAITING, at=at, actor=actor, reason="pronto",
            origin="operator", action="ready", exit_credential=granted)
    sent = await guardian_notices.ready(session, updated, at)
    return Transition(updated, timers=[timer], controllers={updated.school_id},
                      notifications=sent)


async def _grant_exit(session: AsyncSession, student: Student, *, at: datetime,
                      ready_timeout: timedelta) -> tuple[TimerInput, bool]:
    """The READY episode's exit credential in the ledger (if the student holds one), and
    the timer that ends the episode."""
    granted = await grant_exit(session, student, at=at, until=at + ready_timeout,
                               key=f"grant:student:{student.id}:{student.version}")
    return TimerInput(kind=TimerKind.READY, entity_id=student.id, version=student.version,
                      deadline=at + ready_timeout, school_id=student.school_id,
                      student_id=student.id), granted


async def confirm_pickup(session: AsyncSession, *, student_id: int, version: int | None,
                         at: datetime, actor: str, origin: str) -> Transition:
    """READY -> PICKED_UP, by the operator or by the turnstile's exit event."""
    if version is None:
        current = await session.get(Student, student_id)
        if current is None:
            raise not_found("Student", student_id)
        version = current.version
    reason = PICKED_UP_BY_OPERATOR if origin == "operator" else "saída na catraca"
    updated = await _cas(session, student_id, from_state=PickupState.READY, version=version,
                         to_state=PickupState.PICKED_UP, at=at, reason=reason)
    if updated is None:
        raise await _conflict(session, student_id, PickupState.READY, version)
    # The exit credential is one-shot: take it off the device once used.
    await revoke_exit(session, updated, at=at,
                      key=f"revoke:student:{student_id}:{updated.version}")
    _record(session, updated, previous=PickupState.READY, at=at, actor=actor, reason=reason,
            origin=origin, action="picked-up")
    sent = await guardian_notices.picked_up(session, updated, at, origin=origin)
    return Transition(updated, controllers={updated.school_id}, notifications=sent)


def staff_actions(state: str, reason: str | None) -> tuple[str, ...]:
    """What staff may do with a card: `ready`, `pickup`, `undo`, as the machine allows."""
    if state == PickupState.AWAITING:
        return ("ready",)
    if state == PickupState.READY:
        return ("pickup", "undo")
    if state == PickupState.PICKED_UP and reason == PICKED_UP_BY_OPERATOR:
        return ("undo",)
    return ()


async def undo(session: AsyncSession, *, student_id: int, version: int, at: datetime,
               actor: str, ready_timeout: timedelta) -> Transition:
    """Staff's "Desfazer": READY -> AWAITING (grant revoked, arrival signal reopened), or an
    operator's PICKED_UP -> READY (a new grant and READY timer). A turnstile exit is final."""
    current = await session.get(Student, student_id)
    if current is None:
        raise not_found("Student", student_id)
    if "undo" not in staff_actions(current.state, current.state_reason):
        if current.version != version:
            raise pickup_error(PickupErrorCode.VERSION_CONFLICT,
                               f"Student {student_id} is at version {current.version}, "
                               f"not {version}.")
        raise pickup_error(PickupErrorCode.INVALID_TRANSITION,
                           f"Student {student_id} is {current.state} "
                           f"({current.state_reason or 'no reason'}): nothing to undo.")
    previous = PickupState(current.state)
    back = PickupState.AWAITING if previous == PickupState.READY else PickupState.READY
    updated = await _cas(session, student_id, from_state=previous, version=version,
                         to_state=back, at=at, reason=UNDO_REASON)
    if updated is None:
        raise await _conflict(session, student_id, previous, version)
    change = Transition(updated, controllers={updated.school_id})
    if back == PickupState.READY:
        timer, _ = await _grant_exit(session, updated, at=at, ready_timeout=ready_timeout)
        change.timers.append(timer)
    else:
        await revoke_exit(session, updated, at=at,
                          key=f"revoke:student:{student_id}:{updated.version}")
        change.timers.extend(await _reopen_arrival(session, updated, at=at, actor=actor))
    _record(session, updated, previous=previous, at=at, actor=actor, reason=UNDO_REASON,
            origin="operator",
            action="ready-undone" if back == PickupState.AWAITING else "pickup-undone")
    return change


async def _reopen_arrival(session: AsyncSession, student: Student, *, at: datetime,
                          actor: str) -> list[TimerInput]:
    """The arrival signal READY completed is open again, under its own (maybe past) deadline:
    its timer or the arrival sweep closes it, so the card can't hang in AWAITING."""
    if student.arrival_id is None:
        return []
    reopened = await session.exec(update(Arrival).where(
        Arrival.id == student.arrival_id, Arrival.status == ArrivalStatus.COMPLETED,
    ).values(status=ArrivalStatus.OPEN, closed_at=None))
    if reopened.rowcount != 1:
        return []
    arrival = await session.get(Arrival, student.arrival_id, populate_existing=True)
    audit(session, entity="arrival", entity_id=arrival.id, action="arrival-reopened",
          actor=actor, at=at, school_id=arrival.school_id,
          from_state=ArrivalStatus.COMPLETED, to_state=ArrivalStatus.OPEN, reason=UNDO_REASON)
    return [TimerInput(kind=TimerKind.ARRIVAL, entity_id=arrival.id, deadline=arrival.expires_at,
                       school_id=student.school_id, student_id=student.id)]


async def revert_ready(session: AsyncSession, *, student_id: int, version: int, at: datetime,
                       actor: str, cutoff: datetime | None = None) -> Transition | None:
    """READY past its timeout -> AT_SCHOOL; None (and no effect at all) if the pickup won."""
    updated = await _cas(session, student_id, from_state=PickupState.READY, version=version,
                         to_state=PickupState.AT_SCHOOL, at=at, reason=READY_TIMEOUT_REASON,
                         arrival_id=None, since_before=cutoff)
    if updated is None:
        return None
    await revoke_exit(session, updated, at=at,
                      key=f"revoke:student:{student_id}:{updated.version}")
    sent = await notify_guardians(
        session, updated, kind="pickup-reverted", at=at,
        message=f"A retirada de {updated.name} foi revertida: {READY_TIMEOUT_REASON}.",
        key=f"ready-timeout:{student_id}:{updated.version}")
    _record(session, updated, previous=PickupState.READY, at=at, actor=actor,
            reason=READY_TIMEOUT_REASON, origin="timeout", action="ready-reverted")
    return Transition(updated, controllers={updated.school_id}, notifications=sent)


async def expire_arrival(session: AsyncSession, *, arrival_id: int, at: datetime, actor: str,
                         cutoff: datetime | None = None) -> Transition | None:
    """Close an open arrival signal; its student goes back AT_SCHOOL if still AWAITING on it."""
    conditions = [Arrival.id == arrival_id, Arrival.status == ArrivalStatus.OPEN]
    if cutoff is not None:
        conditions.append(Arrival.expires_at <= cutoff)
    closed = await session.exec(update(Arrival).where(*conditions).values(
        status=ArrivalStatus.EXPIRED, closed_at=at))
    if closed.rowcount != 1:
        return None
    arrival = await session.get(Arrival, arrival_id, populate_existing=True)
    audit(session, entity="arrival", entity_id=arrival_id, action="arrival-expired", actor=actor,
          at=at, school_id=arrival.school_id, from_state=ArrivalStatus.OPEN,
          to_state=ArrivalStatus.EXPIRED, reason=ARRIVAL_TIMEOUT_REASON)
    student = await session.get(Student, arrival.student_id, populate_existing=True)
    if student.state != PickupState.AWAITING or student.arrival_id != arrival_id:
        return Transition(student)
    updated = await _cas(session, student.id, from_state=PickupState.AWAITING,
                         version=student.version, to_state=PickupState.AT_SCHOOL, at=at,
                         reason=ARRIVAL_TIMEOUT_REASON, arrival_id=None)
    if updated is None:
        return Transition(student)
    _record(session, updated, previous=PickupState.AWAITING, at=at, actor=actor,
            reason=ARRIVAL_TIMEOUT_REASON, origin="timeout", action="awaiting-reverted")
    return Transition(updated, reverted=True)
