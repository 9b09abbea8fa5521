"""The school day: every student starts it AT_SCHOOL, what was left open the day before is closed.

`start_day` is the one set-based change both doors use: the day-cycle schedule (boundary =
the start of the school's current day) and an operator closing the day by hand (boundary =
now). A student whose state predates the boundary goes back to AT_SCHOOL with a new version
and reason "novo dia letivo" (one audit row, one `StudentStateChanged`); a READY one also has
its exit grant revoked through the ledger; open arrival signals from before the boundary are
closed. Its READY / arrival timers then lose their CAS (version moved, signal not open): no-ops.
Reset students carry `state_since >= boundary`, so a second run finds nothing.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime

from sqlalchemy import exists, tuple_
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select, update
from sqlmodel.ext.asyncio.session import AsyncSession
from temporalio import activity

from activities.pickup import metrics
from activities.pickup.contracts.board import (
    DAY_START_REASON,
    ArrivalStatus,
    DayCycleResult,
    PickupState,
    RunDayCycleInput,
)
from activities.pickup.contracts.names import DAY_CYCLE_ACTIVITY
from activities.pickup.exit_grant import held_exits, revoke_row
from activities.pickup.kick import Kicker
from activities.pickup.models import Arrival, AuditEntry, BoardEvent, LedgerEntry, School, Student
from activities.pickup.records import bulk_insert, state_event_row
from activities.pickup.school_day import day_begins, school_day_of
from shared.db.models import utcnow
from shared.heartbeat import beat

log = logging.getLogger("esteira.pickup")
METRIC_LABEL = "day-cycle"


@dataclass
class DayBatch:
    """What one `start_day` call looked at and changed."""

    examined: int = 0
    changed: int = 0
    revoked: int = 0
    arrivals_closed: int = 0
    controllers: set[int] = field(default_factory=set)

    @property
    def skipped(self) -> int:
        """Students whose CAS lost to another writer."""
        return self.examined - self.changed


async def _close_arrivals(session: AsyncSession, school_ids: list[int], *, boundary: datetime,
                          at: datetime, actor: str, day: date) -> int:
    # A signal a student moved onto today (staff's undo reopening it) is today's: kept.
    today = exists().where(Student.arrival_id == Arrival.id, Student.state_since >= boundary)
    closed = (await session.exec(
        update(Arrival).where(Arrival.school_id.in_(school_ids),
                              Arrival.status == ArrivalStatus.OPEN, Arrival.created_at < boundary,
                              ~today)
        .values(status=ArrivalStatus.EXPIRED, closed_at=at)
        .returning(Arrival.id, Arrival.school_id, Arrival.student_id))).all()
    await bulk_insert(session, AuditEntry, [
        {"at": at, "school_id": school_id, "entity": "arrival", "entity_id": arrival_id,
         "action": "arrival-closed", "from_state": ArrivalStatus.OPEN,
         "to_state": ArrivalStatus.EXPIRED, "reason": DAY_START_REASON, "actor": actor,
         "details": {"student_id": student_id, "day": day.isoformat()}}
        for arrival_id, school_id, student_id in closed])
    return len(closed)


async def start_day(session: AsyncSession, *, school_ids: list[int], boundary: datetime,
                    at: datetime, actor: str, origin: str, day: date,
                    limit: int | None = None) -> DayBatch:
    """Reset (up to `limit`) students of `school_ids` whose state predates `boundary`."""
    at = max(at, boundary)  # a reset row must never look older than the boundary again
    out = DayBatch(arrivals_closed=await _close_arrivals(
        session, school_ids, boundary=boundary, at=at, actor=actor, day=day))
    query = select(Student.id, Student.version, Student.state).where(
        Student.school_id.in_(school_ids), Student.state_since < boundary)
    seen = {row[0]: (row[1], row[2]) for row in (await session.exec(
        query.limit(limit) if limit else query)).all()}
    out.examined = len(seen)
    if not seen:
        return out
    moved = sorted((await session.exec(
        update(Student).where(tuple_(Student.id, Student.version).in_(
            [(ident, version) for ident, (version, _) in seen.items()]),
            Student.state_since < boundary)
        .values(state=PickupState.AT_SCHOOL, version=Student.version + 1, state_since=at,
                state_reason=DAY_START_REASON, arrival_id=None)
        .returning(Student.id, Student.version, Student.school_id, Student.name))).all())
    out.changed = len(moved)
    ledger, events, audits = [], [], []
    held = await held_exits(session, [m[0] for m in moved
                                      if seen[m[0]][1] == PickupState.READY])
    for student_id, version, school_id, name in moved:
        previous = seen[student_id][1]
        if previous == PickupState.READY and student_id in held:
            # The live exit credential of yesterday must not survive the night.
            out.controllers.add(school_id)
            ledger.append(revoke_row(held[student_id], at=at,
                                     key=f"revoke:student:{student_id}:{version}"))
        events.append(state_event_row(student_id=student_id, school_id=school_id, name=name,
                                      previous=previous, state=PickupState.AT_SCHOOL,
                                      version=version, at=at, reason=DAY_START_REASON,
                                      origin=origin))
        audits.append({"at": at, "school_id": school_id, "entity": "student",
                       "entity_id": student_id, "action": "day-started",
                       "from_state": previous, "to_state": PickupState.AT_SCHOOL,
                       "reason": DAY_START_REASON, "actor": actor,
                       "details": {"version": version, "origin": origin,
                                   "day": day.isoformat()}})
    await bulk_insert(session, LedgerEntry, ledger)
    await bulk_insert(session, BoardEvent, events)
    await bulk_insert(session, AuditEntry, audits)
    out.revoked = len(ledger)
    return out


class DayCycle:
    """The activity the day-cycle schedule runs: start each school's day where it began."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], kicker: Kicker) -> None:
        self._sessions = sessions
        self._kicker = kicker

    async def _zones(self) -> dict[tuple[str, str], list[int]]:
        """Schools grouped by (time zone, day start): one boundary per group."""
        async with self._sessions() as session:
            rows = (await session.exec(
                select(School.id, School.time_zone, School.day_start).order_by(School.id))).all()
        groups: dict[tuple[str, str], list[int]] = defaultdict(list)
        for school_id, zone, day_start in rows:
            groups[(zone, day_start)].append(school_id)
        return groups

    @activity.defn(name=DAY_CYCLE_ACTIVITY)
    async def start_days(self, request: RunDayCycleInput) -> DayCycleResult:
        """Every school whose day began by `now`: reset what belongs to earlier days."""
        now = request.now or utcnow()
        total, schools, controllers = DayBatch(), 0, set()
        for (zone, day_start), ids in sorted((await self._zones()).items()):
            try:
                day = school_day_of(now, zone, day_start)
            except (ValueError, KeyError) as exc:  # one bad row must not stall every school
                log.error("Schools %s have an unusable day (%s %s): %s", ids, zone, day_start,
                          exc)
                continue
            boundary = day_begins(day, zone, day_start)
            schools += len(ids)
            while True:
                async with self._sessions() as session, session.begin():
                    batch = await start_day(session, school_ids=ids, boundary=boundary,
                                            at=utcnow(), actor="schedule:" + METRIC_LABEL,
                                            origin=METRIC_LABEL, day=day,
                                            limit=request.batch_size)
                total.examined += batch.examined
                total.changed += batch.changed
                total.revoked += batch.revoked
                total.arrivals_closed += batch.arrivals_closed
                controllers |= batch.controllers
                beat(total.changed)
                if batch.examined < request.batch_size or not batch.changed:
                    break
        await self._kicker.drains(controllers)
        metrics.SWEEP_CHANGED.labels(METRIC_LABEL).inc(total.changed)
        metrics.SWEEP_SKIPPED.labels(METRIC_LABEL).inc(total.skipped)
        return DayCycleResult(schools=schools, students=total.changed, revoked=total.revoked,
                              arrivals_closed=total.arrivals_closed, skipped=total.skipped)
