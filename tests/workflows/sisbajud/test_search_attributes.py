"""Court orders in the Temporal UI: by institution and state; unregistered, they still run."""

from __future__ import annotations

import asyncio
import logging

import pytest

from activities.sisbajud.contracts.orders import OrderRunResult, OrderState, order_workflow_id
from services.simulators.hub.sender import prepare_notice
from services.webhook_gateway.app import WEBHOOK_PATH
from shared.contracts.search_attributes import (
    EXECUTION_STATE,
    INSTITUTION_ID,
    ORDER_ID,
    SUMMARY,
)
from tests.api.sisbajud.conftest import SECRET, world_gateway
from tests.support.sisbajud import INSTITUTION, new_order_id
from tests.support.visibility import bare_namespace, cli_listed, listed

SQLITE_ONLY = pytest.mark.parametrize("backend", ["sqlite"])


async def _ingested(world, client, order_id: str) -> OrderRunResult:
    """Notice through the gateway, the tick's ingest starts the order; its run's result."""
    async with world_gateway(world) as gateway:
        notice = prepare_notice(SECRET, order_id, 1)
        response = await gateway.post(WEBHOOK_PATH, content=notice.body, headers=notice.headers)
    assert response.status_code == 200
    async with world.worker(client):
        assert (await world.tick(client)).stages[0].done == 1
        handle = client.get_workflow_handle(order_workflow_id(order_id),
                                            result_type=OrderRunResult)
        return await asyncio.wait_for(handle.result(), 30)


@SQLITE_ONLY
async def test_orders_are_found_by_institution_and_execution_state(world, temporal_env):
    client = temporal_env.client
    order_id = new_order_id()
    await world.account("@d-1", "100")
    await world.order(order_id, amount="40")
    assert (await _ingested(world, client, order_id)).last_state == OrderState.RESOLVED
    workflow_id = order_workflow_id(order_id)

    query = f"InstitutionId='{INSTITUTION}' AND ExecutionState='RESOLVED'"
    await listed(client, query, {workflow_id})
    await cli_listed(client, query, {workflow_id})
    await listed(client, f"OrderId='{order_id}'", {workflow_id})

    described = await client.get_workflow_handle(workflow_id).describe()
    attributes = described.typed_search_attributes
    assert (attributes.get(ORDER_ID), attributes.get(INSTITUTION_ID),
            attributes.get(EXECUTION_STATE)) == (order_id, INSTITUTION, "RESOLVED")
    assert await described.memo_value(SUMMARY) == (
        f"BLOQUEIO of order {order_id} revision 1 at institution {INSTITUTION}")


@SQLITE_ONLY
async def test_without_registered_attributes_the_order_still_runs(world, temporal_env, caplog):
    bare = await bare_namespace(temporal_env.client)
    order_id = new_order_id()
    await world.account("@d-1", "100")
    await world.order(order_id, amount="40")
    with caplog.at_level(logging.DEBUG, logger="esteira.visibility"):
        result = await _ingested(world, bare, order_id)
    assert result.last_state == OrderState.RESOLVED
    described = await bare.get_workflow_handle(order_workflow_id(order_id)).describe()
    assert described.typed_search_attributes.get(ORDER_ID) is None
    assert (await described.memo_value(SUMMARY)).startswith(f"Court order {order_id}")
    assert "run `esteira migrate` to register them" in caplog.text
