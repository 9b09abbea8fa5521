"""A dated authorization's validity is a workflow's: creating one starts its expiry timer."""

from __future__ import annotations

from datetime import timedelta

from activities.pickup.contracts.board import TimerInput, TimerKind, timer_workflow_id
from activities.pickup.contracts.names import ENTITY_TIMER_WORKFLOW
from shared.db.models import utcnow


async def _student(api) -> dict:
    school = await api.ok("POST", "/api/pickup/schools", json={"name": "Escola"})
    return await api.ok("POST", "/api/pickup/students",
                        json={"schoolId": school["id"], "name": "Ana"})


async def _timer_input(client, workflow_id: str) -> TimerInput:
    """The input the timer was started with, read back from its history."""
    handle = client.get_workflow_handle(workflow_id)
    description = await handle.describe()
    assert (description.workflow_type, description.status.name) == \
        (ENTITY_TIMER_WORKFLOW, "RUNNING")
    history = await handle.fetch_history()
    started = history.events[0].workflow_execution_started_event_attributes
    [timer] = await client.data_converter.decode(started.input.payloads, [TimerInput])
    await handle.terminate("test over")
    return timer


async def test_a_temporary_person_gets_its_expiry_timer_and_again_on_approval(pickup_api,
                                                                              temporal_env):
    student = await _student(pickup_api)
    until = utcnow() + timedelta(days=2)
    person = await pickup_api.ok("POST", "/api/pickup/authorized-persons", json={
        "studentId": student["id"], "name": "Tia", "kind": "temporary",
        "validUntil": until.isoformat()})

    timer = await _timer_input(temporal_env.client,
                               timer_workflow_id(TimerKind.AUTHORIZATION, person["id"]))

    assert (timer.kind, timer.entity_id, timer.deadline) == \
        (TimerKind.AUTHORIZATION, person["id"], until)
    assert (timer.school_id, timer.student_id) == (student["schoolId"], student["id"])

    # That timer is gone (terminated above, like a start lost at creation): approving the
    # person starts it again, with the same deadline read back from the store.
    await pickup_api.ok("POST", f"/api/pickup/authorized-persons/{person['id']}/approve",
                        json={"version": 0})
    again = await _timer_input(temporal_env.client,
                               timer_workflow_id(TimerKind.AUTHORIZATION, person["id"]))
    assert (again.kind, again.entity_id, again.deadline) == \
        (TimerKind.AUTHORIZATION, person["id"], until)


async def test_an_early_release_gets_the_timer_that_expires_it_unused(pickup_api, temporal_env):
    student = await _student(pickup_api)
    until = utcnow() + timedelta(hours=3)
    release = await pickup_api.ok("POST", "/api/pickup/early-releases", json={
        "studentId": student["id"], "validUntil": until.isoformat()})
    assert release["status"] == "pending"

    timer = await _timer_input(temporal_env.client,
                               timer_workflow_id(TimerKind.EARLY_RELEASE, release["id"]))

    assert (timer.kind, timer.entity_id, timer.deadline) == \
        (TimerKind.EARLY_RELEASE, release["id"], until)
    assert timer_workflow_id(TimerKind.EARLY_RELEASE, release["id"]) == \
        f"pickup-early-release:{release['id']}"
