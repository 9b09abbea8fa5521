"""Writes without proof: re-reads, heartbeats, the human decision, a person's resolution."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from temporalio.client import WorkflowUpdateFailedError
from temporalio.service import RPCError

from activities.sisbajud.contracts.orders import (
    Effect,
    OrderState,
    ReasonCode,
    ResolveDecisionInput,
    ResolveDecisionResult,
    block_account_alias,
)
from activities.sisbajud.models import (
    SisbajudAlarm,
    SisbajudHumanDecision,
    SisbajudOutbox,
    SisbajudWrite,
)
from shared.db.models import OperationalEvent
from tests.support.sisbajud import World, new_order_id, serve, stored
from tests.support.sisbajud_states import finals, numbered, states

pytestmark = pytest.mark.parametrize("backend", ["sqlite"])
BLOCK = "transactions.create.block"


async def _fault(world, **fault) -> None:
    (await world.midaz.post("/_sim/faults", json={"route": BLOCK, **fault})).raise_for_status()


async def _keys(world, order_id) -> list[dict]:
    return [k for k in (await world.midaz.get("/_sim/idempotency")).json()
            if k["key"].endswith(f":{order_id}:1}}")]


async def _outbox(world, order_id) -> list[SisbajudOutbox]:
    """Heartbeats and final results queued (progress states left out)."""
    return sorted((r for r in await stored(world, SisbajudOutbox, order_id=order_id)
                   if numbered(r.idempotency_key)), key=lambda r: r.id or 0)  # stored: ids set


async def test_apply_then_500_is_indeterminate_until_the_lag_passes_then_full(make_world,
                                                                             temporal_env):
    world = await make_world(heartbeat_every_seconds=0.4, human_decision_after_beats=20)
    client, order_id = temporal_env.client, new_order_id()
    await world.account("@lag", "100")
    await world.order(order_id, amount="10")
    # Balances move, Midaz answers 500 0095, the key stays claimed-but-empty and the
    # transaction shows up in reads only 1.5 s later.
    await _fault(world, kind="write_without_proof", recovery_s=1.5)
    async with world.worker(client):
        handle = await world.start_order(client, order_id)
        await world.until_state(order_id, "INDETERMINATE")
        run = await handle.result()
        await world.tick(client)
    assert run.last_state == OrderState.RESOLVED
    (tx,) = await world.transactions()
    assert tx["metadata"]["code"] == f"{order_id}:1"
    assert await world.balance(block_account_alias(order_id)) == 10
    (write,) = await stored(world, SisbajudWrite, order_id=order_id)
    assert (write.state, write.transaction_id, write.attempts) == ("APPLIED", tx["id"], 1)
    # What the proven transaction moved, as its operations show it.
    assert [(leg["account_alias"], Decimal(leg["amount"])) for leg in write.applied_legs] == [
        ("@lag", 10)]
    assert [k["filled"] for k in await _keys(world, order_id)] == [False]  # 409 0084 for days
    received = await world.results(order_id)
    results = finals(received)
    beats, final = results[:-1], results[-1]
    # Beats while the executor still re-reads say MONITORING, the effect still unknown.
    assert beats and all((b["body"]["executionState"], b["body"]["effect"])
                         == ("MONITORING", "INDETERMINATE") for b in beats)
    assert states(received) == [("accepted", "ACCEPTED"), ("executing", "EXECUTING"),
                                *[(str(n + 2), "MONITORING") for n in range(len(beats))],
                                ("1", "RESOLVED")]
    assert [b["idempotencyKey"] for b in beats] == [f"{order_id}:1:{n + 2}"
                                                     for n in range(len(beats))]
    assert final["idempotencyKey"] == f"{order_id}:1:1"
    assert (final["body"]["effect"], final["body"]["reasonCode"]) == ("FULL", "BLOCKED_TOTAL")
    assert await stored(world, SisbajudHumanDecision, order_id=order_id) == []


async def test_apply_then_timeout_is_proven_by_the_replay_of_the_same_key(make_world,
                                                                         temporal_env):
    world = await make_world()
    client, order_id = temporal_env.client, new_order_id()
    await world.account("@slow", "50")
    await world.order(order_id, amount="20")
    await _fault(world, kind="timeout_after_write", delay_s=3)
    with serve(world.midaz_app) as midaz:
        institution = world.settings.sisbajud.institutions[0].model_copy(
            update={"base_url": midaz})
        settings = world.settings.model_copy(update={"sisbajud": world.settings.sisbajud
                                                     .model_copy(update={
                                                         "institutions": [institution]})})
        real = World(settings, apps=(world.midaz_app, world.mensageria_app), http_timeout=1)
        try:
            async with real.worker(client):
                run = await real.execute(client, order_id)
        finally:
            await real.close()
    assert run.last_state == OrderState.RESOLVED
    (tx,) = await world.transactions()
    (write,) = await stored(world, SisbajudWrite, order_id=order_id)
    assert (write.state, write.replayed, write.transaction_id) == ("APPLIED", True, tx["id"])
    assert await world.balance(block_account_alias(order_id)) == 20


async def test_no_proof_after_n_beats_goes_to_a_person_and_the_beats_go_on(make_world,
                                                                          temporal_env):
    world = await make_world(heartbeat_every_seconds=0.3, human_decision_after_beats=2)
    client, order_id = temporal_env.client, new_order_id()
    await world.account("@held", "100")
    await world.order(order_id, amount="30")
    await _fault(world, kind="error", status=409, code="0084")  # a claim without a value
    async with world.worker(client):
        handle = await world.hold(client, order_id, "HUMAN_DECISION")
        (decision,) = await stored(world, SisbajudHumanDecision, order_id=order_id)
        assert (decision.reason, decision.disposition) == ("ledger.write-indeterminate",
                                                           "HELD_MONEY_MOVED")
        assert decision.resolved_at is None and "2 heartbeats" in decision.detail
        assert len(await _outbox(world, order_id)) >= 2
        for _ in range(100):  # heartbeats continue while the person decides
            if len(await _outbox(world, order_id)) >= 4:
                break
            await asyncio.sleep(0.05)
        await world.tick(client)
        sent = finals(await world.results(order_id))
        assert len(sent) >= 4 and all(r["body"]["effect"] == "INDETERMINATE" for r in sent)
        # Two beats of monitoring, then the money is held for a person: the seed's
        # INDETERMINATE beats, and no AWAITING_RECONCILIATION for held money.
        assert [r["body"]["executionState"] for r in sent[:3]] == [
            "MONITORING", "MONITORING", "INDETERMINATE"]
        assert {r["body"]["executionState"] for r in sent[2:]} == {"INDETERMINATE"}
        assert states(await world.results(order_id))[:2] == [("accepted", "ACCEPTED"),
                                                             ("executing", "EXECUTING")]
        assert f"{order_id}:1:1" not in [r["idempotencyKey"] for r in sent]  # no final answer
        resolution = ResolveDecisionInput(
            revision=1, effect=Effect.NONE, reason_code=ReasonCode.NO_BALANCE,
            executed_amount=Decimal(0), actor="ana.souza", reason="ledger shows no movement")
        done = await handle.execute_update("resolve", resolution,
                                           result_type=ResolveDecisionResult)
        assert done.result_key == f"{order_id}:1:1"
        # Refused by the validator, or by the server once the run has ended.
        with pytest.raises((WorkflowUpdateFailedError, RPCError)):
            await handle.execute_update("resolve", resolution)
        run = await handle.result()
        await world.tick(client)
        await world.tick(client)
    assert run.last_state == OrderState.RESOLVED
    received = await world.results(order_id)
    final = [r for r in finals(received) if r["idempotencyKey"] == f"{order_id}:1:1"]
    assert len(final) == 1 and final[0]["body"]["effect"] == "NONE"
    assert "AWAITING_RECONCILIATION" not in {state for _, state in states(received)}
    (decision,) = await stored(world, SisbajudHumanDecision, order_id=order_id)
    assert (decision.resolved_by, decision.resolution_reason) == ("ana.souza",
                                                                  "ledger shows no movement")
    assert decision.resolution["effect"] == "NONE"
    events = await stored(world, OperationalEvent, type="HumanDecisionResolved")
    assert [e.actor for e in events if e.properties.get("order_id") == order_id] == [
        "ana.souza"]
    assert await world.transactions() == []


async def test_the_deadline_margin_fires_before_any_beat(make_world, temporal_env):
    world = await make_world(heartbeat_every_seconds=60, human_decision_after_beats=3,
                             response_deadline_margin_seconds=3)
    client, order_id = temporal_env.client, new_order_id()
    await world.account("@late", "100")
    deadline = datetime.now(UTC) + timedelta(seconds=4)
    await world.order(order_id, amount="30", deadline=deadline.isoformat())
    await _fault(world, kind="error", status=503, code="0095")
    async with world.worker(client):
        await world.hold(client, order_id, "HUMAN_DECISION")
    assert datetime.now(UTC) >= deadline - timedelta(seconds=3)
    (decision,) = await stored(world, SisbajudHumanDecision, order_id=order_id)
    assert decision.disposition == "HELD_MONEY_MOVED" and "deadline" in decision.detail
    assert await _outbox(world, order_id) == []  # the first beat is a minute away
    keys = sorted(r.idempotency_key for r in await stored(world, SisbajudOutbox,
                                                          order_id=order_id))
    assert keys == [f"{order_id}:1:accepted", f"{order_id}:1:executing"]


async def test_a_person_resolves_an_unconfigured_institution_once(make_world, temporal_env):
    world = await make_world()
    client, order_id = temporal_env.client, new_order_id()
    await world.order(order_id, institutionId="UNKNOWN-BANK")
    async with world.worker(client):
        handle = await world.hold(client, order_id)
        update = ResolveDecisionInput(revision=1, effect=Effect.FULL,
                                      reason_code=ReasonCode.BLOCKED_TOTAL,
                                      executed_amount=Decimal(100), actor="rui",
                                      reason="blocked by hand at the branch")
        with pytest.raises(WorkflowUpdateFailedError):  # not the waiting revision
            await handle.execute_update("resolve", update.model_copy(update={"revision": 2}))
        await handle.execute_update("resolve", update, result_type=ResolveDecisionResult)
        await handle.result()
        await world.tick(client)
    (result,) = finals(await world.results(order_id))
    assert (result["body"]["effect"], result["body"]["executedAmount"]) == ("FULL", "100.00")


async def test_503_0178_moved_nothing_so_it_is_deferred_not_indeterminate(make_world,
                                                                         temporal_env):
    # Midaz's fail-closed usage-limit reservation: rejected before any balance moves, the
    # key released (LerianStudio/midaz, ErrTransactionReservationUnavailable).
    world = await make_world(heartbeat_every_seconds=0.3, human_decision_after_beats=1)
    client, order_id = temporal_env.client, new_order_id()
    await world.account("@reserve", "100")
    await world.order(order_id, amount="25")
    await _fault(world, kind="reject", status=503, code="0178")
    async with world.worker(client):
        run = await asyncio.wait_for(world.execute(client, order_id), 30)
        await world.tick(client)
    assert run.last_state == OrderState.RESOLVED
    (write,) = await stored(world, SisbajudWrite, order_id=order_id)
    assert (write.state, write.attempts) == ("APPLIED", 2)
    (tx,) = await world.transactions()
    assert tx["metadata"]["code"] == f"{order_id}:1"
    assert await world.balance(block_account_alias(order_id)) == 25
    alarms = [a.code for a in await stored(world, SisbajudAlarm, order_id=order_id)]
    assert alarms == ["ledger.write-deferred"]
    assert await stored(world, SisbajudHumanDecision, order_id=order_id) == []
    received = await world.results(order_id)
    assert "MONITORING" not in {state for _, state in states(received)}
    (final,) = finals(received)
    assert (final["body"]["effect"], final["body"]["reasonCode"]) == ("FULL", "BLOCKED_TOTAL")
