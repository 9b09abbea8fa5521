"""Accounting routes: a write held back by its configuration goes out later, same key."""

from __future__ import annotations

import uuid

import pytest

from activities.sisbajud.contracts.orders import OrderState
from activities.sisbajud.models import (
    SisbajudAlarm,
    SisbajudHumanDecision,
    SisbajudNotice,
    SisbajudOutbox,
    SisbajudRoutingDocument,
    SisbajudWrite,
)
from activities.sisbajud.routing import LEDGER_BINDINGS, ORGANIZATIONS
from activities.sisbajud.store import record_notice
from shared.db.models import utcnow
from tests.support.sisbajud import LEDGER, ORG, new_order_id, stored

pytestmark = pytest.mark.parametrize("backend", ["sqlite"])
ROUTES = {"transactionRouteId": str(uuid.uuid4()), "sourceRouteId": str(uuid.uuid4()),
          "destinationRouteId": str(uuid.uuid4())}


async def _keys(world, order_id) -> list[str]:
    return [k["key"] for k in (await world.midaz.get("/_sim/idempotency")).json()
            if order_id in k["key"]]


async def _document(world, key: str, document: dict) -> None:
    async with world.sessions() as session:
        session.add(SisbajudRoutingDocument(key=key, document=document, updated_at=utcnow()))
        await session.commit()


@pytest.mark.parametrize(("status", "code"), [(422, "0117"), (404, "0105")])
async def test_a_route_refusal_defers_then_the_same_key_goes_through(make_world, temporal_env,
                                                                    status, code):
    world = await make_world(heartbeat_every_seconds=0.3)
    client, order_id = temporal_env.client, new_order_id()
    await world.account("@route", "100")
    await world.order(order_id, amount="40")
    (await world.midaz.post("/_sim/faults", json={
        "route": "transactions.create.block", "kind": "reject", "status": status,
        "code": code})).raise_for_status()
    async with world.worker(client):
        run = await world.execute(client, order_id)
    assert run.last_state == OrderState.RESOLVED
    (write,) = await stored(world, SisbajudWrite, order_id=order_id)
    assert (write.idempotency_key, write.state, write.attempts) == (f"{order_id}:1", "APPLIED",
                                                                    2)
    (tx,) = await world.transactions()
    assert tx["metadata"]["code"] == f"{order_id}:1" and tx["amount"] == "40"
    assert len(await _keys(world, order_id)) == 1
    alarms = [a.code for a in await stored(world, SisbajudAlarm, order_id=order_id)]
    assert alarms == ["ledger.write-deferred"]


async def test_unresolvable_routes_send_nothing_until_the_config_and_a_redelivery(
        make_world, temporal_env):
    # A minute between tries: only the redelivered notice can make this write go now.
    world = await make_world(heartbeat_every_seconds=60, systemplane_enabled=True)
    client, order_id = temporal_env.client, new_order_id()
    await world.account("@routed", "100")
    await world.order(order_id, amount="25")
    await _document(world, ORGANIZATIONS, {"organizations": [{"organizationId": ORG}]})
    async with world.worker(client):
        handle = await world.hold(client, order_id, "DEFERRED")
        assert await world.transactions() == [] and await _keys(world, order_id) == []
        (write,) = await stored(world, SisbajudWrite, order_id=order_id)
        assert (write.state, write.last_code) == ("DEFERRED", "routing.document-missing")
        await _document(world, LEDGER_BINDINGS, {"bindings": [
            {"organizationId": ORG, "ledgerId": LEDGER, "block": ROUTES}]})
        # The Hub delivers the notice again; the tick hands it to the waiting order.
        async with world.sessions() as session:
            await record_notice(session, webhook_id=f"again-{order_id}", order_id=order_id,
                                revision=1, parked_reason=None, body=b"{}", skew_s=0,
                                skewed=False, secret_index=0)
        await world.tick(client)
        run = await handle.result()
    assert run.last_state == OrderState.RESOLVED
    (tx,) = await world.transactions()
    assert tx["routeId"] == ROUTES["transactionRouteId"]
    legs = {op["direction"]: op["routeId"] for op in tx["operations"]}
    assert legs == {"debit": ROUTES["sourceRouteId"], "credit": ROUTES["destinationRouteId"]}
    assert len(await _keys(world, order_id)) == 1
    (notice,) = await stored(world, SisbajudNotice, order_id=order_id)
    assert notice.state == "INGESTED"


async def test_still_deferred_at_the_deadline_margin_goes_to_a_person(make_world,
                                                                     temporal_env):
    world = await make_world(heartbeat_every_seconds=0.3, systemplane_enabled=True,
                             response_deadline_margin_seconds=3600)
    client, order_id = temporal_env.client, new_order_id()
    await world.account("@never", "100")
    deadline = utcnow().isoformat()
    await world.order(order_id, amount="5", deadline=deadline)
    await _document(world, ORGANIZATIONS, {"organizations": [{"organizationId": ORG}]})
    async with world.worker(client):
        await world.hold(client, order_id)
    (decision,) = await stored(world, SisbajudHumanDecision, order_id=order_id)
    assert decision.reason == "routing.deferred-at-deadline"
    assert await world.transactions() == []
    # Held by the deferral, then by a person: each hold says AWAITING_RECONCILIATION once.
    queued = sorted(await stored(world, SisbajudOutbox, order_id=order_id), key=lambda r: r.id)
    assert [(r.idempotency_key.rsplit(":", 1)[-1], r.payload["executionState"])
            for r in queued] == [("accepted", "ACCEPTED"), ("executing", "EXECUTING"),
                                 ("awaiting-deferral", "AWAITING_RECONCILIATION"),
                                 ("awaiting-person", "AWAITING_RECONCILIATION")]
