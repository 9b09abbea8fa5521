"""The seed's fetch table and the ownership check, each row on the real dev server."""

from __future__ import annotations

import httpx
import pytest
from temporalio.exceptions import ApplicationError

from activities.sisbajud.contracts.orders import FetchOrderInput, OrderState
from activities.sisbajud.models import (
    SisbajudAlarm,
    SisbajudHumanDecision,
    SisbajudInstitution,
    SisbajudOrder,
)
from activities.sisbajud.orders import OrderActivities
from shared.db.models import utcnow
from tests.support.sisbajud import INSTITUTION, new_order_id, stored
from tests.support.sisbajud_states import final_keys

pytestmark = pytest.mark.parametrize("backend", ["sqlite"])


async def _execute(world, client, order_id):
    async with world.worker(client):
        run = await world.execute(client, order_id)
        await world.tick(client)
    (row,) = await stored(world, SisbajudOrder, order_id=order_id)
    return run, row


async def _fault(world, status, count=1, kind="status"):
    (await world.mensageria.post("/_sim/faults", json={
        "route": "orders.get", "kind": kind, "status": status, "count": count,
        "delay_s": 0.05})).raise_for_status()


async def test_withdrawn_orders_write_nothing(world, temporal_env):
    await world.account("@w-1", "100")
    for status in (404, 410):
        order_id = new_order_id()
        await world.order(order_id)
        await world.mensageria.post(f"/_sim/orders/{order_id}/withdraw",
                                    json={"status": status})
        run, row = await _execute(world, temporal_env.client, order_id)
        assert run.last_state == OrderState.WITHDRAWN and row.state == "WITHDRAWN"
    assert await world.transactions() == [] and final_keys(await world.results()) == []


async def test_401_429_5xx_and_timeouts_are_retried_with_backoff(world, temporal_env):
    order_id = new_order_id()
    await world.account("@t-1", "100")
    await world.order(order_id, amount="10")
    for status, kind in ((401, "status"), (429, "status"), (500, "status"), (503, "status"),
                         (504, "timeout")):
        await _fault(world, status, kind=kind)
    _, row = await _execute(world, temporal_env.client, order_id)
    assert row.reason_code == "BLOCKED_TOTAL"
    assert (await world.mensageria.get("/_sim/faults")).json() == []


async def test_a_network_error_on_fetch_is_retryable(world):
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    async with httpx.AsyncClient(transport=httpx.MockTransport(refuse)) as http:
        activities = OrderActivities(world.settings, world.sessions, http)
        with pytest.raises(ApplicationError) as raised:
            await activities.fetch_order(FetchOrderInput(order_id=new_order_id()))
    assert raised.value.type == "mensageria.unavailable" and not raised.value.non_retryable


async def test_any_other_4xx_parks_the_delivery_with_an_alarm(world, temporal_env):
    await world.account("@x-1", "100")
    for status in (400, 403, 409, 422):
        order_id = new_order_id()
        await world.order(order_id)
        await _fault(world, status)
        _, row = await _execute(world, temporal_env.client, order_id)
        assert row.state == "PARKED", status
        (alarm,) = await stored(world, SisbajudAlarm, order_id=order_id)
        assert alarm.code == "order.fetch-rejected"
    assert await world.transactions() == []


async def test_an_unexecutable_order_is_parked_with_an_alarm(world, temporal_env):
    order_id = new_order_id()
    await world.order(order_id, operation="PENHORA")
    _, row = await _execute(world, temporal_env.client, order_id)
    assert row.state == "PARKED"
    assert [a.code for a in await stored(world, SisbajudAlarm)] == ["order.invalid"]


async def test_an_institution_owned_by_another_executor_gets_no_write(world, temporal_env):
    async with world.sessions() as session:
        session.add(SisbajudInstitution(institution_id=INSTITUTION, owner_subject="other-exec",
                                        created_at=utcnow()))
        await session.commit()
    order_id = new_order_id()
    await world.account("@f-1", "100")
    await world.order(order_id)
    _, row = await _execute(world, temporal_env.client, order_id)
    assert row.state == "FOREIGN_OWNER"
    assert [a.code for a in await stored(world, SisbajudAlarm)] == ["institution.foreign-owner"]
    assert await world.transactions() == [] and final_keys(await world.results()) == []


async def test_an_unconfigured_institution_goes_to_a_human(world, temporal_env):
    order_id = new_order_id()
    await world.account("@u-1", "100")
    await world.order(order_id, institutionId="UNKNOWN-BANK")
    async with world.worker(temporal_env.client):
        await world.hold(temporal_env.client, order_id)
    (decision,) = await stored(world, SisbajudHumanDecision, order_id=order_id)
    assert decision.reason == "institution.unconfigured"
    assert await world.transactions() == []


async def test_a_configured_institution_is_created_with_our_subject_as_owner(world,
                                                                              temporal_env):
    order_id = new_order_id()
    await world.account("@o-1", "100")
    await world.order(order_id, amount="5")
    _, row = await _execute(world, temporal_env.client, order_id)
    (institution,) = await stored(world, SisbajudInstitution)
    assert institution.owner_subject == world.settings.sisbajud.m2m_subject
    assert row.reason_code == "BLOCKED_TOTAL"
