"""The school day: each school's day start resets its board once, in its own time zone."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from activities.pickup.board import confirm_pickup, mark_ready, signal_arrival
from activities.pickup.contracts.board import (
    DAY_START_REASON,
    ArrivalStatus,
    PickupState,
    RunDayCycleInput,
    TimerInput,
    TimerKind,
)
from activities.pickup.day_cycle import DayCycle
from activities.pickup.models import (
    Arrival,
    AuditEntry,
    BoardEvent,
    LedgerEntry,
    School,
    Student,
)
from activities.pickup.school_day import day_begins, day_bounds, school_day_of

# Monday 2030-03-04, 15:00 in São Paulo (UTC-3, no DST since 2019) and 14:00 in Manaus (UTC-4).
MONDAY = datetime(2030, 3, 4, 18, 0, tzinfo=UTC)
SAO_PAULO_TUESDAY = datetime(2030, 3, 5, 3, 0, tzinfo=UTC)  # 00:00 in São Paulo
MANAUS_TUESDAY = datetime(2030, 3, 5, 4, 0, tzinfo=UTC)  # 00:00 in Manaus
SECONDS = timedelta(seconds=30)
HOUR = timedelta(hours=1)


def test_a_day_starts_at_the_schools_own_midnight():
    just_before, at_start = SAO_PAULO_TUESDAY - timedelta(seconds=1), SAO_PAULO_TUESDAY
    assert school_day_of(just_before, "America/Sao_Paulo", "00:00") == date(2030, 3, 4)
    assert school_day_of(at_start, "America/Sao_Paulo", "00:00") == date(2030, 3, 5)
    # The same instant is still Monday in Manaus, an hour behind.
    assert school_day_of(at_start, "America/Manaus", "00:00") == date(2030, 3, 4)
    assert school_day_of(MANAUS_TUESDAY, "America/Manaus", "00:00") == date(2030, 3, 5)
    assert day_begins(date(2030, 3, 5), "America/Manaus", "00:00") == MANAUS_TUESDAY
    # A 05:00 day start: 04:59 on Tuesday still belongs to Monday's day.
    assert school_day_of(datetime(2030, 3, 5, 7, 59, tzinfo=UTC), "America/Sao_Paulo",
                         "05:00") == date(2030, 3, 4)
    assert day_bounds(date(2030, 3, 4), "America/Sao_Paulo", "05:00") == (
        datetime(2030, 3, 4, 8, 0, tzinfo=UTC), datetime(2030, 3, 5, 8, 0, tzinfo=UTC))


def test_days_across_dst_changes_are_23_or_25_hours_and_a_skipped_midnight_starts_at_the_jump():
    start, end = day_bounds(date(2030, 3, 10), "America/New_York", "00:00")
    assert end - start == timedelta(hours=23)
    start, end = day_bounds(date(2030, 11, 3), "America/New_York", "00:00")
    assert end - start == timedelta(hours=25)
    # São Paulo's clocks jumped from 00:00 to 01:00 on 2018-11-04: that day began at the jump.
    jump = datetime(2018, 11, 4, 3, 0, tzinfo=UTC)
    assert day_begins(date(2018, 11, 4), "America/Sao_Paulo", "00:00") == jump
    assert school_day_of(jump, "America/Sao_Paulo", "00:00") == date(2018, 11, 4)
    assert school_day_of(jump - timedelta(seconds=1), "America/Sao_Paulo",
                         "00:00") == date(2018, 11, 3)


async def _monday_board(seed, school: School) -> dict[str, Student]:
    """Students left by Monday: picked up, READY, AWAITING, untouched; one who moved Tuesday."""
    picked, ready, awaiting, idle, early = [
        await seed.badge(await seed.add(Student(school_id=school.id, name=name,
                                                state_since=MONDAY)))
        for name in ("picked", "ready", "awaiting", "idle", "early")]
    async with seed.sessions() as session, session.begin():
        for student in (picked, ready, awaiting):
            await signal_arrival(session, student_id=student.id, guardian_id=None, at=MONDAY,
                                 actor="test")
        for student in (picked, ready):
            await mark_ready(session, student_id=student.id, version=1, at=MONDAY,
                             actor="test", ready_timeout=timedelta(minutes=60))
        await confirm_pickup(session, student_id=picked.id, version=2, at=MONDAY, actor="test",
                             origin="operator")
        # Tuesday's first arrival, seconds after the day began: today's, never reset.
        await signal_arrival(session, student_id=early.id, guardian_id=None,
                             at=SAO_PAULO_TUESDAY + timedelta(seconds=10), actor="test")
    return {s.name: await seed.get(Student, s.id) for s in (picked, ready, awaiting, idle, early)}


async def _counts(seed) -> tuple[int, int, int]:
    return (await seed.count(AuditEntry), await seed.count(BoardEvent),
            await seed.count(LedgerEntry))


async def test_day_start_resets_every_student_once_revokes_ready_and_closes_arrivals(store):
    seed = store.seed
    school = await seed.school()
    before = await _monday_board(seed, school)
    day = DayCycle(store.sessions, store.kicker)
    run = RunDayCycleInput(now=SAO_PAULO_TUESDAY + SECONDS, batch_size=2)

    result = await day.start_days(run)

    assert (result.students, result.revoked, result.arrivals_closed) == (4, 1, 1)
    after = {s.name: s for s in await seed.all(Student)}
    for name in ("picked", "ready", "awaiting", "idle"):
        assert (after[name].state, after[name].state_reason, after[name].version) == \
            (PickupState.AT_SCHOOL, DAY_START_REASON, before[name].version + 1)
        assert after[name].arrival_id is None
    assert (after["early"].state, after["early"].version) == (PickupState.AWAITING, 1)
    audits = await seed.all(AuditEntry, AuditEntry.action == "day-started")
    assert sorted((a.entity_id, a.from_state) for a in audits) == sorted(
        (before[n].id, before[n].state) for n in ("picked", "ready", "awaiting", "idle"))
    assert all(a.details["day"] == "2030-03-05" for a in audits)
    events = await seed.all(BoardEvent, BoardEvent.reason == DAY_START_REASON)
    assert len(events) == 4 and {e.payload["to"] for e in events} == {PickupState.AT_SCHOOL}
    [revoke] = await seed.all(LedgerEntry, LedgerEntry.idempotency_key.like("revoke:%"),
                              LedgerEntry.subject_id == before["ready"].id)
    assert (revoke.command, revoke.status, revoke.idempotency_key) == (
        "revoke", "pending", f"revoke:student:{before['ready'].id}:{after['ready'].version}")
    assert store.kicker.controllers == [school.id]
    arrivals = {a.student_id: a.status for a in await seed.all(Arrival)}
    assert arrivals[before["awaiting"].id] == ArrivalStatus.EXPIRED
    assert arrivals[before["early"].id] == ArrivalStatus.OPEN

    # The reconciler run again (a retry, the next minute) changes nothing.
    counts = await _counts(seed)
    again = await day.start_days(run.model_copy(update={"now": run.now + timedelta(minutes=1)}))
    assert (again.students, again.revoked, again.arrivals_closed) == (0, 0, 0)
    assert await _counts(seed) == counts

    # Monday's READY and arrival timers fire late: both lose their CAS, no effect at all.
    ready_timer = await store.sweeps.fire_timer(TimerInput(
        kind=TimerKind.READY, entity_id=before["ready"].id, version=before["ready"].version,
        deadline=MONDAY + HOUR))
    arrival_timer = await store.sweeps.fire_timer(TimerInput(
        kind=TimerKind.ARRIVAL, entity_id=before["awaiting"].arrival_id, deadline=MONDAY))
    assert (ready_timer.changed, arrival_timer.changed) == (False, False)
    assert await _counts(seed) == counts

    # Tuesday: the student picked up on Monday signals arrival again.
    async with seed.sessions() as session, session.begin():
        tuesday = await signal_arrival(session, student_id=before["picked"].id, guardian_id=None,
                                       at=SAO_PAULO_TUESDAY + HOUR, actor="test")
    assert tuesday.student.state == PickupState.AWAITING


async def test_each_school_starts_its_day_at_midnight_in_its_own_zone(store):
    seed = store.seed
    sao_paulo = await seed.school()
    manaus = await seed.add(School(name="Manaus", arrival_timeout_minutes=15,
                                   time_zone="America/Manaus"))
    paulista = await seed.ready_student(sao_paulo, at=MONDAY)
    amazonense = await seed.ready_student(manaus, at=MONDAY)
    day = DayCycle(store.sessions, store.kicker)

    # 00:00:30 in São Paulo is 23:00:30 on Monday in Manaus.
    first = await day.start_days(RunDayCycleInput(now=SAO_PAULO_TUESDAY + SECONDS))
    assert (first.students, first.revoked) == (1, 1)
    assert (await seed.get(Student, paulista.id)).state == PickupState.AT_SCHOOL
    assert (await seed.get(Student, amazonense.id)).state == PickupState.READY

    second = await day.start_days(RunDayCycleInput(now=MANAUS_TUESDAY - SECONDS))
    assert second.students == 0

    third = await day.start_days(RunDayCycleInput(now=MANAUS_TUESDAY + SECONDS))
    assert (third.students, third.revoked) == (1, 1)
    reset = await seed.get(Student, amazonense.id)
    assert (reset.state, reset.state_reason) == (PickupState.AT_SCHOOL, DAY_START_REASON)
    assert await seed.count(LedgerEntry, LedgerEntry.command == "revoke",
                            LedgerEntry.controller == manaus.id) == 1
    assert store.kicker.controllers == [sao_paulo.id, manaus.id]


async def test_a_signal_moved_onto_today_is_not_closed_with_the_previous_day(store):
    seed = store.seed
    school = await seed.school()
    student = await seed.add(Student(school_id=school.id, name="undone", state_since=MONDAY))
    stale = await seed.add(Arrival(school_id=school.id, student_id=student.id,
                                   created_at=MONDAY, expires_at=MONDAY + HOUR))
    reopened = await seed.add(Arrival(school_id=school.id, student_id=student.id,
                                      created_at=MONDAY, expires_at=MONDAY + HOUR))
    # Staff undid a READY this morning: the student is AWAITING today on Monday's signal.
    async with seed.sessions() as session, session.begin():
        moved = await session.get(Student, student.id)
        moved.state, moved.arrival_id = PickupState.AWAITING, reopened.id
        moved.state_since = SAO_PAULO_TUESDAY + SECONDS

    result = await DayCycle(store.sessions, store.kicker).start_days(
        RunDayCycleInput(now=SAO_PAULO_TUESDAY + 2 * SECONDS))

    assert (result.students, result.arrivals_closed) == (0, 1)
    statuses = {a.id: a.status for a in await seed.all(Arrival)}
    assert statuses == {stale.id: ArrivalStatus.EXPIRED, reopened.id: ArrivalStatus.OPEN}
