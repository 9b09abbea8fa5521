"""DESBLOQUEIO and the information request: each reason code and each human decision."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from activities.sisbajud.contracts.ledger import PlanInput
from activities.sisbajud.contracts.orders import block_account_alias
from activities.sisbajud.models import SisbajudHumanDecision, SisbajudOrder
from activities.sisbajud.plans import PlanActivities
from activities.sisbajud.wire import order_from_wire
from services.simulators.midaz.testkit import send
from tests.support.sisbajud import MIDAZ, new_order_id, stored
from tests.support.sisbajud_states import final_keys, finals

pytestmark = pytest.mark.parametrize("backend", ["sqlite"])


async def _row(world, order_id):
    (row,) = await stored(world, SisbajudOrder, order_id=order_id)
    return row


async def _results(world, order_id):
    return [r["body"] for r in finals(await world.results(order_id))]


async def test_release_goes_back_to_each_source_until_nothing_is_left(world, temporal_env):
    client = temporal_env.client
    await world.account("@r-1", "40")
    await world.account("@r-2", "20")
    parent, first, second, third = (new_order_id() for _ in range(4))
    await world.order(parent, amount="60")
    await world.order(first, "DESBLOQUEIO", amount="50", parentOrderId=parent)
    await world.order(second, "DESBLOQUEIO", amount="100", parentOrderId=parent)
    await world.order(third, "DESBLOQUEIO", amount="100", parentOrderId=parent)
    async with world.worker(client):
        for order_id in (parent, first, second, third):
            await world.execute(client, order_id)
        await world.tick(client)
    assert ((await _row(world, first)).reason_code, (await _row(world, first)).effect) == (
        "UNBLOCKED_TOTAL", "FULL")
    assert (await _row(world, second)).reason_code == "UNBLOCKED_PARTIAL"
    assert (await _row(world, second)).executed_amount == "10"
    third_row = await _row(world, third)
    assert (third_row.effect, third_row.reason_code) == ("NONE", "NOTHING_TO_RELEASE")
    assert (await world.balance("@r-1"), await world.balance("@r-2")) == (40, 20)
    assert await world.balance(block_account_alias(parent)) == 0
    unblocks = [t for t in await world.transactions() if t["_kind"] == "unblock"]
    assert [t["source"] for t in unblocks] == [[block_account_alias(parent)]] * 2
    assert unblocks[0]["metadata"]["code"] == f"{first}:1"
    assert (await _results(world, third))[0]["reasonCode"] == "NOTHING_TO_RELEASE"


async def test_release_is_capped_by_the_block_account_balance(world, temporal_env):
    client = temporal_env.client
    await world.account("@cap-1", "80")
    parent, child = new_order_id(), new_order_id()
    await world.order(parent, amount="80")
    await world.order(child, "DESBLOQUEIO", amount="80", parentOrderId=parent)
    async with world.worker(client):
        await world.execute(client, parent)
        # Someone else moved money out of the block account: only what is there is released.
        await world.account("@elsewhere", "0", document="0")
        (await world.midaz.post(f"{world.ledger.base}/transactions/json", json=send(
            {block_account_alias(parent): "30"}, {"@elsewhere": "30"}))).raise_for_status()
        await world.execute(client, child)
    row = await _row(world, child)
    assert (row.reason_code, row.executed_amount) == ("UNBLOCKED_PARTIAL", "50")


async def test_without_a_parent_the_result_is_parent_unresolved(world, temporal_env):
    order_id = new_order_id()
    await world.order(order_id, "DESBLOQUEIO", amount="10")
    async with world.worker(temporal_env.client):
        await world.execute(temporal_env.client, order_id)
    row = await _row(world, order_id)
    assert (row.effect, row.reason_code) == ("NONE", "PARENT_UNRESOLVED")
    assert await world.transactions() == []


async def test_a_release_to_a_salary_account_goes_to_a_human(world, temporal_env):
    client = temporal_env.client
    await world.account("@sal", "70", kind="SLRY")
    parent, child = new_order_id(), new_order_id()
    await world.order(parent, amount="70", allowSalaryAccounts=True)
    await world.order(child, "DESBLOQUEIO", amount="70", parentOrderId=parent)
    async with world.worker(client):
        await world.execute(client, parent)
        await world.hold(client, child)
    (decision,) = await stored(world, SisbajudHumanDecision, order_id=child)
    assert decision.reason == "release.salary-account"
    assert [t["_kind"] for t in await world.transactions()] == ["block"]


async def test_an_unknown_parent_waits_then_goes_to_a_human_at_the_deadline(world,
                                                                           temporal_env):
    child = new_order_id()
    deadline = datetime.now(UTC) + timedelta(seconds=2)
    await world.order(child, "DESBLOQUEIO", amount="10", parentOrderId=new_order_id(),
                      deadline=deadline.isoformat())
    async with world.worker(temporal_env.client):
        await world.hold(temporal_env.client, child)
    assert datetime.now(UTC) >= deadline
    (decision,) = await stored(world, SisbajudHumanDecision, order_id=child)
    assert decision.reason == "parent.unknown-at-deadline"
    assert final_keys(await world.results(child)) == []


async def test_a_waiting_release_proceeds_once_the_parent_resolves(world, temporal_env):
    client = temporal_env.client
    await world.account("@late", "25")
    parent, child = new_order_id(), new_order_id()
    await world.order(parent, amount="25")
    await world.order(child, "DESBLOQUEIO", amount="25", parentOrderId=parent,
                      deadline=(datetime.now(UTC) + timedelta(minutes=5)).isoformat())
    async with world.worker(client):
        waiting = asyncio.create_task(world.execute(client, child))
        for _ in range(50):
            if (await stored(world, SisbajudOrder, order_id=child, state="WAITING_PARENT")):
                break
            await asyncio.sleep(0.1)
        else:
            pytest.fail("the release never waited for its parent")
        await world.execute(client, parent)
        await waiting
    assert (await _row(world, child)).reason_code == "UNBLOCKED_TOTAL"
    assert await world.balance("@late") == 25


async def test_info_request_reads_totals_and_writes_nothing(world, temporal_env):
    client = temporal_env.client
    await world.account("@i-1", "100.25")
    await world.account("@i-sal", "50", kind="SLRY")
    await world.account("@i-od", "0", allowOverdraft=True)
    client_order, non_client, by_account = new_order_id(), new_order_id(), new_order_id()
    await world.order(client_order, "REQUISICAO_INFORMACAO", amount="0")
    await world.order(non_client, "REQUISICAO_INFORMACAO", subject={"document": "1"})
    await world.order(by_account, "REQUISICAO_INFORMACAO", account="@i-sal")
    async with world.worker(client):
        for order_id in (client_order, non_client, by_account):
            await world.execute(client, order_id)
        await world.tick(client)
    (body,) = await _results(world, client_order)
    assert (body["effect"], body["reasonCode"]) == ("FULL", "INFO_FULFILLED")
    assert (body["blockableTotal"], body["blockableSalaryTotal"]) == ("150.25", "50.00")
    (none,) = await _results(world, non_client)
    assert (none["effect"], none["reasonCode"]) == ("NONE", "INFO_NON_CLIENT")
    (only,) = await _results(world, by_account)
    assert (only["blockableTotal"], only["blockableSalaryTotal"]) == ("50.00", "50.00")
    assert await world.transactions() == []


@pytest.mark.parametrize(("fields", "reason"), [
    ({"agency": "0001"}, "info.agency-given"),
    ({"account": "99999-9"}, "info.unknown-account"),
])
async def test_info_request_with_agency_or_unknown_account_goes_to_a_human(
        world, temporal_env, fields, reason):
    await world.account("@h-1", "10")
    order_id = new_order_id()
    await world.order(order_id, "REQUISICAO_INFORMACAO", **fields)
    async with world.worker(temporal_env.client):
        await world.hold(temporal_env.client, order_id)
    (decision,) = await stored(world, SisbajudHumanDecision, order_id=order_id)
    assert decision.reason == reason


async def test_legacy_crm_mode_finds_accounts_through_the_aliases_route(world):
    await world.account("@legacy-1", "12.5")
    legacy = world.settings.sisbajud.institutions[0].model_copy(
        update={"crm_mode": "legacy", "crm_base_url": MIDAZ})
    settings = world.settings.model_copy(update={"sisbajud": world.settings.sisbajud.model_copy(
        update={"institutions": [legacy]})})
    order = order_from_wire(await world.order(new_order_id(), "REQUISICAO_INFORMACAO"))
    plan = await PlanActivities(settings, world.sessions, world.http).plan_info(
        PlanInput(order=order))
    assert (plan.reason_code, plan.blockable_total) == ("INFO_FULFILLED", Decimal("12.5"))
