"""Per-entity durable timers, with time skipping: READY, arrival signal, authorization expiry."""

from __future__ import annotations

from datetime import timedelta

from temporalio.worker import Worker

from activities.pickup.board import confirm_pickup, signal_arrival
from activities.pickup.contracts.board import (
    READY_TIMEOUT_REASON,
    TimerInput,
    TimerKind,
    TimerResult,
    timer_workflow_id,
)
from activities.pickup.models import (
    AuditEntry,
    AuthorizedPerson,
    EarlyRelease,
    LedgerEntry,
    Student,
)
from shared.db.models import utcnow
from workflows.pickup import WORKFLOWS


async def _fire(env, store, task_queue: str, timer: TimerInput) -> TimerResult:
    async with Worker(env.client, task_queue=task_queue, workflows=WORKFLOWS,
                      activities=store.sweeps.all()):
        return await env.client.execute_workflow(
            "pickup-entity-timer", timer, result_type=TimerResult, task_queue=task_queue,
            id=f"{timer_workflow_id(timer.kind, timer.entity_id, timer.version)}:{task_queue}")


async def test_ready_timer_reverts_at_the_timeout_of_that_ready_episode(
        time_skipping_env, store, task_queue):
    school = await store.seed.school()
    student = await store.seed.ready_student(school, timeout=timedelta(minutes=60))
    timer = TimerInput(kind=TimerKind.READY, entity_id=student.id, version=student.version,
                       deadline=utcnow() + timedelta(minutes=60))

    result = await _fire(time_skipping_env, store, task_queue, timer)

    assert result.changed
    reverted = await store.seed.get(Student, student.id)
    assert (reverted.state, reverted.state_reason) == ("AT_SCHOOL", READY_TIMEOUT_REASON)
    assert (await store.seed.effects(student.id))["revokes"] == 1


async def test_ready_timer_after_the_pickup_changes_nothing(time_skipping_env, store, task_queue):
    school = await store.seed.school()
    student = await store.seed.ready_student(school)
    async with store.sessions() as session, session.begin():
        await confirm_pickup(session, student_id=student.id, version=student.version,
                             at=utcnow(), actor="turnstile", origin="turnstile")
    before = await store.seed.effects(student.id)
    timer = TimerInput(kind=TimerKind.READY, entity_id=student.id, version=student.version,
                       deadline=utcnow() + timedelta(minutes=60))

    result = await _fire(time_skipping_env, store, task_queue, timer)

    assert not result.changed
    assert (await store.seed.get(Student, student.id)).state == "PICKED_UP"
    assert await store.seed.effects(student.id) == before


async def test_arrival_timer_uses_the_schools_timeout(time_skipping_env, store, task_queue):
    school = await store.seed.school(arrival_minutes=7)
    student = await store.seed.student(school)
    async with store.sessions() as session, session.begin():
        change = await signal_arrival(session, student_id=student.id, guardian_id=None,
                                      at=utcnow(), actor="guardian")
    [timer] = change.timers
    assert timedelta(minutes=6) < timer.deadline - utcnow() <= timedelta(minutes=7)

    result = await _fire(time_skipping_env, store, task_queue, timer)

    assert result.changed
    assert (await store.seed.get(Student, student.id)).state == "AT_SCHOOL"


async def test_authorization_timer_expires_an_approved_temporary_person_and_revokes(
        time_skipping_env, store, task_queue):
    student = await store.seed.student(await store.seed.school())
    until = utcnow() + timedelta(days=3)
    person = await store.seed.person(student, status="approved", until=until)
    timer = TimerInput(kind=TimerKind.AUTHORIZATION, entity_id=person.id, deadline=until)

    result = await _fire(time_skipping_env, store, task_queue, timer)

    assert result.changed
    expired = await store.seed.get(AuthorizedPerson, person.id)
    assert (expired.status, expired.sync_status) == ("expired", "pending")
    assert [e.command for e in await store.seed.all(LedgerEntry)] == ["revoke"]


async def test_early_release_timer_expires_it_unused_at_its_date(time_skipping_env, store,
                                                                  task_queue):
    student = await store.seed.student(await store.seed.school())
    until = utcnow() + timedelta(hours=5)
    release = await store.seed.add(EarlyRelease(student_id=student.id, status="approved",
                                                valid_until=until, created_at=utcnow()))
    # A person with the same id must not be touched by the release's timer.
    person = await store.seed.add(AuthorizedPerson(
        id=release.id, student_id=student.id, name="Tia", kind="temporary", status="approved",
        valid_until=utcnow(), created_at=utcnow(), updated_at=utcnow()))
    timer = TimerInput(kind=TimerKind.EARLY_RELEASE, entity_id=release.id, deadline=until)

    result = await _fire(time_skipping_env, store, task_queue, timer)

    assert result.changed
    expired = await store.seed.get(EarlyRelease, release.id)
    assert (expired.status, expired.version) == ("expired", 1)
    [trail] = await store.seed.all(AuditEntry, AuditEntry.entity == "early_release")
    assert (trail.action, trail.from_state, trail.actor) == \
        ("expired", "approved", "timer:early-release")
    assert (await store.seed.get(AuthorizedPerson, person.id)).status == "approved"
    assert await store.seed.all(LedgerEntry) == []
