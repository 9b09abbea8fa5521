"""BLOQUEIO from order to ledger to result: each reason code, own funds, salary, revisions."""

from __future__ import annotations

from decimal import Decimal

import pytest

from activities.sisbajud.contracts.orders import OrderState, block_account_alias
from activities.sisbajud.models import SisbajudAlarm, SisbajudOrder, SisbajudWrite
from services.simulators.midaz.testkit import send
from tests.support.sisbajud import new_order_id, stored
from tests.support.sisbajud_states import final_keys, finals, states

SQLITE_ONLY = pytest.mark.parametrize("backend", ["sqlite"])


async def _run(world, client, order_id, revision=1):
    async with world.worker(client):
        run = await world.execute(client, order_id, revision)
        await world.tick(client)
    (row,) = await stored(world, SisbajudOrder, order_id=order_id)
    return run, row


async def test_full_block_writes_one_leg_per_account_and_the_result_drains(world, temporal_env):
    order_id = new_order_id()
    await world.account("@cc-1", "60")
    await world.account("@cc-2", "70")
    await world.order(order_id, amount="100")
    run, row = await _run(world, temporal_env.client, order_id)
    assert run.last_state == OrderState.RESOLVED and run.executed == [1]
    assert (row.effect, row.reason_code, row.executed_amount) == ("FULL", "BLOCKED_TOTAL", "100")
    alias = block_account_alias(order_id)
    assert await world.balance(alias) == 100
    assert (await world.balance("@cc-1"), await world.balance("@cc-2")) == (0, 30)
    (tx,) = await world.transactions()
    assert tx["_kind"] == "block" and tx["destination"] == [alias]
    assert tx["metadata"]["code"] == f"{order_id}:1"
    keys = [k["key"] for k in (await world.midaz.get("/_sim/idempotency")).json()]
    assert any(k.endswith(f":{order_id}:1}}") for k in keys)
    results = await world.results(order_id)
    assert final_keys(results) == [f"{order_id}:1:1"]
    # Claimed, then about to write, then the final result: each once, under its own key.
    assert states(results) == [("accepted", "ACCEPTED"), ("executing", "EXECUTING"),
                               ("1", "RESOLVED")]
    assert len(results["attempts"]) == 3
    body = finals(results)[0]["body"]
    assert (body["executionState"], body["effect"], body["reasonCode"]) == (
        "RESOLVED", "FULL", "BLOCKED_TOTAL")
    assert body["executedAmount"] == "100.00" and body["blockAccountAlias"] == alias


@SQLITE_ONLY
async def test_partial_block_when_own_funds_fall_short(world, temporal_env):
    order_id = new_order_id()
    await world.account("@p-1", "25.50")
    await world.order(order_id, amount="100")
    _, row = await _run(world, temporal_env.client, order_id)
    assert (row.effect, row.reason_code, row.executed_amount) == ("PARTIAL", "BLOCKED_PARTIAL",
                                                                  "25.5")
    body = finals(await world.results(order_id))[0]["body"]
    assert body["effect"] == "PARTIAL" and body["reasonCode"] == "BLOCKED_PARTIAL"


@SQLITE_ONLY
async def test_no_balance_and_no_client_write_nothing(world, temporal_env):
    broke, stranger = new_order_id(), new_order_id()
    await world.account("@empty", "0")
    await world.order(broke, amount="10")
    await world.order(stranger, amount="10", subject={"document": "99999999999"})
    _, broke_row = await _run(world, temporal_env.client, broke)
    _, stranger_row = await _run(world, temporal_env.client, stranger)
    assert (broke_row.effect, broke_row.reason_code) == ("NONE", "NO_BALANCE")
    assert (stranger_row.effect, stranger_row.reason_code) == ("NONE", "NO_CLIENT")
    assert await world.transactions() == []
    assert await stored(world, SisbajudWrite) == []
    assert len(final_keys(await world.results())) == 2
    # No write, so no EXECUTING: accepted, then the final result.
    assert states(await world.results(broke)) == [("accepted", "ACCEPTED"), ("1", "RESOLVED")]


@SQLITE_ONLY
async def test_overdraft_counts_as_zero_and_legs_stop_at_available(world, temporal_env):
    # An account that may overdraw: Midaz would let a bigger leg through, so we cap it.
    await world.account("@od-cap", "30", allowOverdraft=True)
    # An account already in overdraft: nothing of its own to block.
    await world.account("@od-used", "0", allowOverdraft=True)
    await world.account("@bank", "0", document="00000000000")
    (await world.midaz.post(f"{world.ledger.base}/transactions/json",
                            json=send({"@od-used": "50"}, {"@bank": "50"}))).raise_for_status()
    order_id = new_order_id()
    await world.order(order_id, amount="100")
    _, row = await _run(world, temporal_env.client, order_id)
    assert (row.effect, row.reason_code, row.executed_amount) == ("PARTIAL", "BLOCKED_PARTIAL",
                                                                  "30")
    (_, tx) = await world.transactions()
    assert [op["accountAlias"] for op in tx["operations"] if op["direction"] == "debit"] == [
        "@od-cap"]
    assert all(op["balanceKey"] == "default" for op in tx["operations"])


@SQLITE_ONLY
async def test_salary_accounts_only_when_the_order_allows_them(world, temporal_env):
    await world.account("@salary", "80", kind="SLRY")
    refused, allowed = new_order_id(), new_order_id()
    await world.order(refused, amount="50")
    await world.order(allowed, amount="50", allowSalaryAccounts=True)
    _, refused_row = await _run(world, temporal_env.client, refused)
    _, allowed_row = await _run(world, temporal_env.client, allowed)
    assert refused_row.reason_code == "NO_BALANCE"
    assert (allowed_row.effect, allowed_row.reason_code) == ("FULL", "BLOCKED_TOTAL")
    assert await world.balance("@salary") == 30


@SQLITE_ONLY
async def test_agency_and_account_restriction(world, temporal_env):
    await world.account("@ag-1", "40", branch="0001")
    await world.account("@ag-2", "40", branch="0002")
    by_agency, elsewhere = new_order_id(), new_order_id()
    await world.order(by_agency, amount="100", agency="0002")
    await world.order(elsewhere, amount="100", agency="0009")
    _, row = await _run(world, temporal_env.client, by_agency)
    _, none_row = await _run(world, temporal_env.client, elsewhere)
    assert (row.reason_code, row.executed_amount) == ("BLOCKED_PARTIAL", "40")
    assert (await world.balance("@ag-1"), await world.balance("@ag-2")) == (40, 0)
    assert none_row.reason_code == "NO_CLIENT"


@SQLITE_ONLY
async def test_a_new_revision_blocks_only_what_is_still_open(world, temporal_env):
    order_id = new_order_id()
    await world.account("@rev", "40")
    await world.order(order_id, amount="100")
    _, first = await _run(world, temporal_env.client, order_id)
    assert first.reason_code == "BLOCKED_PARTIAL"
    await world.account("@rev-2", "500")  # money arrives before the next revision
    await world.order(order_id, amount="100", revision=2)
    _, second = await _run(world, temporal_env.client, order_id, revision=2)
    assert (second.revision, second.reason_code, second.executed_amount) == (
        2, "BLOCKED_TOTAL", "60")
    assert await world.balance(block_account_alias(order_id)) == Decimal(100)
    assert final_keys(await world.results(order_id)) == [f"{order_id}:1:1", f"{order_id}:2:1"]
    assert sorted(w.idempotency_key for w in await stored(world, SisbajudWrite)) == [
        f"{order_id}:1", f"{order_id}:2"]


@SQLITE_ONLY
async def test_a_refused_write_parks_the_order_with_an_alarm(world, temporal_env):
    order_id = new_order_id()
    await world.account("@rej", "100")
    await world.order(order_id, amount="10")
    await world.midaz.post("/_sim/faults", json={"route": "transactions.create.block",
                                                  "kind": "reject", "code": "0024",
                                                  "status": 422})
    _, row = await _run(world, temporal_env.client, order_id)
    assert row.state == "PARKED"
    assert [a.code for a in await stored(world, SisbajudAlarm)] == ["ledger.write-rejected"]
    assert await world.transactions() == [] and final_keys(await world.results()) == []


@SQLITE_ONLY
async def test_insufficient_funds_at_write_time_plans_again_under_the_same_key(world,
                                                                              temporal_env):
    order_id = new_order_id()
    await world.account("@moving", "100")
    await world.order(order_id, amount="50")
    await world.midaz.post("/_sim/faults", json={"route": "transactions.create.block",
                                                  "kind": "reject", "code": "0018",
                                                  "status": 422})
    _, row = await _run(world, temporal_env.client, order_id)
    assert row.reason_code == "BLOCKED_TOTAL"
    (write,) = await stored(world, SisbajudWrite, order_id=order_id)
    assert write.idempotency_key == f"{order_id}:1" and write.attempts == 2
