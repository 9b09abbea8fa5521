"""Operator actions over HTTP: requeue what was parked, acknowledge alarms and orphans, and two
people for a resolution that moves money; each with its actor from the credential."""

from __future__ import annotations

import base64
from decimal import Decimal

import pytest
from sqlmodel import select

from activities.sisbajud.contracts.orders import block_account_alias
from activities.sisbajud.models import (
    SisbajudAlarm,
    SisbajudHumanDecision,
    SisbajudNotice,
    SisbajudOrder,
    SisbajudOrphan,
    SisbajudOutbox,
)
from activities.sisbajud.store import record_notice
from services.dashboard.passwords import hash_password
from services.simulators.midaz.testkit import send
from shared.db.models import OperationalEvent
from shared.settings import OperatorAccount
from tests.api.conftest import API_KEY
from tests.support.sisbajud import World, new_order_id, sisbajud_settings, stored
from tests.support.sisbajud_states import finals, states

pytestmark = pytest.mark.parametrize("backend", ["sqlite"])
AUTH = {"X-API-Key": API_KEY}
WHY = {"reason": "checked with the court clerk"}


def _as(name: str, password: str | None = None) -> dict[str, str]:
    """The API key plus a dashboard operator's name and password (HTTP Basic)."""
    pair = f"{name}:{password or name + '-password'}".encode()
    return {**AUTH, "Authorization": "Basic " + base64.b64encode(pair).decode()}


@pytest.fixture
def operators(settings):
    """Two dashboard accounts: the people who may act on the operator surface."""
    settings.dashboard.operators = [
        OperatorAccount(name=name, password_hash=hash_password(f"{name}-password"))
        for name in ("ana", "bruno")]


async def _add(api, *rows) -> None:
    async with api.context.sessions() as session:
        for row in rows:
            session.add(row)
        await session.commit()
        for row in rows:
            await session.refresh(row)


async def _get(api, model, key):
    async with api.context.sessions() as session:
        return await session.get(model, key)


async def _events(api, kind: str) -> list[OperationalEvent]:
    async with api.context.sessions() as session:
        return list((await session.exec(select(OperationalEvent).where(
            OperationalEvent.type == kind))).all())


def _refused(response, status: int, code: str) -> None:
    assert (response.status_code, response.json()["code"]) == (status, code), response.text


async def test_a_parked_notice_naming_an_order_goes_back_to_ingestion(api, operators):
    order_id = new_order_id()
    async with api.context.sessions() as session:
        await record_notice(session, webhook_id="hub-parked", order_id=order_id, revision=3,
                            parked_reason="order fetch answered 403", body=b"{}", skew_s=0,
                            skewed=False, secret_index=0)
    async with api.context.sessions() as session:
        await record_notice(session, webhook_id="hub-garbage", order_id=None, revision=None,
                            parked_reason="body is not JSON", body=b"nope", skew_s=0,
                            skewed=False, secret_index=0)
    async with api.context.sessions() as session:
        rows = {n.webhook_id: n for n in (await session.exec(select(SisbajudNotice))).all()}
    parked, garbage = rows["hub-parked"].id, rows["hub-garbage"].id
    url = f"/api/sisbajud/notices/{parked}/requeue"
    assert (await api.post(url, json=WHY)).status_code == 401
    _refused(await api.post(url, json={}, headers=AUTH), 422, "request.invalid")
    done = await api.post(url, json=WHY, headers=_as("ana"))
    assert done.status_code == 202, done.text
    assert (done.json()["state"], done.json()["actor"]) == ("ACCEPTED", "operator:ana")
    assert (await _get(api, SisbajudNotice, parked)).state == "ACCEPTED"
    _refused(await api.post(url, json=WHY, headers=AUTH), 409, "sisbajud.not-parked")
    _refused(await api.post(f"/api/sisbajud/notices/{garbage}/requeue", json=WHY,
                            headers=AUTH), 409, "sisbajud.notice-unusable")
    _refused(await api.post("/api/sisbajud/notices/999999/requeue", json=WHY, headers=AUTH),
             404, "resource.not-found")
    (event,) = await _events(api, "NoticeRequeued")
    assert (event.actor, event.properties["reason"]) == ("operator:ana", WHY["reason"])
    assert event.properties["order_id"] == order_id


async def test_a_parked_result_is_sent_again_under_its_key(api):
    row = SisbajudOutbox(idempotency_key="o-9:1:1", order_id="o-9", revision=1,
                         payload={"effect": "FULL"}, state="PARKED", attempts=1,
                         last_status=422)
    sent = SisbajudOutbox(idempotency_key="o-9:1:accepted", order_id="o-9", revision=1,
                          payload={}, state="SENT", attempts=1)
    await _add(api, row, sent)
    done = await api.post(f"/api/sisbajud/outbox/{row.id}/requeue", json=WHY, headers=AUTH)
    assert done.status_code == 202, done.text
    assert done.json()["idempotencyKey"] == "o-9:1:1"
    again = await _get(api, SisbajudOutbox, row.id)
    assert (again.state, again.attempts, again.idempotency_key) == ("PENDING", 0, "o-9:1:1")
    _refused(await api.post(f"/api/sisbajud/outbox/{row.id}/requeue", json=WHY,
                            headers=AUTH), 409, "sisbajud.not-parked")
    _refused(await api.post(f"/api/sisbajud/outbox/{sent.id}/requeue", json=WHY,
                            headers=AUTH), 409, "sisbajud.not-parked")
    (event,) = await _events(api, "ResultRequeued")
    assert (event.actor, event.properties["idempotency_key"]) == ("api-key", "o-9:1:1")


async def test_a_parked_order_releases_its_claim_and_queues_a_notice(api):
    parked, resolved = new_order_id(), new_order_id()
    await _add(api, SisbajudOrder(order_id=parked, revision=2, run_id="run-1", state="PARKED"),
               SisbajudOrder(order_id=resolved, revision=1, run_id="run-2", state="RESOLVED"))
    done = await api.post(f"/api/sisbajud/orders/{parked}/requeue", json=WHY, headers=AUTH)
    assert done.status_code == 202, done.text
    assert (await _get(api, SisbajudOrder, parked)).run_id is None
    notice = await _get(api, SisbajudNotice, done.json()["noticeId"])
    assert (notice.order_id, notice.revision, notice.state) == (parked, 2, "ACCEPTED")
    _refused(await api.post(f"/api/sisbajud/orders/{resolved}/requeue", json=WHY,
                            headers=AUTH), 409, "sisbajud.not-parked")
    _refused(await api.post("/api/sisbajud/orders/nope/requeue", json=WHY, headers=AUTH),
             404, "resource.not-found")
    (event,) = await _events(api, "OrderRequeued")
    assert (event.properties["order_id"], event.properties["revision"]) == (parked, 2)


async def test_alarms_and_orphans_are_acknowledged_once_with_actor_and_reason(api, operators):
    alarm = SisbajudAlarm(code="ledger.orphan-operation", message="foreign operation")
    orphan = SisbajudOrphan(operation_id="op-7", transaction_id="tx-7", institution_id="BANK",
                            block_alias="@block_sisbajud_ab", account_id="acc-1")
    await _add(api, alarm, orphan)
    url = f"/api/sisbajud/alarms/{alarm.id}/acknowledgement"
    _refused(await api.post(url, json=WHY, headers=_as("ana", "wrong")), 401,
             "sisbajud.operator-invalid")
    _refused(await api.post(url, json=WHY, headers=_as("nobody")), 401,
             "sisbajud.operator-invalid")
    done = await api.post(url, json=WHY, headers=_as("ana"))
    assert done.status_code == 200, done.text
    assert done.json()["acknowledgedBy"] == "operator:ana"
    _refused(await api.post(url, json=WHY, headers=_as("bruno")), 409,
             "sisbajud.already-acknowledged")
    acked = await _get(api, SisbajudAlarm, alarm.id)
    assert (acked.acknowledged_by, acked.acknowledgement_reason) == ("operator:ana",
                                                                     WHY["reason"])
    orphan_url = "/api/sisbajud/orphans/op-7/acknowledgement"
    assert (await api.post(orphan_url, json=WHY, headers=_as("bruno"))).status_code == 200
    _refused(await api.post(orphan_url, json=WHY, headers=AUTH), 409,
             "sisbajud.already-acknowledged")
    _refused(await api.post("/api/sisbajud/orphans/op-0/acknowledgement", json=WHY,
                            headers=AUTH), 404, "resource.not-found")
    assert (await _get(api, SisbajudOrphan, "op-7")).acknowledged_by == "operator:bruno"
    listed = (await api.get("/api/sisbajud/alarms", headers=AUTH)).json()["items"]
    assert [a["acknowledgedBy"] for a in listed if a["id"] == alarm.id] == ["operator:ana"]
    assert [e.actor for e in await _events(api, "AlarmAcknowledged")] == ["operator:ana"]
    assert [e.actor for e in await _events(api, "OrphanAcknowledged")] == ["operator:bruno"]


HELD = {"reason": "the bank statement shows the block", "effect": "FULL",
        "reasonCode": "BLOCKED_TOTAL", "executedAmount": "30",
        "transactionId": "0190b000-0000-7000-8000-00000000beef"}


async def test_held_money_needs_a_second_person_who_confirms_the_same_resolution(api,
                                                                                 operators):
    order_id = new_order_id()
    decision = SisbajudHumanDecision(order_id=order_id, revision=1,
                                     reason="ledger.write-indeterminate",
                                     disposition="HELD_MONEY_MOVED")
    await _add(api, decision)
    url = f"/api/sisbajud/human-decisions/{decision.id}/resolution"
    _refused(await api.post(url, json={**HELD, "actor": "someone.else"}, headers=_as("ana")),
             422, "sisbajud.actor-not-credential")
    # Held money that moved becomes the write's effect: it needs the amount and transaction.
    for missing in ("transactionId", "executedAmount"):
        partial = {k: v for k, v in HELD.items() if k != missing}
        _refused(await api.post(url, json=partial, headers=_as("ana")), 422,
                 "request.invalid")
    proposed = await api.post(url, json=HELD, headers=_as("ana"))
    assert proposed.status_code == 202, proposed.text
    assert (proposed.json()["status"], proposed.json()["proposedBy"]) == ("proposed",
                                                                          "operator:ana")
    _refused(await api.post(url, json=HELD, headers=_as("ana")), 409, "sisbajud.same-actor")
    _refused(await api.post(url, json={**HELD, "executedAmount": "10"}, headers=_as("bruno")),
             409, "sisbajud.proposal-mismatch")
    row = await _get(api, SisbajudHumanDecision, decision.id)
    assert (row.resolved_at, row.proposed_by, row.proposal["executedAmount"]) == (
        None, "operator:ana", "30")
    # The confirmation reaches the order's workflow; there is none here, so it is refused.
    _refused(await api.post(url, json=HELD, headers=_as("bruno")), 409,
             "sisbajud.decision-not-open")
    listed = (await api.get("/api/sisbajud/human-decisions?open=true",
                            headers=AUTH)).json()["items"]
    (item,) = [d for d in listed if d["id"] == decision.id]
    assert (item["proposedBy"], item["proposalReason"]) == ("operator:ana", HELD["reason"])
    assert (item["ledgerProof"], item["proofFoundAt"]) == (None, None)
    (event,) = await _events(api, "HumanDecisionProposed")
    assert (event.actor, event.properties["decision_id"]) == ("operator:ana", decision.id)


async def test_a_resolution_that_frees_money_needs_two_people_even_without_held_money(
        api, operators):
    decision = SisbajudHumanDecision(order_id=new_order_id(), revision=1,
                                     reason="release.salary-account")
    await _add(api, decision)
    url = f"/api/sisbajud/human-decisions/{decision.id}/resolution"
    freed = {"reason": "the judge allowed it", "effect": "PARTIAL",
             "reasonCode": "UNBLOCKED_PARTIAL", "executedAmount": "5"}
    assert (await api.post(url, json=freed, headers=_as("ana"))).status_code == 202
    _refused(await api.post(url, json=freed, headers=_as("ana")), 409, "sisbajud.same-actor")


async def test_the_shared_api_key_is_nobody_so_it_neither_proposes_nor_confirms(api,
                                                                                operators):
    # Whoever holds the key may also be `ana`: the key proposing and ana confirming (or the
    # other way round) would be one person moving money alone.
    decision = SisbajudHumanDecision(order_id=new_order_id(), revision=1,
                                     reason="ledger.write-indeterminate",
                                     disposition="HELD_MONEY_MOVED")
    await _add(api, decision)
    url = f"/api/sisbajud/human-decisions/{decision.id}/resolution"
    _refused(await api.post(url, json=HELD, headers=AUTH), 401, "sisbajud.operator-invalid")
    assert (await api.post(url, json=HELD, headers=_as("ana"))).status_code == 202
    _refused(await api.post(url, json=HELD, headers=AUTH), 401, "sisbajud.operator-invalid")
    row = await _get(api, SisbajudHumanDecision, decision.id)
    assert (row.proposed_by, row.resolved_at) == ("operator:ana", None)


async def test_two_people_release_held_money_on_a_running_order(api, operators, settings,
                                                                task_queue, temporal_env):
    client, order_id = temporal_env.client, new_order_id()
    world = await World(sisbajud_settings(settings, task_queue, heartbeat_every_seconds=0.3,
                                          human_decision_after_beats=1)).start()
    try:
        await world.account("@two", "100")
        await world.order(order_id, amount="30")
        (await world.midaz.post("/_sim/faults", json={
            "route": "transactions.create.block", "kind": "error", "status": 409,
            "code": "0084"})).raise_for_status()
        async with world.worker(client):
            handle = await world.hold(client, order_id, "HUMAN_DECISION")
            (decision,) = await stored(world, SisbajudHumanDecision, order_id=order_id)
            assert decision.disposition == "HELD_MONEY_MOVED"
            url = f"/api/sisbajud/human-decisions/{decision.id}/resolution"
            # A transaction Midaz does not show: the decision stays open, nothing guessed.
            assert (await api.post(url, json=HELD, headers=_as("ana"))).status_code == 202
            _refused(await api.post(url, json=HELD, headers=_as("bruno")), 409,
                     "sisbajud.transaction-unproven")
            # The one the people found in the ledger: 30 moved into the block account.
            moved = await world.midaz.post(f"{world.ledger.base}/transactions/json", json=send(
                {"@two": "30"}, {block_account_alias(order_id): "30"}))
            held = {**HELD, "transactionId": moved.json()["id"]}
            assert (await api.post(url, json=held, headers=_as("ana"))).status_code == 202
            _refused(await api.post(url, json=held, headers=_as("ana")), 409,
                     "sisbajud.same-actor")
            done = await api.post(url, json=held, headers=_as("bruno"))
            assert done.status_code == 200, done.text
            assert done.json()["resultKey"] == f"{order_id}:1:1"
            await handle.result()
            await world.tick(client)
        (final,) = [r for r in finals(await world.results(order_id))
                    if r["idempotencyKey"] == f"{order_id}:1:1"]
        assert final["body"]["effect"] == "FULL"
        assert Decimal(final["body"]["executedAmount"]) == 30
        (row,) = await stored(world, SisbajudHumanDecision, order_id=order_id)
        assert (row.proposed_by, row.resolved_by) == ("operator:ana",
                                                      "operator:bruno, confirming operator:ana")
    finally:
        await world.close()


async def test_a_requeued_parked_order_runs_again_and_each_state_goes_out_once(
        api, settings, task_queue, temporal_env):
    client, order_id = temporal_env.client, new_order_id()
    world = await World(sisbajud_settings(settings, task_queue)).start()
    try:
        await world.account("@again", "100")
        await world.order(order_id, amount="10")
        (await world.midaz.post("/_sim/faults", json={
            "route": "transactions.create.block", "kind": "reject", "status": 422,
            "code": "0024"})).raise_for_status()  # once: the next try goes through
        async with world.worker(client):
            await world.execute(client, order_id)
            await world.until_state(order_id, "PARKED")
            await world.tick(client)
            done = await api.post(f"/api/sisbajud/orders/{order_id}/requeue", json=WHY,
                                  headers=AUTH)
            assert done.status_code == 202, done.text
            await world.tick(client)  # ingests the requeued notice
            await world.until_state(order_id, "RESOLVED")
            await world.tick(client)
        received = await world.results(order_id)
        assert states(received) == [("accepted", "ACCEPTED"), ("executing", "EXECUTING"),
                                    ("1", "RESOLVED")]
        assert len(received["attempts"]) == 3  # the second run's progress was not resent
        (tx,) = await world.transactions()
        assert tx["metadata"]["code"] == f"{order_id}:1"
    finally:
        await world.close()
