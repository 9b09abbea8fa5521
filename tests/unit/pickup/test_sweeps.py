"""The seven sweeps on a real store: what each changes, what it must never touch."""

from __future__ import annotations

from datetime import timedelta

from activities.pickup import metrics
from activities.pickup.access import hash_token
from activities.pickup.board import confirm_pickup, mark_ready, revert_ready, signal_arrival
from activities.pickup.bulk import _cas_to_school
from activities.pickup.contracts.board import (
    READY_TIMEOUT_REASON,
    PickupState,
    RunSweepInput,
    Sweep,
    TimerInput,
    TimerKind,
)
from activities.pickup.models import (
    AccessToken,
    Arrival,
    AuditEntry,
    AuthorizedPerson,
    BoardEvent,
    EarlyRelease,
    GuardianLink,
    LedgerEntry,
    Notification,
    QueueSnapshot,
    Student,
)
from shared.db.models import utcnow

HOUR = timedelta(hours=1)


def sweep(name: Sweep, **kw) -> RunSweepInput:
    return RunSweepInput(sweep=name, now=utcnow(), batch_size=kw.pop("batch_size", 2), **kw)


async def test_expired_temporary_authorizations_expire_and_approved_ones_are_revoked(store):
    seed, now = store.seed, utcnow()
    student = await seed.student(await seed.school())
    pending = await seed.person(student, status="pending", until=now - HOUR)
    approved = await seed.person(student, status="approved", until=now - HOUR)
    adjust = await seed.person(student, status="adjustments_requested", until=now - HOUR)
    revoked = await seed.person(student, status="revoked", until=now - HOUR)
    future = await seed.person(student, status="approved", until=now + HOUR)
    permanent = await seed.person(student, status="approved")
    # Imported data: a permanent authorization that carries a stale end date anyway.
    dated_permanent = await seed.person(student, status="approved", until=now - HOUR,
                                        kind="permanent")

    result = await store.sweeps.expire_authorizations(sweep(Sweep.EXPIRE_AUTHORIZATIONS))

    assert (result.changed, result.ledger_enqueued) == (3, 1)
    persons = {p.id: p for p in await seed.all(AuthorizedPerson)}
    assert {persons[p.id].status for p in (pending, approved, adjust)} == {"expired"}
    assert persons[approved.id].sync_status == "pending"
    assert persons[pending.id].sync_status == "none"
    for untouched in (revoked, future, permanent, dated_permanent):
        assert (persons[untouched.id].status, persons[untouched.id].version) == \
            (untouched.status, 0)
    ledger = await seed.all(LedgerEntry)
    assert [(e.command, e.subject_id, e.status) for e in ledger] == \
        [("revoke", approved.id, "pending")]
    assert await seed.count(AuditEntry, AuditEntry.action == "expired") == 3
    assert store.kicker.controllers == [student.school_id]

    again = await store.sweeps.expire_authorizations(sweep(Sweep.EXPIRE_AUTHORIZATIONS))
    assert again.changed == 0 and await seed.count(LedgerEntry) == 1


async def test_expired_early_releases_expire_with_audit_only(store):
    seed, now = store.seed, utcnow()
    student = await seed.student(await seed.school())
    releases = await seed.add(
        EarlyRelease(student_id=student.id, status="pending", valid_until=now - HOUR),
        EarlyRelease(student_id=student.id, status="approved", valid_until=now - HOUR),
        EarlyRelease(student_id=student.id, status="used", valid_until=now - HOUR),
        EarlyRelease(student_id=student.id, status="approved", valid_until=now + HOUR))

    result = await store.sweeps.expire_early_releases(sweep(Sweep.EXPIRE_EARLY_RELEASES))

    assert result.changed == 2
    statuses = [r.status for r in await seed.all(EarlyRelease)]
    assert statuses == ["expired", "expired", "used", "approved"]
    assert await seed.count(AuditEntry, AuditEntry.entity == "early_release") == 2
    assert await seed.count(LedgerEntry) == 0 and store.kicker.controllers == []
    assert releases[2].version == 0


async def test_expired_temporary_links_are_deleted_with_a_roster_event_each(store):
    seed, now = store.seed, utcnow()
    student = await seed.student(await seed.school())
    mother, aunt, uncle, neighbour = [await seed.guardian(n) for n in ("M", "A", "U", "N")]
    titular = await seed.link(student, mother)
    dated_titular = await seed.link(student, await seed.guardian("F"), until=now - HOUR,
                                    kind="permanent")
    gone = [await seed.link(student, aunt, until=now - HOUR),
            await seed.link(student, uncle, until=now - timedelta(seconds=1))]
    live = await seed.link(student, neighbour, until=now + HOUR)

    result = await store.sweeps.delete_expired_links(sweep(Sweep.DELETE_EXPIRED_LINKS))

    assert result.changed == 2
    assert [link.id for link in await seed.all(GuardianLink)] == \
        [titular.id, dated_titular.id, live.id]
    events = await seed.all(BoardEvent)
    assert [(e.type, e.guardian_id, e.payload["link_id"]) for e in events] == [
        ("StudentRosterChanged", aunt.id, gone[0].id),
        ("StudentRosterChanged", uncle.id, gone[1].id)]


async def test_expired_arrival_signals_close_and_revert_students_still_awaiting(store):
    seed, now = store.seed, utcnow()
    school = await seed.school(arrival_minutes=15)
    late, fresh = await seed.student(school, "Late"), await seed.student(school, "Fresh")
    moved_on = await seed.ready_student(school, at=now - timedelta(minutes=20))
    async with store.sessions() as session, session.begin():
        await signal_arrival(session, student_id=late.id, guardian_id=None,
                             at=now - timedelta(minutes=16), actor="test")
        await signal_arrival(session, student_id=fresh.id, guardian_id=None,
                             at=now - timedelta(minutes=5), actor="test")

    result = await store.sweeps.close_arrivals(sweep(Sweep.CLOSE_ARRIVALS))

    assert (result.changed, result.events) == (1, 1)
    students = {s.id: s for s in await seed.all(Student)}
    assert students[late.id].state == "AT_SCHOOL" and students[late.id].version == 2
    assert students[fresh.id].state == "AWAITING"
    assert students[moved_on.id].state == "READY"
    assert [a.status for a in await seed.all(Arrival)] == ["completed", "expired", "open"]
    last = (await seed.all(BoardEvent, BoardEvent.student_id == late.id))[-1]
    assert (last.payload["from"], last.payload["to"]) == ("AWAITING", "AT_SCHOOL")


async def test_students_stuck_in_ready_revert_with_revoke_notification_broadcast_audit(store):
    seed, now = store.seed, utcnow()
    school = await seed.school()
    stuck = await seed.ready_student(school, at=now - timedelta(minutes=61))
    recent = await seed.ready_student(school, at=now - timedelta(minutes=10))
    mother, former = await seed.guardian("Mother"), await seed.guardian("Former")
    await seed.link(stuck, mother)
    await seed.link(stuck, former, until=now - HOUR)  # access already denied: not notified

    result = await store.sweeps.revert_ready(sweep(Sweep.REVERT_READY))

    assert (result.changed, result.skipped, result.notifications_enqueued) == (1, 0, 1)
    reverted = await seed.get(Student, stuck.id)
    assert (reverted.state, reverted.version) == ("AT_SCHOOL", stuck.version + 1)
    assert reverted.state_reason == READY_TIMEOUT_REASON
    assert (await seed.get(Student, recent.id)).state == "READY"
    revokes = await seed.all(LedgerEntry, LedgerEntry.subject_id == stuck.id,
                             LedgerEntry.command == "revoke")
    assert [r.registration for r in revokes] == [f"student-{stuck.id}"]
    notes = await seed.all(Notification)
    assert [n.guardian_id for n in notes] == [mother.id]
    event = (await seed.all(BoardEvent, BoardEvent.student_id == stuck.id))[-1]
    assert (event.type, event.reason, event.payload["to"]) == \
        ("StudentStateChanged", READY_TIMEOUT_REASON, "AT_SCHOOL")
    assert await seed.count(AuditEntry, AuditEntry.action == "ready-reverted") == 1
    assert store.kicker.controllers == [school.id] and store.kicker.notifications == 1


async def test_ready_revert_that_loses_the_race_to_a_real_pickup_has_no_effect(store):
    seed, now = store.seed, utcnow()
    school = await seed.school()
    student = await seed.ready_student(school, at=now - timedelta(minutes=61))
    await seed.link(student, await seed.guardian())
    seen_version = student.version  # what the sweep read before the pickup committed
    async with store.sessions() as session, session.begin():
        await confirm_pickup(session, student_id=student.id, version=seen_version, at=now,
                             actor="operator", origin="operator")
    before = await seed.effects(student.id)

    async with store.sessions() as session, session.begin():
        lost = await revert_ready(session, student_id=student.id, version=seen_version, at=now,
                                  actor="sweep", cutoff=now - timedelta(minutes=60))
    swept = await store.sweeps.revert_ready(sweep(Sweep.REVERT_READY))

    assert lost is None and swept.changed == 0
    assert (await seed.get(Student, student.id)).state == "PICKED_UP"
    assert await seed.effects(student.id) == before
    assert before["notifications"] == 1  # the pickup's own "picked-up" notice, no "reverted"
    assert store.kicker.controllers == [] and store.kicker.notifications == 0


async def test_tokens_expired_more_than_a_day_ago_are_pruned(store):
    seed, now = store.seed, utcnow()
    guardian = await seed.guardian()
    _old, recent, live = await seed.add(*[
        AccessToken(guardian_id=guardian.id, token_hash=hash_token(name), expires_at=at)
        for name, at in (("old", now - timedelta(hours=25)), ("recent", now - HOUR),
                         ("live", now + HOUR))])

    result = await store.sweeps.prune_tokens(sweep(Sweep.PRUNE_TOKENS))

    assert result.changed == 1
    assert [t.id for t in await seed.all(AccessToken)] == [recent.id, live.id]


async def test_queue_snapshot_records_the_backlog_and_redrives_pending_work(store):
    seed, now = store.seed, utcnow()
    school = await seed.school()
    await seed.add(
        LedgerEntry(controller=school.id, command="revoke", subject_kind="student", subject_id=1,
                    registration="student-1", idempotency_key="a",
                    created_at=now - timedelta(minutes=10)),
        LedgerEntry(controller=school.id, command="grant", subject_kind="student", subject_id=2,
                    registration="student-2", idempotency_key="b", status="failed"))

    await store.sweeps.queue_snapshot(sweep(Sweep.QUEUE_SNAPSHOT))

    snapshots = {s.queue: s for s in await seed.all(QueueSnapshot)}
    assert (snapshots["ledger"].pending, snapshots["ledger"].failed) == (1, 1)
    assert snapshots["ledger"].oldest_pending_seconds >= 600
    assert snapshots["notifications"].pending == 0
    assert metrics.OUTBOUND_PENDING.labels("ledger")._value.get() == 1
    assert metrics.OUTBOUND_OLDEST.labels("ledger")._value.get() >= 600
    assert store.kicker.controllers == [school.id]


async def test_a_stale_ready_timer_cannot_end_a_later_ready_episode(store):
    seed, now = store.seed, utcnow()
    school = await seed.school()
    first = await seed.ready_student(school, at=now - timedelta(minutes=61))
    async with store.sessions() as session, session.begin():
        await revert_ready(session, student_id=first.id, version=first.version, at=now,
                           actor="sweep")
        waiting = await signal_arrival(session, student_id=first.id, guardian_id=None, at=now,
                                       actor="guardian")
        again = await mark_ready(session, student_id=first.id, version=waiting.student.version,
                                 at=now, actor="operator", ready_timeout=timedelta(minutes=60))
    stale = TimerInput(kind=TimerKind.READY, entity_id=first.id, version=first.version,
                       deadline=now)

    result = await store.sweeps.fire_timer(stale)

    assert not result.changed
    current = await seed.get(Student, first.id)
    assert (current.state, current.version) == ("READY", again.student.version)


async def test_the_batch_cas_skips_a_student_whose_version_moved_since_it_was_read(store):
    seed, now = store.seed, utcnow()
    school = await seed.school()
    raced = await seed.ready_student(school, at=now - timedelta(minutes=61))
    other = await seed.ready_student(school, at=now - timedelta(minutes=61))
    async with store.sessions() as session, session.begin():
        await confirm_pickup(session, student_id=raced.id, version=raced.version, at=now,
                             actor="turnstile", origin="turnstile")
    before = await seed.effects(raced.id)

    async with store.sessions() as session, session.begin():
        # The pairs the sweep read before the pickup committed.
        moved = await _cas_to_school(session, [(raced.id, raced.version),
                                               (other.id, other.version)],
                                     previous=PickupState.READY, at=now, reason="x")

    assert [m[0] for m in moved] == [other.id]
    assert await seed.effects(raced.id) == before
