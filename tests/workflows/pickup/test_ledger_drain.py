"""The outbound ledger against the turnstile simulator: down, pending-sync, up, confirmed."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.worker import Worker

from activities.pickup import metrics
from activities.pickup.authorizations import decide_person
from activities.pickup.contracts.board import (
    DrainBatchInput,
    DrainInput,
    DrainResult,
    Outbox,
    RunSweepInput,
    Sweep,
    drain_workflow_id,
)
from activities.pickup.ledger import LedgerDelivery
from activities.pickup.models import AuthorizedPerson, LedgerEntry
from shared.db.models import utcnow
from tests.support.pickup import TURNSTILE_URL, simulated_turnstile
from workflows.pickup import WORKFLOWS


async def _device_users(http) -> list[str]:
    login = (await http.post("/login.fcgi", json={"login": "admin", "password": "admin"})).json()
    found = await http.post("/load_objects.fcgi", params=login,
                            json={"object": "users", "fields": ["registration"]})
    return [u["registration"] for u in found.json()["users"]]


async def _drain(env, task_queue: str, controller: int) -> DrainResult:
    return await env.client.execute_workflow(
        "pickup-drain", DrainInput(outbox=Outbox.LEDGER, key=controller, idle_seconds=0.2,
                                   retry_initial_seconds=0.2, retry_max_interval_seconds=0.4),
        id=f"{drain_workflow_id(Outbox.LEDGER, controller)}:{task_queue}",
        task_queue=task_queue, result_type=DrainResult)


async def test_revocation_stays_pending_while_the_turnstile_is_down_then_confirms(
        temporal_env, store, task_queue):
    _app, clients, http = simulated_turnstile()
    seed = store.seed
    school = await seed.school(url=TURNSTILE_URL)
    student = await seed.student(school)
    person = await seed.person(student, until=utcnow() + timedelta(hours=1))
    async with store.sessions() as session, session.begin():
        await decide_person(session, person_id=person.id, decision="approve", version=0,
                            at=utcnow(), actor="secretaria")
    delivery = LedgerDelivery(store.sessions, store.settings.pickup, clients)
    async with Worker(temporal_env.client, task_queue=task_queue, workflows=WORKFLOWS,
                      activities=[delivery.drain_ledger, *store.sweeps.all()]):
        granted = await _drain(temporal_env, task_queue, school.id)
        assert granted.delivered == 1
        assert await _device_users(http) == [f"authorized-{person.id}"]
        assert (await seed.get(AuthorizedPerson, person.id)).sync_status == "synced"

        await http.post("/_sim/faults", json={"error_count": -1, "error_status": 503})
        await store.sweeps.expire_authorizations(RunSweepInput(
            sweep=Sweep.EXPIRE_AUTHORIZATIONS, now=utcnow() + timedelta(hours=2)))
        drain = asyncio.create_task(_drain(temporal_env, task_queue, school.id))
        for _ in range(100):
            [revoke] = await seed.all(LedgerEntry, LedgerEntry.command == "revoke")
            if revoke.attempts >= 2:
                break
            await asyncio.sleep(0.1)
        assert (revoke.status, revoke.confirmed_at) == ("pending", None)
        assert "503" in revoke.last_error
        assert (await seed.get(AuthorizedPerson, person.id)).sync_status == "pending"
        assert metrics.OUTBOUND_PENDING.labels("ledger")._value.get() == 1
        assert not drain.done()

        await http.delete("/_sim/faults")
        revoked = await asyncio.wait_for(drain, 20)

    assert revoked.delivered == 1
    [revoke] = await seed.all(LedgerEntry, LedgerEntry.command == "revoke")
    assert revoke.status == "confirmed" and revoke.confirmed_at is not None
    person = await seed.get(AuthorizedPerson, person.id)
    assert (person.status, person.sync_status) == ("expired", "synced")
    assert await _device_users(http) == []
    assert metrics.OUTBOUND_PENDING.labels("ledger")._value.get() == 0
    await http.aclose()


async def test_a_refused_command_is_marked_failed_and_the_queue_moves_on(
        temporal_env, store, task_queue):
    _app, clients, http = simulated_turnstile()
    school = await store.seed.school(url=TURNSTILE_URL)
    await store.seed.add(
        LedgerEntry(controller=school.id, command="grant", subject_kind="student", subject_id=1,
                    registration="student-1", idempotency_key="bad"),
        LedgerEntry(controller=school.id, command="grant", subject_kind="student", subject_id=2,
                    registration="student-2", name="Bia", idempotency_key="good"))
    # The device refuses the first creation (400): retrying it would not help.
    await http.post("/_sim/faults", json={"commands": ["create_objects"], "error_count": 1,
                                          "error_status": 400})
    delivery = LedgerDelivery(store.sessions, store.settings.pickup, clients)
    async with Worker(temporal_env.client, task_queue=task_queue, workflows=WORKFLOWS,
                      activities=[delivery.drain_ledger]):
        result = await _drain(temporal_env, task_queue, school.id)

    assert (result.delivered, result.failed) == (1, 1)
    statuses = [(e.idempotency_key, e.status) for e in await store.seed.all(LedgerEntry)]
    assert statuses == [("bad", "failed"), ("good", "confirmed")]
    assert await _device_users(http) == ["student-2"]
    await http.aclose()


async def test_an_unreachable_controller_stops_the_round_so_commands_stay_in_order(store):
    _app, clients, http = simulated_turnstile()
    school = await store.seed.school(url=TURNSTILE_URL)
    await store.seed.add(
        LedgerEntry(controller=school.id, command="grant", subject_kind="student", subject_id=1,
                    registration="student-1", name="Ana", idempotency_key="grant-1"),
        LedgerEntry(controller=school.id, command="revoke", subject_kind="student",
                    subject_id=1, registration="student-1", idempotency_key="revoke-1"))
    await http.post("/_sim/faults", json={"error_count": -1, "error_status": 503})
    delivery = LedgerDelivery(store.sessions, store.settings.pickup, clients)
    with pytest.raises(ApplicationError):
        await delivery.drain_ledger(DrainBatchInput(outbox=Outbox.LEDGER, key=school.id))
    grant, revoke = await store.seed.all(LedgerEntry)
    assert (grant.status, grant.attempts) == ("pending", 1)
    # The revoke was not tried ahead of its grant: delivering it first would leave the
    # device granting access once the grant finally lands.
    assert (revoke.status, revoke.attempts) == ("pending", 0)
    await http.aclose()
