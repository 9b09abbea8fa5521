"""Held money: a person's two-person resolution is the write's effect; a later proof waits."""

from __future__ import annotations

import asyncio
from decimal import Decimal

import pytest

from activities.sisbajud.contracts.orders import OrderState, block_account_alias
from activities.sisbajud.gauges import uncertain_writes
from activities.sisbajud.metrics import UNCERTAIN_WRITES
from activities.sisbajud.models import (
    SisbajudAlarm,
    SisbajudHumanDecision,
    SisbajudOrder,
    SisbajudWrite,
)
from activities.sisbajud.operator import Proposed, ResolutionIn, Resolved, SisbajudOperations
from services.simulators.midaz.testkit import send
from shared.db.models import OperationalEvent
from shared.errors import EsteiraError
from shared.temporal import TemporalHandle
from tests.support.sisbajud import new_order_id, stored
from tests.support.sisbajud_states import finals

pytestmark = pytest.mark.parametrize("backend", ["sqlite"])
BLOCK = "transactions.create.block"
ANA, RUI = "operator:ana.souza", "operator:rui.lima"


async def _write_without_proof(world, recovery_s: float) -> None:
    """Midaz moves the balances, answers 500 and shows the transaction `recovery_s` later."""
    (await world.midaz.post("/_sim/faults", json={
        "route": BLOCK, "kind": "write_without_proof",
        "recovery_s": recovery_s})).raise_for_status()


def _face(world, client) -> SisbajudOperations:
    return SisbajudOperations(world.settings, world.sessions, TemporalHandle.of(client),
                              http=world.http)


async def _two_people(world, client, decision_id: int, **decided) -> Resolved:
    face = _face(world, client)
    body = ResolutionIn(reason="the bank statement shows the block", **decided)
    proposed = await face.decisions.resolve(decision_id, body, ANA)
    assert isinstance(proposed, Proposed)
    done = await face.decisions.resolve(decision_id, body, RUI)
    assert isinstance(done, Resolved)
    return done


async def _indeterminate_gauge(world, client) -> float:
    await world.tick(client)  # stage 3 measures the writes without a known effect
    return UNCERTAIN_WRITES.labels("INDETERMINATE")._value.get()


async def test_a_release_after_the_resolution_returns_the_held_money(make_world,
                                                                    temporal_env):
    world = await make_world(heartbeat_every_seconds=0.3, human_decision_after_beats=2)
    client = temporal_env.client
    parent, release = new_order_id(), new_order_id()
    await world.account("@held-1", "100")
    await world.order(parent, amount="30")
    await world.order(release, "DESBLOQUEIO", amount="30", parentOrderId=parent)
    await _write_without_proof(world, recovery_s=10_000)  # not shown for hours
    async with world.worker(client):
        handle = await world.hold(client, parent, "HUMAN_DECISION")
        assert await world.balance("@held-1") == 70  # the money did move
        assert await _indeterminate_gauge(world, client) == 1
        (decision,) = await stored(world, SisbajudHumanDecision, order_id=parent)
        (tx,) = await world.transactions()
        with pytest.raises(EsteiraError) as refused:  # held money needs what moved it
            await _two_people(world, client, decision.id, effect="FULL",
                              reasonCode="BLOCKED_TOTAL", executedAmount=Decimal(30))
        assert refused.value.code == "request.invalid"
        held = {"effect": "FULL", "reasonCode": "BLOCKED_TOTAL",
                "executedAmount": Decimal(30), "transactionId": tx["id"]}
        # Midaz does not show the transaction yet: nothing is guessed, the decision stays open.
        with pytest.raises(EsteiraError) as unshown:
            await _two_people(world, client, decision.id, **held)
        assert unshown.value.code == "sisbajud.transaction-unproven"
        assert "does not show transaction" in str(unshown.value)
        (alarm,) = await stored(world, SisbajudAlarm, code="ledger.resolution-unproven")
        assert alarm.order_id == parent and tx["id"] in alarm.message
        (decision,) = await stored(world, SisbajudHumanDecision, order_id=parent)
        assert (decision.resolved_at, decision.proposed_by) == (None, None)  # propose again
        (await world.midaz.post("/_sim/clock", json={"advance_s": 10_001})).raise_for_status()
        done = await _two_people(world, client, decision.id, **held)
        assert done.resolved_by == f"{RUI}, confirming {ANA}"
        await handle.result()
        (write,) = await stored(world, SisbajudWrite, order_id=parent)
        assert (write.state, write.applied_amount, write.transaction_id) == (
            "APPLIED", "30", tx["id"])
        assert [(leg["account_alias"], Decimal(leg["amount"]))
                for leg in write.applied_legs] == [("@held-1", 30)]
        assert write.resolved_by == f"{RUI}, confirming {ANA}" and write.resolved_at
        async with world.sessions() as session:
            assert await uncertain_writes(session) == {}
        assert await _indeterminate_gauge(world, client) == 0
        run = await world.execute(client, release)
        await world.tick(client)
    assert run.last_state == OrderState.RESOLVED
    (row,) = await stored(world, SisbajudOrder, order_id=release)
    assert (row.effect, row.reason_code, row.executed_amount) == ("FULL", "UNBLOCKED_TOTAL",
                                                                  "30")
    assert await world.balance("@held-1") == 100
    assert await world.balance(block_account_alias(parent)) == 0
    (unblock,) = [t for t in await world.transactions() if t["_kind"] == "unblock"]
    assert unblock["metadata"]["code"] == f"{release}:1"
    events = await stored(world, OperationalEvent, type="LedgerWriteResolved")
    assert [e.properties["transaction_id"] for e in events
            if e.properties.get("order_id") == parent] == [tx["id"]]


async def test_a_resolution_of_no_effect_clears_the_gauge_and_frees_nothing(make_world,
                                                                           temporal_env):
    world = await make_world(heartbeat_every_seconds=0.3, human_decision_after_beats=2)
    client, order_id = temporal_env.client, new_order_id()
    await world.account("@none-1", "100")
    await world.order(order_id, amount="30")
    (await world.midaz.post("/_sim/faults", json={
        "route": BLOCK, "kind": "error", "status": 409, "code": "0084"})).raise_for_status()
    async with world.worker(client):
        handle = await world.hold(client, order_id, "HUMAN_DECISION")
        (decision,) = await stored(world, SisbajudHumanDecision, order_id=order_id)
        await _two_people(world, client, decision.id, effect="NONE", reasonCode="NO_BALANCE",
                          executedAmount=Decimal(0))
        await handle.result()
        assert await _indeterminate_gauge(world, client) == 0
    (write,) = await stored(world, SisbajudWrite, order_id=order_id)
    assert (write.state, write.applied_amount) == ("NO_EFFECT", None)


async def test_a_later_proof_is_shown_on_the_decision_and_the_people_still_decide(
        make_world, temporal_env):
    world = await make_world(heartbeat_every_seconds=0.3, human_decision_after_beats=2)
    client, order_id = temporal_env.client, new_order_id()
    await world.account("@late-1", "100")
    await world.order(order_id, amount="40")
    # The decision is registered after two beats (~0.6 s); the proof shows up at 2 s.
    await _write_without_proof(world, recovery_s=2)
    async with world.worker(client):
        handle = await world.hold(client, order_id, "HUMAN_DECISION")
        (tx,) = await world.transactions()
        for _ in range(200):
            (decision,) = await stored(world, SisbajudHumanDecision, order_id=order_id)
            if decision.ledger_proof:
                break
            await asyncio.sleep(0.05)
        assert decision.ledger_proof["transactionId"] == tx["id"]
        assert decision.ledger_proof["amount"] == "40.00" and decision.resolved_at is None
        beats = len(finals(await world.results(order_id)))
        await asyncio.sleep(1.2)  # beats go on after the proof, and no final answer
        await world.tick(client)
        sent = finals(await world.results(order_id))
        assert len(sent) >= beats + 2
        assert {(r["body"]["executionState"], r["body"]["effect"]) for r in sent[2:]} == {
            ("INDETERMINATE", "INDETERMINATE")}
        assert f"{order_id}:1:1" not in [r["idempotencyKey"] for r in sent]
        (row,) = await stored(world, SisbajudOrder, order_id=order_id)
        assert row.state == "HUMAN_DECISION"
        (write,) = await stored(world, SisbajudWrite, order_id=order_id)
        assert write.state == "INDETERMINATE"  # its effect is the people's to settle
        (shown,) = (await _face(world, client).decisions.list(True, 10)).items
        assert shown.ledger_proof is not None and shown.proof_found_at
        assert shown.ledger_proof["transactionId"] == tx["id"]
        events = [e for e in await stored(world, OperationalEvent,
                                          type="HumanDecisionProofFound")
                  if e.properties.get("order_id") == order_id]
        assert len(events) == 1 and events[0].properties["transactionId"] == tx["id"]
        await _two_people(world, client, decision.id, effect="FULL",
                          reasonCode="BLOCKED_TOTAL", executedAmount=Decimal(40),
                          transactionId=tx["id"])
        run = await handle.result()
        await world.tick(client)
    assert run.last_state == OrderState.RESOLVED
    final = [r for r in finals(await world.results(order_id))
             if r["idempotencyKey"] == f"{order_id}:1:1"]
    assert len(final) == 1 and final[0]["body"]["effect"] == "FULL"
    (decision,) = await stored(world, SisbajudHumanDecision, order_id=order_id)
    assert decision.resolved_by == f"{RUI}, confirming {ANA}"



async def test_the_release_returns_money_along_the_legs_the_resolved_transaction_moved(
        make_world, temporal_env):
    world = await make_world(heartbeat_every_seconds=0.3, human_decision_after_beats=2)
    client = temporal_env.client
    parent, release = new_order_id(), new_order_id()
    block = block_account_alias(parent)
    await world.account("@legs-a", "70")
    await world.account("@legs-b", "30")
    await world.order(parent, amount="100")  # planned: @legs-a 70, then @legs-b 30
    await world.order(release, "DESBLOQUEIO", amount="30", parentOrderId=parent)
    # Midaz answers 500 before anything moves: the write has no proof either way.
    (await world.midaz.post("/_sim/faults", json={
        "route": BLOCK, "kind": "error", "status": 500, "code": "0046"})).raise_for_status()
    async with world.worker(client):
        handle = await world.hold(client, parent, "HUMAN_DECISION")
        (write,) = await stored(world, SisbajudWrite, order_id=parent)
        assert [(leg["account_alias"], Decimal(leg["amount"])) for leg in write.legs] == [
            ("@legs-a", 70), ("@legs-b", 30)]
        # What did move: 30 from @legs-b only, in a transaction the people found.
        moved = await world.midaz.post(f"{world.ledger.base}/transactions/json",
                                       json=send({"@legs-b": "30"}, {block: "30"}))
        moved.raise_for_status()
        tx_id = moved.json()["id"]
        (decision,) = await stored(world, SisbajudHumanDecision, order_id=parent)
        with pytest.raises(EsteiraError) as mismatch:  # it moved 30, not 40
            await _two_people(world, client, decision.id, effect="PARTIAL",
                              reasonCode="BLOCKED_PARTIAL", executedAmount=Decimal(40),
                              transactionId=tx_id)
        assert mismatch.value.code == "sisbajud.transaction-unproven"
        assert "moved 30" in str(mismatch.value)
        assert await stored(world, SisbajudAlarm, code="ledger.resolution-unproven") == []
        await _two_people(world, client, decision.id, effect="PARTIAL",
                          reasonCode="BLOCKED_PARTIAL", executedAmount=Decimal(30),
                          transactionId=tx_id)
        await handle.result()
        (write,) = await stored(world, SisbajudWrite, order_id=parent)
        assert [(leg["account_alias"], Decimal(leg["amount"]))
                for leg in write.applied_legs] == [("@legs-b", 30)]
        run = await world.execute(client, release)
    assert run.last_state == OrderState.RESOLVED
    # Back to the account it came from; @legs-a, never debited, is not credited.
    assert (await world.balance("@legs-a"), await world.balance("@legs-b"),
            await world.balance(block)) == (70, 30, 0)
    (unblock,) = [t for t in await world.transactions() if t["_kind"] == "unblock"]
    assert [op["accountAlias"] for op in unblock["operations"]
            if op["direction"] == "credit"] == ["@legs-b"]
