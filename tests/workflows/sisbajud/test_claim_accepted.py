"""Claiming a revision queues its ACCEPTED result in the same store step: one step fewer."""

from __future__ import annotations

import json

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from activities.sisbajud.contracts.names import (
    BEGIN_REVISION_ACTIVITY,
    CHECK_OWNERSHIP_ACTIVITY,
    QUEUE_RESULT_ACTIVITY,
    SETTLE_ACTIVITY,
)
from activities.sisbajud.contracts.orders import order_workflow_id
from activities.sisbajud.models import SisbajudOrder, SisbajudOutbox
from tests.support.sisbajud import new_order_id, stored
from tests.support.sisbajud_states import states


async def _local_activities(client: Client, order_id: str) -> list[str]:
    """The local activity types the order's history recorded, in order."""
    found = []
    async for event in client.get_workflow_handle(
            order_workflow_id(order_id)).fetch_history_events():
        marker = event.marker_recorded_event_attributes
        if event.event_type == EventType.EVENT_TYPE_MARKER_RECORDED \
                and marker.marker_name == "core_local_activity":
            found.append(json.loads(marker.details["data"].payloads[0].data)["activity_type"])
    return found


async def test_the_claim_queues_accepted_and_the_results_still_arrive_once_in_order(
        world, temporal_env):
    client = temporal_env.client
    order_id = new_order_id()
    await world.account("@ca-1", "100")
    await world.order(order_id, amount="40")
    async with world.worker(client):
        await world.execute(client, order_id)
    assert await _local_activities(client, order_id) == [
        BEGIN_REVISION_ACTIVITY, CHECK_OWNERSHIP_ACTIVITY, QUEUE_RESULT_ACTIVITY,
        SETTLE_ACTIVITY]
    results = await world.results(order_id)
    assert states(results) == [("accepted", "ACCEPTED"), ("executing", "EXECUTING"),
                               ("1", "RESOLVED")]
    assert {r["idempotencyKey"]: r["deliveries"] for r in results["results"]} == {
        f"{order_id}:1:accepted": 1, f"{order_id}:1:executing": 1, f"{order_id}:1:1": 1}
    rows = await stored(world, SisbajudOutbox, order_id=order_id)
    assert [(r.idempotency_key, r.state) for r in sorted(rows, key=lambda r: r.id)] == [
        (f"{order_id}:1:accepted", "SENT"), (f"{order_id}:1:executing", "SENT"),
        (f"{order_id}:1:1", "SENT")]
    [order] = await stored(world, SisbajudOrder, order_id=order_id)
    assert (order.state, order.execution_state) == ("RESOLVED", "RESOLVED")
